"""Per-op overhead of rulebridge against hand-written NumPy and autograd, measured in one run.

A chain of N alternating sin/tanh ops on a 10-element float64 array, differentiated end to end
(trace + reverse sweep). Prints microseconds per op (medians) and the ratios, including "autograd
rules alone" (benchmarks/rules_floor.py: the chain's NumPy forwards and autograd's VJPs, made and
called, with no tape or boxes: the floor under any engine using autograd's rules, so a ratio to
autograd below its "rules alone / autograd" needs other rules), the memory a tape
keeps per op beyond its residual arrays, and the time to the first gradient of a 3,000-op chain
in a fresh process against jax.jit(jax.grad)'s compile time for the same chain.

    python -m benchmarks.overhead                      # N = 1e3, 1e4, 1e5; plot; jax compile
    python -m benchmarks.overhead --sizes 1e3 1e4 1e5 1e6 --no-jax-compile
    python -m benchmarks.overhead --json overhead.json

Targets: at N=1e4, rulebridge <= 2.0x hand-written and <= 0.3x autograd; us/op at 1e6
within 1.3x of 1e3; <= 300 bytes per op; first gradient <= 1/100 of jax.jit's compile time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tracemalloc

import numpy as np

import rulebridge as rb

from benchmarks.rules_floor import RULES_ALONE, RulesFloor, available as rules_floor_available
from benchmarks.timing import (add_clock_option, clock_name, interleaved_medians, jax_available,
                               now, rulebridge_sources, table, use_clock, write_json)

X = np.linspace(0.1, 1.0, 10)


def chain(xp, n: int):
    """sum(... tanh(sin(x)) ...) with n elementwise ops, written once for any NumPy namespace."""
    sin, tanh = xp.sin, xp.tanh

    def f(x):
        for i in range(n):
            x = sin(x) if i % 2 == 0 else tanh(x)
        return xp.sum(x)

    return f


def numpy_forward(x, n: int):
    for i in range(n):
        x = np.sin(x) if i % 2 == 0 else np.tanh(x)
    return np.sum(x)


def hand_written(x, n: int):
    """The floor: the forward keeps what the backward needs, the backward multiplies through."""
    saved = []
    for i in range(n):
        if i % 2 == 0:
            saved.append(x)  # d sin(x) = cos(x)
            x = np.sin(x)
        else:
            x = np.tanh(x)
            saved.append(x)  # d tanh(x) = 1 - tanh(x)**2
    g = np.ones_like(x)
    for i in range(n - 1, -1, -1):
        if i % 2 == 0:
            g = g * np.cos(saved[i])
        else:
            y = saved[i]
            g = g * (1.0 - y * y)
    return g


def per_op_table(sizes, sources, repeats, autograd_max):
    import autograd
    import autograd.numpy as anp

    results = []
    for n in sizes:
        reps = repeats if n <= 10_000 else max(3, repeats // 2)
        runs = {"numpy forward": lambda: numpy_forward(X, n),
                "hand-written": lambda: hand_written(X, n)}
        if n <= autograd_max:
            runs["autograd"] = _called(autograd.grad(chain(anp, n)))
        for source in sources:
            runs[f"rulebridge[{source}]"] = _called(rb.grad(chain(np, n), source=source))
        if rules_floor_available():
            runs[RULES_ALONE] = RulesFloor(chain(np, n), X).run
        row = {"N": n}
        # Round-robin samples: a noisy phase of the machine slows every contestant alike.
        row.update((name, seconds / n * 1e6)
                   for name, seconds in interleaved_medians(runs, reps).items())
        results.append(row)
        print(f"  N={n:>9,}: " + ", ".join(f"{k} {v:.2f}" for k, v in row.items() if k != "N"),
              flush=True)
    return results


def _called(gradient):
    return lambda: gradient(X)


def bytes_per_op(source: str | None, n: int = 20_000) -> float:
    """Memory a tape holds per op, minus the arrays its ops keep (outputs and residuals)."""
    f = chain(np, n)
    rb.trace(chain(np, 10), X.copy(), source=source)  # imports and rule lookups happen once
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    _, tape = rb.trace(f, X.copy(), source=source)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    arrays = {}
    for op in tape.ops:
        _collect_arrays((op.args, op.residuals), arrays)
    array_bytes = sum(sys.getsizeof(a) for a in arrays.values())
    return (held - array_bytes) / len(tape.ops)


def _collect_arrays(obj, found, depth=0):
    if isinstance(obj, np.ndarray):
        found[id(obj)] = obj
        if obj.base is not None:
            _collect_arrays(obj.base, found, depth + 1)
    elif isinstance(obj, (tuple, list)) and depth < 4:
        for item in obj:
            _collect_arrays(item, found, depth + 1)
    elif isinstance(obj, dict) and depth < 4:
        for item in obj.values():
            _collect_arrays(item, found, depth + 1)


FIRST_GRADIENT = """
import time, numpy as np, rulebridge as rb
n, source = {n}, {source!r}
def f(x):
    for i in range(n):
        x = np.sin(x) if i % 2 == 0 else np.tanh(x)
    return np.sum(x)
x = np.linspace(0.1, 1.0, 10)
start = time.{clock}()
rb.grad(f, source=source)(x)
print(time.{clock}() - start)
"""


def first_gradient_seconds(source: str, n: int = 3000, repeats: int = 3) -> float:
    """Fresh process: import rulebridge, then time the first gradient (adapter import, rule
    lookups, tracing, sweep all included)."""
    code = FIRST_GRADIENT.format(n=n, source=source, clock=clock_name())
    times = [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                  text=True).stdout) for _ in range(repeats)]
    return statistics.median(times)


def jax_compile_seconds(n: int = 3000) -> float:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    g = jax.jit(jax.grad(chain(jnp, n)))
    start = now()
    g.lower(jnp.asarray(X)).compile()
    return now() - start


def plot(results, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for key in results[0]:
        if key == "N":
            continue
        points = [(r["N"], r[key]) for r in results if key in r]
        ax.plot(*zip(*points), marker="o", label=key)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("ops in the chain (N)")
    ax.set_ylabel("microseconds per op (gradient)")
    ax.set_title("sin/tanh chain on 10 float64 elements")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", type=float, default=[1e3, 1e4, 1e5])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--autograd-max", type=float, default=1e5,
                        help="largest N for autograd (about 60 us/op: 1e6 takes minutes)")
    parser.add_argument("--no-jax-compile", action="store_true",
                        help="skip timing jax.jit(jax.grad)'s compile of the 3,000-op chain (~20 s)")
    parser.add_argument("--sources", nargs="+", metavar="NAME",
                        help="rulebridge sources to measure (default: every installed adapter)")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--plot", default=os.path.join(os.path.dirname(__file__), "overhead.png"))
    parser.add_argument("--json", help="also write the figures to this JSON file")
    add_clock_option(parser)
    args = parser.parse_args(argv)
    use_clock(args.clock)

    sources = args.sources or rulebridge_sources()
    sizes = [int(n) for n in args.sizes]
    print(f"numpy {np.__version__}; rulebridge sources: {', '.join(sources) or 'none'}; "
          f"medians of {args.repeats} samples of {args.clock} time")
    results = per_op_table(sizes, sources, args.repeats, args.autograd_max)
    rb_keys = [f"rulebridge[{s}]" for s in sources]
    floor_keys = [RULES_ALONE] if RULES_ALONE in results[0] else []
    header = ["N", "numpy forward", "hand-written fwd+bwd", "autograd"] + floor_keys + rb_keys
    header += [f"{k} / hand-written" for k in rb_keys]
    header += [f"{k} / autograd" for k in floor_keys + rb_keys]
    rows = []
    for r in results:
        ag = r.get("autograd")
        row = [f"{r['N']:,}", f"{r['numpy forward']:.2f}", f"{r['hand-written']:.2f}",
               f"{ag:.1f}" if ag else "-"]
        row += [f"{r[k]:.2f}" for k in floor_keys + rb_keys]
        row += [f"{r[k] / r['hand-written']:.2f}x" for k in rb_keys]
        row += [f"{r[k] / ag:.2f}x" if ag else "-" for k in floor_keys + rb_keys]
        rows.append(row)
    print("\nMicroseconds per op (gradient of the whole chain, medians):")
    print(table(header, rows))
    summary = {"per_op_us": results}
    if len(results) > 1:
        for k in rb_keys:
            growth = results[-1][k] / results[0][k]
            print(f"{k}: us/op at N={results[-1]['N']:,} is {growth:.2f}x that at "
                  f"N={results[0]['N']:,}")
            summary[f"{k} growth"] = growth

    print("\nMemory a tape keeps per op beyond its residual arrays (tracemalloc, 20,000 ops):")
    for source in sources:
        b = bytes_per_op(source)
        summary[f"bytes_per_op[{source}]"] = b
        print(f"  rulebridge[{source}]: {b:.0f} bytes/op")

    print("\nTime to the first gradient of a 3,000-op chain (fresh process, median of 3):")
    for source in sources:
        t = first_gradient_seconds(source)
        summary[f"first_gradient_s[{source}]"] = t
        print(f"  rulebridge[{source}]: {t * 1e3:.0f} ms")
    if jax_available() and not args.no_jax_compile:
        t = jax_compile_seconds()
        summary["jax_jit_compile_s"] = t
        print(f"  jax.jit(jax.grad) compile: {t:.1f} s")
        for source in sources:
            print(f"  rulebridge[{source}] first gradient / jax compile: "
                  f"1/{t / summary[f'first_gradient_s[{source}]']:.0f}")

    if not args.no_plot:
        plot(results, args.plot)
    if args.json:
        write_json(args.json, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a Hessian-vector product costs, against a gradient of the same program, in one run.

The program is issue 23's: the loss of a two-layer network with 200 parameters (one flat vector,
sliced and reshaped inside the loss; 8 inputs, 20 tanh units, one output; 32 samples), written
once for a NumPy-like namespace `xp`. Rows, all interleaved (benchmarks/timing.py), medians:

- `rulebridge.grad(f)` per source, the unit of the ratios;
- `rulebridge.hvp(f)` per source (reverse over reverse: forward over reverse costs no less
  here, docs/performance.md);
- both ways spelled out: `rulebridge.jvp(rulebridge.grad(f), (x,), (v,))` (forward over
  reverse) and `rulebridge.grad(lambda x: <rulebridge.grad(f)(x), v>)` (reverse over reverse);
- JAX on the same program in jax.numpy: `jax.grad` and its hvp, `jax.jvp(jax.grad(f))`, eager
  and jitted (after compilation).

Target (issue 23): hvp at most 4x its gradient; JAX's own is about 2-3x.

`--instructions` counts instead of timing, with valgrind (benchmarks/instructions.py's way):
per source, `rulebridge.grad(f)` and `rulebridge.hvp(f)` each run in two processes, both making
`WARM` warm-up calls (first-use checks, caches), one of them `--calls` more; the difference of
the two totals over the calls is what one call costs, and the ratio hvp / grad is the figure the
target is about. Needs valgrind on PATH.

    python -m benchmarks.hvp [--repeats 7] [--clock cpu|wall]
    python -m benchmarks.hvp --instructions [--calls 100] [--sources autograd jax None]
"""

from __future__ import annotations

import argparse

import numpy as np

import rulebridge as rb

from benchmarks.timing import (add_clock_option, interleaved_medians, jax_available, table,
                               use_clock)

N_IN, N_HIDDEN, N_SAMPLES = 8, 20, 32
N_PARAMS = N_HIDDEN * N_IN + N_HIDDEN + N_HIDDEN  # 200
rng = np.random.default_rng(23)
X = rng.normal(size=(N_SAMPLES, N_IN))
Y = rng.normal(size=N_SAMPLES)
P0 = 0.3 * rng.normal(size=N_PARAMS)
V = rng.normal(size=N_PARAMS)


def loss(xp, p):
    w1 = p[:N_HIDDEN * N_IN].reshape(N_HIDDEN, N_IN)
    b1 = p[N_HIDDEN * N_IN:N_HIDDEN * N_IN + N_HIDDEN]
    w2 = p[N_HIDDEN * N_IN + N_HIDDEN:]
    h = xp.tanh(X @ w1.T + b1)
    return xp.mean((h @ w2 - Y) ** 2)


def f(p):
    return loss(np, p)


def reverse_over_reverse(source):
    g = rb.grad(f, source=source)
    return rb.grad(lambda p: np.sum(g(p) * V), source=source)


def forward_over_reverse(source):
    g = rb.grad(f, source=source)
    return lambda p: rb.jvp(g, (p,), (V,), source=source)[1]


def contestants(sources: list[str]) -> dict:
    runs = {}
    for source in sources:
        label = source or "None"
        grad, hvp = rb.grad(f, source=source), rb.hvp(f, source=source)
        ror, forr = reverse_over_reverse(source), forward_over_reverse(source)
        runs[f"rulebridge grad [{label}]"] = lambda grad=grad: grad(P0)
        runs[f"rulebridge hvp [{label}]"] = lambda hvp=hvp: hvp(P0, V)
        runs[f"forward over reverse [{label}]"] = lambda forr=forr: forr(P0)
        runs[f"reverse over reverse [{label}]"] = lambda ror=ror: ror(P0)
    if jax_available():
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)

        def jf(p):
            return loss(jnp, p)

        jgrad = jax.grad(jf)

        def jhvp(p):
            return jax.jvp(jgrad, (p,), (V,))[1]

        jit_grad, jit_hvp = jax.jit(jgrad), jax.jit(jhvp)
        runs["jax grad"] = lambda: jgrad(P0).block_until_ready()
        runs["jax hvp (jvp of grad)"] = lambda: jhvp(P0).block_until_ready()
        runs["jax.jit grad"] = lambda: jit_grad(P0).block_until_ready()
        runs["jax.jit hvp"] = lambda: jit_hvp(P0).block_until_ready()
    return runs


def check(sources: list[str]) -> None:
    """Every contestant computes the same Hessian-vector product (finite differences of the
    gradient as the reference), so the timings compare equal work."""
    g = rb.grad(f, source="autograd")
    h = 1e-5
    want = (g(P0 + h * V) - g(P0 - h * V)) / (2 * h)
    for source in sources:
        for got in (rb.hvp(f, source=source)(P0, V), forward_over_reverse(source)(P0),
                    reverse_over_reverse(source)(P0)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


WARM = 3  # calls before the counted ones: the first traces and checks, the next find caches
CALLS = 100  # (20 left the start-up's variation at about 2% of a gradient)


def run_child(kind: str, source: str | None, calls: int) -> None:
    """The body a valgrind child runs: `WARM` calls of `kind` ("grad" or "hvp"), then `calls`."""
    run = ((lambda g=rb.grad(f, source=source): g(P0)) if kind == "grad" else
           (lambda h=rb.hvp(f, source=source): h(P0, V)))
    for _ in range(WARM + calls):
        run()


def instructions_per_call(kind: str, source: str | None, calls: int) -> float:
    from benchmarks.instructions import count_instructions

    def count(n: int) -> int:
        return count_instructions(["benchmarks.hvp", "--child", kind, "--sources", str(source),
                                   "--calls", str(n)])

    return (count(calls) - count(0)) / calls


def count_main(sources: list[str | None], calls: int) -> None:
    import shutil
    import sys

    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH (Debian: apt-get install valgrind)")
    rows = []
    for source in sources:
        grad_, hvp_ = (instructions_per_call(kind, source, calls) for kind in ("grad", "hvp"))
        rows.append([str(source), f"{grad_ / 1e6:.3f}M", f"{hvp_ / 1e6:.3f}M",
                     f"{hvp_ / grad_:.2f}x"])
        print(f"  {source}: grad {grad_:,.0f}, hvp {hvp_:,.0f} instructions per call",
              flush=True)
    print(f"Instructions per call (valgrind, {calls} calls less none, one process each) of the "
          f"{N_PARAMS}-parameter two-layer network loss")
    print(table(["source", "grad", "hvp", "hvp / grad"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sources", nargs="*", default=["autograd", "jax", None])
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions with valgrind instead of timing")
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    add_clock_option(parser)
    args = parser.parse_args()
    use_clock(args.clock)
    sources = [None if s in (None, "None") else s for s in args.sources]
    if args.child:
        run_child(args.child, sources[0], args.calls)
        return
    if args.instructions:
        count_main(sources, args.calls)
        return
    check(sources)
    seconds = interleaved_medians(contestants(sources), args.repeats)
    rows = []
    for name, s in seconds.items():
        unit = name.split(" [")[-1].rstrip("]") if "[" in name else None
        base = (seconds.get(f"rulebridge grad [{unit}]") if unit else
                seconds.get("jax.jit grad" if "jit" in name else "jax grad"))
        rows.append([name, f"{s * 1e3:.3f}", f"{s / base:.2f}x" if base else ""])
    print(f"Hessian-vector product of a {N_PARAMS}-parameter two-layer network loss, "
          f"{args.repeats} interleaved samples, medians")
    print(table(["contestant", "ms per call", "vs the gradient of its row's kind"], rows))


if __name__ == "__main__":
    main()

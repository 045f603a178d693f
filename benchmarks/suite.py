"""Mooncake.jl's inter-framework benchmark suite, written once in NumPy and run by every framework.

Each row is the median gradient time divided by the median primal time (NumPy's own forward of
the same function), for rulebridge (one column per installed source), autograd (where the code
is expressible in it), jax.grad without jit, and jax.jit(jax.grad) after compilation, whose
compile time is reported separately, and "autograd rules alone" (benchmarks/rules_floor.py): the
program's ops traced once, then only NumPy's forwards and autograd's VJPs, made and called for
every traced argument, with no tape, boxes or accumulation. That column is the floor under any
engine using autograd's rules (rulebridge[autograd] included); a target below it needs other
rules. On a row that writes into arrays it leaves out the engine's write ops (a lower bound; the
output says which). All columns come from one run on one machine, and a row's
primal and gradients are sampled round-robin, so a noisy phase slows them all alike.

    python -m benchmarks.suite                       # every row
    python -m benchmarks.suite --only kron_sum gp_lml --json suite.json
    python -m benchmarks.suite --no-jax              # rulebridge and autograd only
    OPENBLAS_NUM_THREADS=2 python -m benchmarks.suite  # BLAS threads other than the default 1

Targets: rulebridge below autograd on every row; <= 3x primal on kron_sum,
kron_view_sum, simple_mlp and gp_lml; <= 25x primal on the element-by-element loop rows.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Callable

# BLAS gets one thread unless the caller chose otherwise (before NumPy loads it). OpenBLAS's idle
# workers spin, and process time counts the spinning: on a shared 2-core machine gp_lml's primal
# read 14 ms of CPU instead of 1.2 ms, and every ratio measured that noise, not the frameworks.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
if __name__ == "__main__":
    for _variable in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

import rulebridge as rb  # noqa: E402

from benchmarks.rules_floor import (RULES_ALONE, RulesFloor,  # noqa: E402
                                    available as rules_floor_available)
from benchmarks.timing import (add_clock_option, interleaved_medians,  # noqa: E402
                               jax_available, now, rulebridge_sources, table, use_clock,
                               write_json)


# -- the programs, each written once against a NumPy-like namespace `xp` ----------------------

def sum_1000(xp, x):
    return xp.sum(x)


def _sum_1000(xp, x):
    s = 0.0
    for n in range(x.shape[0]):
        s = s + x[n]
    return s


def sum_sin_1000(xp, x):
    return xp.sum(xp.sin(x))


def _sum_sin_1000(xp, x):
    s = 0.0
    for n in range(x.shape[0]):
        s = s + xp.sin(x[n])
    return s


def kron_sum(xp, x, y):
    return xp.sum(xp.kron(x, y))


def kron_view_sum(xp, x, y):
    return xp.sum(xp.kron(x[:20, :20], xp.triu(y)))


def map_sin_cos_exp(xp, x):
    return xp.sum(xp.sin(xp.cos(xp.exp(x))))


def naive_map_sin_cos_exp(xp, x):
    """The same as map_sin_cos_exp, written as a loop into a preallocated array."""
    out = xp.zeros_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            value = xp.sin(xp.cos(xp.exp(x[i, j])))
            if xp is np:
                out[i, j] = value
            else:  # jax arrays are immutable: the functional spelling of the same write
                out = out.at[i, j].set(value)
    return xp.sum(out)


def simple_mlp(xp, W2, W1, Y, X):
    h = W1 @ X
    return xp.sum((Y - W2 @ (h * (h >= 0))) ** 2)


def gp_lml(xp, x, y, lengthscale):
    """Log marginal likelihood of a zero-mean GP, squared-exponential kernel, noise variance 1."""
    n = x.shape[0]
    d = (x[:, None] - x[None, :]) / lengthscale
    K = xp.exp(-0.5 * d * d) + xp.eye(n)
    L = xp.linalg.cholesky(K)
    alpha = xp.linalg.solve(L, y)
    return -0.5 * xp.sum(alpha * alpha) - xp.sum(xp.log(xp.diag(L))) \
        - 0.5 * n * np.log(2 * np.pi)


@dataclass
class Case:
    name: str
    function: Callable
    make_args: Callable[[np.random.Generator], tuple]
    autograd: bool = True  # expressible in autograd (no item assignment)
    mutates: bool = False  # needs rulebridge's mutation support (rulebridge/writes/write.py)


CASES = [
    Case("sum_1000", sum_1000, lambda r: (r.standard_normal(1000),)),
    Case("_sum_1000", _sum_1000, lambda r: (r.standard_normal(1000),)),
    Case("sum_sin_1000", sum_sin_1000, lambda r: (r.standard_normal(1000),)),
    Case("_sum_sin_1000", _sum_sin_1000, lambda r: (r.standard_normal(1000),)),
    Case("kron_sum", kron_sum, lambda r: (r.standard_normal((20, 20)), r.standard_normal((40, 40)))),
    Case("kron_view_sum", kron_view_sum,
         lambda r: (r.standard_normal((40, 30)), r.standard_normal((40, 40)))),
    Case("map_sin_cos_exp", map_sin_cos_exp, lambda r: (r.standard_normal((10, 10)),)),
    Case("naive_map_sin_cos_exp", naive_map_sin_cos_exp, lambda r: (r.standard_normal((10, 10)),),
         autograd=False, mutates=True),
    Case("simple_mlp", simple_mlp,
         lambda r: (r.standard_normal((128, 256)) / 16, r.standard_normal((256, 128)) / 11,
                    r.standard_normal((128, 70)), r.standard_normal((128, 70)))),
    Case("gp_lml", gp_lml, lambda r: (0.2 * np.arange(128.0), r.standard_normal(128), 1.3)),
]


# -- the frameworks -------------------------------------------------------------------------

def rulebridge_gradient(case: Case, args: tuple, source: str):
    argnums = tuple(range(len(args)))
    return rb.grad(lambda *a: case.function(np, *a), argnums, source=source)


def autograd_gradient(case: Case, args: tuple):
    import autograd
    import autograd.numpy as anp

    g = autograd.grad(lambda a: case.function(anp, *a))
    return lambda *a: g(a)


def jax_gradient(case: Case, args: tuple):
    import jax
    import jax.numpy as jnp

    return jax.grad(lambda *a: case.function(jnp, *a), tuple(range(len(args))))


def run_case(case: Case, sources, use_jax: bool, repeats: int) -> dict:
    """Check every framework's gradient against the first one's, then time the primal and every
    gradient round-robin, so that a noisy phase of the machine slows them all alike."""
    args = case.make_args(np.random.default_rng(0))
    row: dict = {}
    runs: dict[str, Callable[[], object]] = {"primal": lambda: case.function(np, *args)}
    reference = None

    def contestant(key, g, call_args):
        nonlocal reference
        try:
            value = g(*call_args)
        except (rb.MutationError, rb.NoRuleError, rb.TracingError) as exc:
            if not (case.mutates and key.startswith("rulebridge")):
                raise
            row[key] = "not supported yet"
            print(f"    {key}: not supported yet ({str(exc).splitlines()[0][:80]})")
            return
        if reference is None:
            reference = [np.asarray(v) for v in value]
        else:
            for r, v in zip(reference, value):
                np.testing.assert_allclose(np.asarray(v), r, rtol=1e-6, atol=1e-9,
                                           err_msg=f"{case.name}: {key} disagrees")
        runs[key] = lambda: g(*call_args)

    if use_jax:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        jargs = tuple(jnp.asarray(a) for a in args)
        g = jax_gradient(case, args)
        contestant("jax.grad", g, jargs)
        jitted = jax.jit(g)
        start = now()
        compiled = jitted.lower(*jargs).compile()
        row["jax.jit compile_s"] = now() - start
        contestant("jax.jit(grad)", lambda *a: jax.block_until_ready(compiled(*a)), jargs)
    if case.autograd:
        contestant("autograd", autograd_gradient(case, args), args)
    for source in sources:
        contestant(f"rulebridge[{source}]", rulebridge_gradient(case, args, source), args)
    if rules_floor_available():
        floor = RulesFloor(lambda *a: case.function(np, *a), *args)
        row[f"{RULES_ALONE} left out"] = sorted(set(floor.left_out))
        if floor.left_out:
            print(f"    {RULES_ALONE}: {floor.describe()}")
        elif reference is not None:  # the floor's steps are the rules the gradient needs
            for r, v in zip(reference, floor.gradient()):
                np.testing.assert_allclose(v, r, rtol=1e-6, atol=1e-9,
                                           err_msg=f"{case.name}: {RULES_ALONE} disagrees")
        runs[RULES_ALONE] = floor.run
    seconds = interleaved_medians(runs, repeats)
    row["primal_s"] = seconds.pop("primal")
    row.update((key, value / row["primal_s"]) for key, value in seconds.items())
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="ROW", choices=[c.name for c in CASES],
                        help="run these rows only")
    parser.add_argument("--no-jax", action="store_true", help="leave out the jax columns")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    add_clock_option(parser)
    args = parser.parse_args(argv)
    use_clock(args.clock)

    sources = rulebridge_sources()
    use_jax = jax_available() and not args.no_jax
    cases = [c for c in CASES if not args.only or c.name in args.only]
    blas = ", ".join(f"{v}={os.environ[v]}" for v in BLAS_THREAD_VARIABLES if v in os.environ)
    print(f"numpy {np.__version__} ({blas or 'BLAS threads: default'}); rulebridge sources: "
          f"{', '.join(sources) or 'none'}; gradient time / primal time, medians of "
          f"{args.repeats} samples of {args.clock} time, sampled round-robin")
    results = {}
    for case in cases:
        print(f"  {case.name} ...", flush=True)
        results[case.name] = run_case(case, sources, use_jax, args.repeats)

    columns = [RULES_ALONE] if rules_floor_available() else []
    columns += [f"rulebridge[{s}]" for s in sources] + ["autograd"]
    if use_jax:
        columns += ["jax.grad", "jax.jit(grad)"]
    rows = []
    for name, row in results.items():
        cells = [name, f"{row['primal_s'] * 1e6:.1f}"]
        for c in columns:
            v = row.get(c, "-")
            cells.append(f"{v:.1f}x" if isinstance(v, float) else v)
            if c == RULES_ALONE and row.get(f"{RULES_ALONE} left out"):
                cells[-1] += " (lower bound)"
        if use_jax:
            cells.append(f"{row['jax.jit compile_s']:.2f}")
        rows.append(cells)
    header = ["row", "primal (us)"] + columns + (["jax.jit compile (s)"] if use_jax else [])
    print("\nGradient time / primal time (medians, one run):")
    print(table(header, rows))
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

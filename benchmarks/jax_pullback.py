"""What a JAX-sourced op costs, every figure measured in this one run, medians.

1. Per op on a 10-element array (a chain of sin/tanh, gradient): rulebridge with source="jax"
   against the floor it is built on, NumPy's forward plus the same cached jitted pullback called
   directly, with NumPy arrays in and out as a NumPy program needs (target: at most 1.5x), and
   passing JAX arrays from call to call (no NumPy conversions at all); and against jax.vjp per
   op (target: at least 20x cheaper).
2. One elementwise pullback (tanh) on 1e6 elements: the jax-sourced rule against hand-written
   NumPy and autograd's rule.

    python -m benchmarks.jax_pullback [--ops 200] [--repeats 7]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np

import rulebridge as rb
from rulebridge_jax.pullback import JitPullbacks
from rulebridge_jax.arguments import LEAF

from benchmarks.timing import median_seconds, table

SMALL = np.linspace(0.1, 1.0, 10)
FUNCTIONS = (np.sin, np.tanh)
JAX_FUNCTIONS = (jnp.sin, jnp.tanh)


def chain(n: int):
    def f(x):
        for i in range(n):
            x = FUNCTIONS[i % 2](x)
        return np.sum(x)

    return f


JAX_FLOOR = "NumPy forward + cached jitted pullback, JAX arrays between calls"
NUMPY_FLOOR = "NumPy forward + cached jitted pullback, NumPy arrays in and out"


def jitted_pullbacks():
    """The compiled pullbacks the adapter builds for sin and tanh of one array, called directly."""
    return [JitPullbacks(f, f.__name__)._jit((LEAF,), (), (0,), None) for f in JAX_FUNCTIONS]


def reverse_chain(n: int, step):
    """NumPy's forward of the chain, then `g = step(i, xs, g)` for every op in reverse: the
    reverse pass written by hand around one pullback per op."""
    def run():
        xs = [SMALL]
        for i in range(n):
            xs.append(FUNCTIONS[i % 2](xs[-1]))
        g = np.ones_like(SMALL)
        for i in reversed(range(n)):
            g = step(i, xs, g)
        return g

    return run


def jitted_step(pullbacks, to_numpy: bool):
    def step(i, xs, g):
        with jax.enable_x64(True):
            (g,) = pullbacks[i % 2]((xs[i],), g)
        return np.asarray(g) if to_numpy else g

    return step


def vjp_step(i, xs, g):
    with jax.enable_x64(True):
        _, vjp = jax.vjp(JAX_FUNCTIONS[i % 2], xs[i])
        (g,) = vjp(g)
    return np.asarray(g)


def hand_written_step(i, xs, g):
    return g * np.cos(xs[i]) if i % 2 == 0 else g * (1 - xs[i + 1] ** 2)


def per_op(n: int, repeats: int) -> dict[str, float]:
    pullbacks = jitted_pullbacks()
    reference = rb.grad(chain(n), source="jax")(SMALL)
    np.testing.assert_allclose(reverse_chain(n, jitted_step(pullbacks, True))(), reference,
                               rtol=1e-12)
    runs = {
        "rulebridge, source=jax": lambda: rb.grad(chain(n), source="jax")(SMALL),
        JAX_FLOOR: reverse_chain(n, jitted_step(pullbacks, False)),
        NUMPY_FLOOR: reverse_chain(n, jitted_step(pullbacks, True)),
        "rulebridge, source=autograd": lambda: rb.grad(chain(n), source="autograd")(SMALL),
        "hand-written NumPy fwd+bwd": reverse_chain(n, hand_written_step),
    }
    us = {name: median_seconds(run, repeats) / n * 1e6 for name, run in runs.items()}
    few = max(n // 10, 5)  # jax.vjp per op costs about a millisecond: fewer ops
    vjp_seconds = median_seconds(reverse_chain(few, vjp_step), 3)
    us["NumPy forward + jax.vjp per op"] = vjp_seconds / few * 1e6
    return us


def big_pullback(repeats: int) -> dict[str, float]:
    x = np.random.default_rng(0).uniform(-2, 2, size=1_000_000)
    g = np.random.default_rng(1).normal(size=x.shape)
    y = np.tanh(x)
    ms = {}
    for source in ("jax", "autograd"):
        rule = rb.lookup(np.tanh, rb.signature_of((x,)), source=source)
        _, residuals = rule.forward((x,), {})
        (ct,) = rule.pullback(residuals, g, (0,))
        np.testing.assert_allclose(ct, g * (1 - y * y), rtol=1e-10, atol=1e-14)
        ms[f"{source}-sourced rule"] = median_seconds(
            lambda: rule.pullback(residuals, g, (0,)), repeats) * 1e3
    ms["hand-written NumPy g * (1 - y*y)"] = median_seconds(lambda: g * (1 - y * y), repeats) * 1e3
    return ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    options = parser.parse_args()

    us = per_op(options.ops, options.repeats)
    print(f"Per op, 10-element float64 array, chain of {options.ops} sin/tanh, gradient "
          "(median microseconds):")
    print(table(["", "us/op"], [[name, f"{t:.1f}"] for name, t in us.items()]))
    ours = us["rulebridge, source=jax"]
    print(f"\nrulebridge(jax) / ({NUMPY_FLOOR}): {ours / us[NUMPY_FLOOR]:.2f}x (target <= 1.5x)")
    print(f"rulebridge(jax) / ({JAX_FLOOR}): {ours / us[JAX_FLOOR]:.2f}x")
    print(f"(NumPy forward + jax.vjp per op) / rulebridge(jax): "
          f"{us['NumPy forward + jax.vjp per op'] / ours:.1f}x (target >= 20x)")

    ms = big_pullback(options.repeats)
    print("\nOne tanh pullback on 1e6 float64 elements (median milliseconds):")
    hand = ms["hand-written NumPy g * (1 - y*y)"]
    print(table(["", "ms", "vs hand-written"],
                [[name, f"{t:.2f}", f"{t / hand:.2f}x"] for name, t in ms.items()]))


if __name__ == "__main__":
    main()

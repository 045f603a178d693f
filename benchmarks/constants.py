"""What a float constant that changes every iteration costs (issue 22, section 3).

A verdict holds only where it was checked: an imported rule's verification is kept per value of
each untraced float argument (rulebridge/checking/constants.py), unless the argument is declared
continuous; a NumPy function's rule is verified for every value of an operand it computes with
(`x ** t`). Three loops of `ITERATIONS` gradients, each at a new value of the constant, timed
per gradient, with the number of finite-difference checks they ran:

- `x ** t`, t a new Python float each iteration: checked 0 times (the key is verified by the
  shipped matrix; t is an operand, continuous in the rule);
- an imported `sin(v) * a`, a a new float each iteration, as imported by default: checked at
  each new value (the price of right-or-raise for an equivalent of unknown meaning);
- the same import with `continuous=("a",)`: checked once.

    python -m benchmarks.constants [--iterations N] [--source autograd]

Measured (2 cores shared with two test runs, so the times are high; the counts are exact):
x ** t 1,304 us per gradient and 0 checks over 1,000 values; the JAX import checked at each new
value 22,193 us and 1,000 checks; with continuous=("a",) 1,736 us and 0 checks (the one check
ran at the warm-up call). With autograd (300 values): 1,001 us / 0, 24,307 us / 300, 2,136 us /
0. So a check costs about 20 ms, paid once per distinct value of an undeclared constant.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

import rulebridge as rb
import rulebridge.checking.firstuse as firstuse

import_rule_module = sys.modules["rulebridge.import_rule"]  # (rulebridge.import_rule is the function)

ITERATIONS = 1000
X = np.linspace(0.1, 1.0, 8)


class _Counted:
    """Counts the checks the first-use policy and import_rule's verification run."""

    def __init__(self) -> None:
        self.calls = 0
        self._originals = (firstuse.check_call, import_rule_module.check_call)

    def __enter__(self) -> "_Counted":
        original = self._originals[0]

        def counted(*args, **kwargs):
            self.calls += 1
            return original(*args, **kwargs)

        firstuse.check_call = import_rule_module.check_call = counted
        return self

    def __exit__(self, *exc_info) -> None:
        firstuse.check_call, import_rule_module.check_call = self._originals


def _loop(gradient, values) -> tuple[float, int]:
    gradient(values[0] - 1.0)  # warm up: the first key's check and compilation
    with _Counted() as counted:
        start = time.perf_counter()
        for value in values:
            gradient(value)
        seconds = time.perf_counter() - start
    return seconds / len(values), counted.calls


def main(iterations: int = ITERATIONS, source: str = "jax") -> list[tuple[str, float, int]]:
    warnings.simplefilter("ignore")
    if source == "jax":
        import jax.numpy as xnp
    else:
        import autograd.numpy as xnp
    values = list(np.linspace(1.0, 2.0, iterations))
    power = rb.grad(lambda v, t: np.sum(v ** t))
    per_value = rb.import_rule(lambda v, a: np.sin(v) * a, source,
                               equivalent=lambda v, a: xnp.sin(v) * a)
    continuous = rb.import_rule(lambda v, a: np.sin(v) * a + 0.0, source,
                                equivalent=lambda v, a: xnp.sin(v) * a + 0.0,
                                continuous=("a",))
    rows = [
        ("x ** t, new t each iteration", *_loop(lambda t: power(X, t), values)),
        (f"imported ({source}), new a each iteration",
         *_loop(lambda a: rb.grad(lambda v: np.sum(per_value(v, a)))(X), values)),
        (f"imported ({source}), continuous=('a',)",
         *_loop(lambda a: rb.grad(lambda v: np.sum(continuous(v, a)))(X), values)),
    ]
    print(f"{iterations} gradients, each at a new value of the constant:")
    for name, seconds, checks in rows:
        print(f"  {name:45s} {seconds * 1e6:9.0f} us per gradient, {checks:5d} checks")
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--source", default="jax")
    options = parser.parse_args()
    main(options.iterations, options.source)

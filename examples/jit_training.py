"""Trace once, run many: the network of mlp.py trained with `rulebridge.jit`, and a SciPy fit.

`rulebridge.jit(rulebridge.value_and_grad(loss))` records the loss and its gradient at the first
call and replays that program on every later step: the same NumPy calls and the same rules'
pullbacks, with no boxes and no rule lookups. Every replay is the eager call's result to the
bit, so the trained parameters are the eager loop's exactly; only the time differs.
"""

import os
import sys
import time

import numpy as np
import scipy.optimize

import rulebridge

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp import init_params, loss  # noqa: E402 (the network of mlp.py)


def train(step, params, x, y, steps, learning_rate):
    for _ in range(steps):
        value, grads = step(params, x, y)
        params = [(W - learning_rate * gW, b - learning_rate * gb)
                  for (W, b), (gW, gb) in zip(params, grads)]
    return params


def main(steps=600, n_points=64, hidden=16, learning_rate=0.1, seed=0):
    rng = np.random.default_rng(seed)
    x = np.linspace(-1, 1, n_points)[:, None]
    y = np.sin(3 * x)
    start = init_params([1, hidden, hidden, 1], rng)

    timings = {}
    trained = {}
    for name, step in [("eager", rulebridge.value_and_grad(loss)),
                       ("jit", rulebridge.jit(rulebridge.value_and_grad(loss)))]:
        began = time.perf_counter()
        trained[name] = train(step, start, x, y, steps, learning_rate)
        timings[name] = time.perf_counter() - began
    for (W, b), (Wj, bj) in zip(trained["eager"], trained["jit"]):
        assert np.array_equal(W, Wj) and np.array_equal(b, bj)  # the same numbers, to the bit
    assert loss(trained["jit"], x, y) < loss(start, x, y) / 5
    print(f"{steps} steps: eager {timings['eager']:.2f} s, jit {timings['jit']:.2f} s "
          f"({timings['eager'] / timings['jit']:.1f}x faster)")

    # scipy.optimize.minimize asks for (value, gradient) at each point: a jitted one replays.
    def rosenbrock(z):
        return np.sum(100.0 * (z[1:] - z[:-1] ** 2) ** 2 + (1.0 - z[:-1]) ** 2)

    z0 = np.full(8, -0.5)
    fits = {}
    for name, fun in [("eager", rulebridge.value_and_grad(rosenbrock)),
                      ("jit", rulebridge.jit(rulebridge.value_and_grad(rosenbrock)))]:
        began = time.perf_counter()
        fits[name] = scipy.optimize.minimize(fun, z0, jac=True, method="BFGS")
        timings[name] = time.perf_counter() - began
    assert np.array_equal(fits["eager"].x, fits["jit"].x) and np.allclose(fits["jit"].x, 1.0,
                                                                           atol=1e-4)
    print(f"BFGS on an 8-dimensional Rosenbrock, {fits['jit'].nfev} evaluations: eager "
          f"{timings['eager']:.3f} s, jit {timings['jit']:.3f} s")
    return trained["jit"]


if __name__ == "__main__":
    main()

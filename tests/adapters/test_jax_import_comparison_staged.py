"""Before an imported JAX rule is first used, its equivalent is compared with the function
(`Adapter.evaluate`). Run op by op, JAX compiles each of its operations on its own: 37 XLA
compilations and seconds before the first gradient of autograd's gaussian_process example
(`multivariate_normal.logpdf`), most of that example's first call. The JAX adapter stages the
comparison as one compiled function of the array arguments. Counted from JAX's own compile log;
the values are SciPy's either way (the gradient is checked against central differences)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.scipy import stats

jax = pytest.importorskip("jax")

N = 7  # a shape no other test compiles at


def _compilations(caplog, call):
    jax.config.update("jax_log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="jax"):
            caplog.clear()
            result = call()
        return result, sum("Compiling" in r.getMessage() for r in caplog.records)
    finally:
        jax.config.update("jax_log_compiles", False)


def test_the_comparison_before_first_use_compiles_once(caplog):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((N, N))
    cov = a @ a.T + N * np.eye(N)
    y = rng.standard_normal(N)

    def f(mean):
        return stats.multivariate_normal.logpdf(y, mean, cov)

    mean = 0.1 * rng.standard_normal(N)
    g, compilations = _compilations(caplog, lambda: rb.grad(f, source="jax")(mean))
    # the comparison (one), the pullback (one), and a few for the check's own small calls;
    # op by op it was more than thirty
    assert compilations <= 8, compilations
    h = 1e-6
    numeric = [(f(mean + h * e) - f(mean - h * e)) / (2 * h) for e in np.eye(N)]
    np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-8)


def test_arguments_that_are_not_arrays_stay_fixed_when_staged():
    """A Python int the equivalent loops over is no array: it stays a constant of the staged
    function (a traced one would not give `range` a length)."""
    import jax.numpy as jnp

    def repeated_sin(x, n):
        for _ in range(n):
            x = jnp.sin(x)
        return x

    def mine(x, n):
        for _ in range(n):
            x = np.sin(x)
        return x

    imported = rb.import_rule(mine, source="jax", equivalent=repeated_sin)
    x = np.array([0.2, 0.4, 1.3])
    want = np.cos(x) * np.cos(np.sin(x))
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(imported(x, 2)))(x), want, rtol=1e-12)

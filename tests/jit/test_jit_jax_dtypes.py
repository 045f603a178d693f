"""The JAX back end on what the jit fuzzer found it answered eagerly or refused: arguments of
zero size (its sweep's rows did not reshape), and a float64 result computed through float32
intermediates (its first replay was held to float64's tolerance, though XLA's float32 kernels
are not NumPy's: the call was refused as if it drew random numbers). Each against the eager
call on new inputs, and answered by the staged program."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb

pytest.importorskip("jax")

from tests.jit.test_jit_jax import assert_close, staged_calls  # noqa: E402


def assert_near(a, b, rtol):
    for x, y in zip(a, b):
        assert type(x) is type(y) and np.result_type(x) == np.result_type(y)
        np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * np.max(np.abs(y), initial=0.0))


@pytest.mark.parametrize("transform", [rb.value_and_grad,
                                       lambda f, argnums: rb.jacobian(f, argnums)])
def test_an_argument_of_zero_size(transform):
    def f(x, empty):
        return np.sum(np.sin(x)) + np.sum(empty * 2.0)

    g = rb.jit(transform(f, argnums=(0, 1)), backend="jax")
    rng = np.random.default_rng(0)
    for _ in range(3):
        x, empty = rng.normal(size=3), rng.normal(size=(4, 0))
        assert_close(g(x, empty), transform(f, argnums=(0, 1))(x, empty))
    assert staged_calls(g) == 2 and g.eager_calls == 0, g.last_fallback


def test_a_float64_result_of_float32_intermediates():
    c = np.array([0.5, 1.5, 2.0])

    def f(x):
        return np.sum(np.log1p(np.square(x)) * c)  # float32 ops, then float64 ones

    g = rb.jit(rb.value_and_grad(f), backend="jax")
    x = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    for k in range(3):
        value, grad = g(x * (1 + k))
        want = rb.value_and_grad(f)(x * (1 + k))
        assert_near((value, grad), want, rtol=1e3 * np.finfo(np.float32).eps)
    assert staged_calls(g) == 2 and g.eager_calls == 0, g.last_fallback


def test_a_python_number_argument_is_float64_beside_float32_constants():
    c = np.array([0.5, 1.5], dtype=np.float32)

    def f(x):
        return np.sum(np.log1p(np.square(x)) * c)  # NumPy: float64 (x is boxed as float64)

    g = rb.jit(rb.value_and_grad(f), backend="jax")
    for x in (0.3, 0.7, -1.2):
        assert_close(g(x), rb.value_and_grad(f)(x))
    assert staged_calls(g) == 2 and g.eager_calls == 0, g.last_fallback


@pytest.mark.parametrize("x, c", [
    (0.5, np.float32(2.0)), (0.5, np.array([2.0, 3.0], dtype=np.float32)),
    (np.float32(0.5), np.array([2, 3])), (np.array([0.5, 1.0], dtype=np.float32), np.int32(2)),
    (np.array([0.5, 1.0], dtype=np.float32), np.array([2, 3]))])
def test_numpys_promotion_not_jaxs(x, c):
    """A Python number times float32 is float32 in both; float32 times int64 is float64 in
    NumPy and float32 in JAX: each staged op has the dtype NumPy gave it."""
    def f(x):
        return np.sum(x * c) + np.sum(np.square(x) * c)

    g = rb.jit(rb.value_and_grad(f), backend="jax")
    for k in range(3):
        assert_near(g(x * (1 + k)), rb.value_and_grad(f)(x * (1 + k)),
                    rtol=1e3 * np.finfo(np.float32).eps)
    assert staged_calls(g) == 2 and g.eager_calls == 0, g.last_fallback

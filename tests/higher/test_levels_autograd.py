"""autograd's own nested tests (tests/test_complex.py, test_numpy.py, test_scipy.py in its
repository), through rulebridge: second derivatives of abs and angle of complex values, of power
with respect to its first argument (with the special case y = 0, autograd's issue 116) and of
logsumexp, each checked against finite differences of the gradient or against JAX."""

from __future__ import annotations

import jax
import jax.scipy.special as jss
import numpy as np
import pytest

import rulebridge as rb
import rulebridge.scipy.special as rss

jax.config.update("jax_enable_x64", True)
SOURCES = [None, "autograd"]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("function", [np.abs, np.angle])
@pytest.mark.parametrize("z", [1.1 + 1.2j, 1.1 - 1.2j, -1.1 + 1.2j, -0.7 - 0.3j])
def test_second_derivative_of_a_real_function_of_a_complex_value(function, z, source):
    d_fun = rb.grad(function, source=source)  # complex -> complex: df/dx - i df/dy
    assert rb.check_grads(d_fun, z, source=source) < 1e-6
    # against JAX: the same convention, differentiated again
    jax_function = {np.abs: jax.numpy.abs, np.angle: jax.numpy.angle}[function]
    want = jax.grad(lambda w: jax.numpy.real(jax.grad(jax_function)(w) * np.conj(1.0 + 0.5j)))(z)
    got = rb.grad(lambda w: np.real(d_fun(w) * np.conj(1.0 + 0.5j)), source=source)(z)
    np.testing.assert_allclose(got, want, rtol=1e-8)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("function", [np.abs, np.angle])
def test_second_derivative_at_a_real_value(function, source):
    d_fun = rb.grad(function, source=source)
    for x in (0.6, -0.6) if function is np.abs else (0.6,):
        assert rb.check_grads(d_fun, x, source=source) < 1e-6


@pytest.mark.parametrize("source", SOURCES)
def test_power_with_respect_to_its_first_argument(source):
    y = 1.7
    f = lambda x: np.power(x, y)  # noqa: E731
    for x in (1.3, 2.2):
        assert np.isclose(rb.grad(rb.grad(f, source=source), source=source)(x),
                          y * (y - 1) * x ** (y - 2), rtol=1e-12)
        assert rb.check_grads(rb.grad(f, source=source), x, source=source) < 1e-6
    zero = lambda x: np.power(x, 0.0)  # noqa: E731  (autograd's issue 116)
    assert rb.grad(zero, source=source)(0.0) == 0.0
    assert rb.grad(rb.grad(zero, source=source), source=source)(0.0) == 0.0


@pytest.mark.parametrize("source", SOURCES)
def test_logsumexp_second_derivative(source):
    x = np.array([0.3, -1.0, 2.0, 0.1])
    h = rb.hessian(rss.logsumexp, source=source)(x)
    np.testing.assert_allclose(h, jax.hessian(jss.logsumexp)(x), rtol=1e-8, atol=1e-14)
    a = np.array([[0.3, -1.0], [2.0, 0.1]])
    f = lambda a: np.sum(rss.logsumexp(a, axis=1) ** 2)  # noqa: E731
    ref = lambda a: jax.numpy.sum(jss.logsumexp(a, axis=1) ** 2)  # noqa: E731
    np.testing.assert_allclose(rb.hessian(f, source=source)(a), jax.hessian(ref)(a), rtol=1e-8,
                               atol=1e-14)


_A = np.random.default_rng(25).normal(size=(4, 3))
_B = np.random.default_rng(26).normal(size=(3, 2))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("program, reference", [
    (lambda x: np.sum(np.tanh(np.dot(_A, x)) ** 2),
     lambda x: jax.numpy.sum(jax.numpy.tanh(jax.numpy.dot(_A, x)) ** 2)),
    (lambda x: np.sum(np.sin(np.dot(x, _A.T)) * np.arange(4.0)),
     lambda x: jax.numpy.sum(jax.numpy.sin(jax.numpy.dot(x, _A.T)) * np.arange(4.0))),
    (lambda x: np.sum(np.cos(np.outer(x, x) @ _B)),
     lambda x: jax.numpy.sum(jax.numpy.cos(jax.numpy.outer(x, x) @ _B))),
    (lambda x: np.sum(np.tensordot(_A, x, axes=1) ** 3),
     lambda x: jax.numpy.sum(jax.numpy.tensordot(_A, x, axes=1) ** 3)),
])
def test_hessians_through_dot_matmul_and_tensordot(program, reference, source):
    """autograd's VJPs of dot, matmul and tensordot call helper primitives that end in
    `onp.asarray(out, dtype=...)`: run on an enclosing level's boxes (a Hessian, autograd's
    order-2 check_grads), that asarray converted the box and raised NestedDifferentiationError."""
    x = np.array([0.3, -0.8, 0.5])
    np.testing.assert_allclose(rb.hessian(program, source=source)(x), jax.hessian(reference)(x),
                               rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("program, reference", [
    (lambda x: np.sum(rss.psi(x + 2.0) * x), lambda x: jax.numpy.sum(jss.digamma(x + 2.0) * x)),
    (lambda x: np.sum(rss.polygamma(1, x + 2.0) ** 2),
     lambda x: jax.numpy.sum(jss.polygamma(1, x + 2.0) ** 2)),
])
def test_second_derivatives_through_a_rule_that_calls_scipy(program, reference, source):
    """autograd's psi VJP calls scipy.special.polygamma, which converted an enclosing level's
    boxes with np.asarray: the adapter's raw copies call rulebridge's drop-in for it instead
    (SciPy's own function on plain values, an op of that level on its boxes)."""
    x = np.array([0.3, -0.8, 0.5])
    np.testing.assert_allclose(rb.hessian(program, source=source)(x), jax.hessian(reference)(x),
                               rtol=1e-8, atol=1e-12)

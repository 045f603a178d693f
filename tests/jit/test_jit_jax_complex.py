"""Complex programs staged into jax.jit (rulebridge.jit(backend="jax")): gradients of real
functions of complex values (JAX's convention is rulebridge's: df/dx - i df/dy), values of
complex functions, jacobians of real outputs, and ops called back to NumPy with their rules,
each against the eager call on new inputs, to 1e-12 relative; the staged program answered."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import rulebridge as rb

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from rulebridge_jax.exported import jax_function  # noqa: E402

from tests.jit.test_jit_jax import assert_close, staged_calls  # noqa: E402

logsumexp = rb.import_rule(scipy.special.logsumexp, "autograd")

PROGRAMS = {
    "abs": lambda z: np.sum(np.abs(z * 2.0 + 1j) ** 3),
    "exp_conj": lambda z: np.sum(np.real(np.exp(z) * np.conj(z))),
    "angle_log": lambda z: np.sum(np.angle(z)) + np.sum(np.real(np.log(z)) ** 2),
    "matmul": lambda z: np.real(np.sum(np.outer(z, z.conj()) @ z)),
    "fft": lambda z: np.sum(np.abs(np.fft.fft(z)) ** 2),
    "called_back": lambda z: np.real(logsumexp(z * z))
    + np.sum(np.abs(np.partition(z, 1) * np.arange(1.0, 5.0)) ** 2),  # no counterpart
}


def draws(rng, n):
    return [rng.normal(size=4) + 1j * rng.normal(size=4) for _ in range(n)]


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("transform", [rb.grad, rb.value_and_grad,
                                       lambda f: rb.jacobian(lambda z: np.abs(z) * f(z))])
def test_complex_programs_are_staged_as_the_eager_call(name, transform):
    f, rng = PROGRAMS[name], np.random.default_rng(11)
    jitted, eager = rb.jit(transform(f), backend="jax"), transform(f)
    for z in draws(rng, 4):
        assert_close(jitted(z), eager(z))
    assert staged_calls(jitted) == 3 and jitted.eager_calls == 0, jitted.last_fallback


def test_a_complex_result_and_a_complex_jax_function():
    f = PROGRAMS["exp_conj"]
    rng = np.random.default_rng(12)
    plain = rb.jit(lambda z: np.exp(z) * np.conj(z) + 1j, backend="jax")
    for z in draws(rng, 3):
        assert_close(plain(z), np.exp(z) * np.conj(z) + 1j)
    assert staged_calls(plain) == 2
    zs = np.stack(draws(rng, 20))
    g = jax_function(rb.jit(rb.grad(f), backend="jax"), zs[0])
    with jax.enable_x64(True):
        got = np.asarray(jax.vmap(g)(jnp.asarray(zs)))
        want = np.asarray(jax.vmap(jax.grad(lambda z: jnp.sum(jnp.real(
            jnp.exp(z) * jnp.conj(z)))))(jnp.asarray(zs)))
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for k in (0, 19):
        assert_close(got[k], rb.grad(f)(zs[k]))

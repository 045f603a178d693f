"""A rule whose forward answers with a Python float or complex, as NumPy's own function does on
a Python scalar (`np.real(1.5)` is the float 1.5), is recorded like a NumPy scalar, for every
source (issue 22, section 6; autograd's suite has `np.real` of a Python float). References:
central differences of the NumPy program and jax.grad of the jnp one."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

jax.config.update("jax_enable_x64", True)

PROGRAMS = {
    "np.real(t)": (lambda t: np.real(t) * t, lambda t: jnp.real(t) * t),
    "(t * 1j).real": (lambda t: (t * 1j).real + t * t, lambda t: (t * 1j).real + t * t),
    "(t * 1j).imag": (lambda t: (t * 1j).imag * t, lambda t: (t * 1j).imag * t),
    "np.imag(t)": (lambda t: np.imag(t) + np.sin(t), lambda t: jnp.imag(t) + jnp.sin(t)),
}


def central(f, t: float, h: float = 1e-6) -> float:
    return (f(t + h) - f(t - h)) / (2 * h)


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_a_python_float_through_a_rule_answering_with_a_python_scalar(source, name):
    f, f_jnp = PROGRAMS[name]
    t = 1.5
    assert type(np.real(t)) is float  # NumPy's own answer is a Python scalar
    value, g = rb.value_and_grad(f, source=source)(t)
    assert value == f(t)
    np.testing.assert_allclose(g, float(jax.grad(f_jnp)(t)), rtol=1e-13)
    np.testing.assert_allclose(g, central(f, t), rtol=1e-7)


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_a_python_complex_through_real_and_imag(source):
    f = lambda z: np.real(z * z) + 3 * np.imag(z)  # noqa: E731
    z = 1.5 + 0.5j
    g = rb.grad(f, source=source)(z)
    # df/dx - i df/dy: JAX's and autograd's convention.
    want = (complex(jax.grad(lambda z: jnp.real(z * z) + 3 * jnp.imag(z))(z)))
    np.testing.assert_allclose(g, want, rtol=1e-13)
    expected = central(lambda x: f(x + 0.5j), 1.5) - 1j * central(lambda y: f(1.5 + 1j * y), 0.5)
    np.testing.assert_allclose(g, expected, rtol=1e-7)

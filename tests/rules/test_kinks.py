"""A norm at zero takes the subgradient 0, so a NaN never spreads through a program that is
smooth (issue 22, section 6; docs/architecture.md, "Kinks"). JAX gives NaN here; the reference
is central differences of NumPy's own program, and the subgradient where it is not smooth."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

jax.config.update("jax_enable_x64", True)

V = np.array([1.0, 2.0, -0.5])
M = np.array([[1.0, 2.0], [3.0, -1.0]])
SOURCES = [None, "autograd", "jax"]


def central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[index] = 1
        g[index] = (f(x + h * e) - f(x - h * e)) / (2 * h)
    return g


def grad(f, source, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rb.grad(f, source=source)(x)


SMOOTH = {  # programs whose value is smooth although a norm in them is at 0
    "norm(v - v) + sum(v)": (lambda v: np.linalg.norm(v - v) + np.sum(v), V),
    "norm(0 * v) ** 2 + sum(v)": (lambda v: np.linalg.norm(v * 0) ** 2 + np.sum(v), V),
    "fro norm(m - m) + sum(m)": (lambda m: np.linalg.norm(m - m, "fro") + np.sum(m), M),
    "norm(v - v) * 3 + v @ v": (lambda v: 3 * np.linalg.norm(v - v) + v @ v, V),
}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", SMOOTH)
def test_a_smooth_program_through_a_norm_at_zero_has_its_gradient(source, name):
    f, x = SMOOTH[name]
    np.testing.assert_allclose(grad(f, source, x), central(f, x), rtol=1e-8, atol=1e-10)


def test_jax_gives_nan_there_rulebridge_does_not():
    g = jax.grad(lambda v: jnp.linalg.norm(v - v) + jnp.sum(v))(jnp.asarray(V))
    assert np.isnan(np.asarray(g)).all()  # what JAX answers, documented as the difference
    assert np.isfinite(rb.grad(lambda v: np.linalg.norm(v - v) + np.sum(v))(V)).all()


@pytest.mark.parametrize("source", [None, "jax"])
def test_zero_slices_take_the_subgradient_and_the_others_their_gradient(source):
    masked = lambda m: np.sum(np.linalg.norm(m * [[1.0, 0.0]], axis=0))  # noqa: E731
    g = grad(masked, source, M)
    column = M[:, 0] / np.linalg.norm(M[:, 0])
    np.testing.assert_allclose(g, np.stack([column, np.zeros(2)], axis=1), rtol=1e-14)
    rows = lambda m: np.sum(np.linalg.norm(m * [[1.0], [0.0]], axis=1, keepdims=True))  # noqa
    g = grad(rows, source, M)
    np.testing.assert_allclose(g, [M[0] / np.linalg.norm(M[0]), [0.0, 0.0]], rtol=1e-14)


@pytest.mark.parametrize("source", SOURCES)
def test_a_nan_the_program_brings_is_kept(source):
    # sqrt at 0 has no derivative: its infinite cotangent reaches the norm, and NaN is honest.
    g = grad(lambda v: np.sqrt(np.linalg.norm(v - v)) + np.sum(v), source, V)
    assert np.isnan(g).all()
    # and a NaN in the cotangent of a nonzero vector's norm stays too
    g = grad(lambda v: np.linalg.norm(v) * np.sqrt(np.sum(v - v)), source, V)
    assert np.isnan(g).all()

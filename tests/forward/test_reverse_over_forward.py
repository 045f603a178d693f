"""A jvp inside a differentiation: its primal or its tangent a box of an enclosing level.
`grad` of `<u, jvp(f)(x, v)>` with respect to x and v (reverse over forward) and `jvp` of a
jvp (forward over forward), as autograd's order-2 `check_grads(modes=["fwd"])` takes them:
each equal to JAX's on the same program in jax.numpy, or a rulebridge error, never a number."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

jax.config.update("jax_enable_x64", True)

X = np.array([0.3, -0.8, 0.5])
V = np.array([1.0, 2.0, -1.0])
U = np.array([0.5, 0.1, 0.2])
PROGRAMS = [
    (lambda x: np.sin(x) * np.exp(x[0]), lambda x: jnp.sin(x) * jnp.exp(x[0])),
    (lambda x: np.tanh(np.outer(x, x)).sum(axis=0),
     lambda x: jnp.tanh(jnp.outer(x, x)).sum(axis=0)),
    (lambda x: x * x[::-1] / (1.0 + x ** 2), lambda x: x * x[::-1] / (1.0 + x ** 2)),
]


@pytest.mark.parametrize("source", [None, "autograd"])
@pytest.mark.parametrize("program", range(len(PROGRAMS)))
def test_gradient_of_a_jvp_in_its_primal_and_its_tangent(program, source):
    f, jf = PROGRAMS[program]
    got = rb.grad(lambda x, v: np.sum(U * rb.jvp(f, (x,), (v,), source=source)[1]),
                  argnums=(0, 1), source=source)(X, V)
    want = jax.grad(lambda x, v: jnp.sum(U * jax.jvp(jf, (x,), (v,))[1]), argnums=(0, 1))(X, V)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("source", [None, "autograd"])
@pytest.mark.parametrize("program", range(len(PROGRAMS)))
def test_jvp_of_a_jvp_in_its_primal_and_its_tangent(program, source):
    f, jf = PROGRAMS[program]
    got = rb.jvp(lambda x: rb.jvp(f, (x,), (V,), source=source)[1], (X,), (U,), source=source)[1]
    want = jax.jvp(lambda x: jax.jvp(jf, (x,), (V,))[1], (X,), (U,))[1]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    got = rb.jvp(lambda v: rb.jvp(f, (X,), (v,), source=source)[1], (V,), (U,), source=source)[1]
    want = jax.jvp(lambda v: jax.jvp(jf, (X,), (v,))[1], (V,), (U,))[1]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def test_a_compiled_pushforward_under_nesting_is_read_off_the_pullback_offered_as_a_rule():
    """JAX's pushforwards are compiled and cannot run on an enclosing level's boxes: the
    tangent is read off the pullback, whose rule of its own (the VJP of the jitted pullback)
    the enclosing level records (it raised a RulebridgeError before). JAX's value, or an
    error, never another number."""
    f, jf = PROGRAMS[0]
    got = rb.grad(lambda x, v: np.sum(U * rb.jvp(f, (x,), (v,), source="jax")[1]),
                  argnums=(0, 1), source="jax")(X, V)
    want = jax.grad(lambda x, v: jnp.sum(U * jax.jvp(jf, (x,), (v,))[1]), argnums=(0, 1))(X, V)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)


_I3 = np.eye(3)
TRANSPOSED = [  # autograd's rules without a pushforward: forward mode reads it off the pullback
    (lambda x: np.linalg.solve(np.outer(x, x) + _I3, x),
     lambda x: jnp.linalg.solve(jnp.outer(x, x) + _I3, x)),
    (lambda x: np.linalg.inv(np.outer(x, x) + _I3).sum(axis=0),
     lambda x: jnp.linalg.inv(jnp.outer(x, x) + _I3).sum(axis=0)),
    (lambda x: np.fft.fft(x).real * x, lambda x: jnp.fft.fft(x).real * x),
    (lambda x: np.linalg.det(np.outer(x, x) + _I3) * x,
     lambda x: jnp.linalg.det(jnp.outer(x, x) + _I3) * x),
]


@pytest.mark.parametrize("source", [None, "autograd"])
@pytest.mark.parametrize("program", range(len(TRANSPOSED)))
def test_a_transposed_pullback_under_nesting(program, source):
    """The transposition built each output entry into a plain array (`flat[j] += value`), and
    converted the enclosing level's boxes with float(): reverse over forward and forward over
    forward refused every op without a pushforward of its own."""
    f, jf = TRANSPOSED[program]
    got = rb.jvp(lambda x: rb.jvp(f, (x,), (V,), source=source)[1], (X,), (U,), source=source)[1]
    want = jax.jvp(lambda x: jax.jvp(jf, (x,), (V,))[1], (X,), (U,))[1]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    got = rb.grad(lambda x, v: np.sum(U * rb.jvp(f, (x,), (v,), source=source)[1]),
                  argnums=(0, 1), source=source)(X, V)
    want = jax.grad(lambda x, v: jnp.sum(U * jax.jvp(jf, (x,), (v,))[1]), argnums=(0, 1))(X, V)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)

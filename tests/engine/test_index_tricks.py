"""np.r_[...] and np.c_[...] holding traced values (autograd's suite has 8 tests of them): the
result is NumPy's, value and dtype, and the gradient is jax.grad's of the same program written
with jnp.r_ / jnp.c_, or central differences of NumPy's own where JAX lacks a directive."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb

jnp = pytest.importorskip("jax.numpy")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(25)
A = rng.standard_normal((3, 2))
C = rng.standard_normal((3, 2))
V = rng.standard_normal(4)
W = rng.standard_normal(10)

# (name, build(np_module, x), input): each builds with np_module's index tricks
PROGRAMS = [
    ("r_basic", lambda n, x: n.r_[x], A),
    ("r_double", lambda n, x: n.r_[x, x], A),
    ("r_node_and_const", lambda n, x: n.r_[x, C], A),
    ("r_mixed", lambda n, x: n.r_[x, C, x], A),
    ("r_slicing", lambda n, x: n.r_[x, W, 1:10], W),
    ("r_scalars", lambda n, x: n.r_[x, 1.5, -2, x[:2]], V),
    ("r_zero_d", lambda n, x: n.r_[x[0], x[1:], x[3]], V),
    ("r_axis_directive", lambda n, x: n.r_["-1", x, C], A),
    ("r_ndmin_directive", lambda n, x: n.r_["0,2", x, x[::-1]], V),
    ("c_", lambda n, x: n.c_[x, C, x], A),
    ("c_vectors", lambda n, x: n.c_[x, 2.0 * x, n.ones(4)], V),
    ("c_vector_and_matrix", lambda n, x: n.c_[x[:3], C], V),
]
# drawn before any trace (numpy.random inside a trace is the trust issue's crash class)
WEIGHTS = {name: rng.standard_normal(np.shape(build(np, x))) for name, build, x in PROGRAMS}


def _loss(n, name, build, x):
    return n.sum(n.sin(build(n, x)) * WEIGHTS[name])


@pytest.mark.parametrize("name, build, x", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_value_is_numpys_and_gradient_is_jaxs(name, build, x):
    before = x.copy()
    y, pullback = rb.vjp(lambda v: build(np, v), x)
    expected = build(np, x)
    assert type(y) is np.ndarray and y.dtype == expected.dtype and y.shape == expected.shape
    np.testing.assert_array_equal(y, expected)
    g = rb.grad(lambda v: _loss(np, name, build, v))(x)
    reference = jax.grad(lambda v: _loss(jnp, name, build, v))(jnp.asarray(x))
    np.testing.assert_allclose(g, np.asarray(reference), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("build", [
    lambda x: np.r_["0,2,0", x, x],  # trans1d: each vector a column (JAX has no such directive)
    lambda x: np.r_["1,3,1", x, x],
])
def test_directives_against_central_differences(build):
    x = V.copy()
    expected = build(x)
    y, _ = rb.vjp(build, x)
    assert y.dtype == expected.dtype and y.shape == expected.shape
    np.testing.assert_array_equal(y, expected)
    rb.check_grads(lambda v: np.sum(np.sin(build(v)) ** 2), x)


def test_a_float32_box_and_a_weak_scalar_stay_float32():
    def f(v):
        y = np.r_[v.astype(np.float32), 1.0]
        assert y.dtype == np.float32 and y.shape == (5,)
        return np.sum(np.sin(y) ** 2)

    g = rb.grad(f)(V)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.sin(2 * V.astype(np.float32)), rtol=1e-5)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix's own
def test_a_matrix_directive_on_traced_values_is_refused_and_plain_keys_are_numpys():
    with pytest.raises(rb.TracingError, match=r"np\.matrix"):
        rb.grad(lambda v: np.sum(np.r_["r", v, v]))(V)
    m = np.r_["r", V, V]  # no box: NumPy's own call, an np.matrix
    assert type(m) is np.matrix and m.shape == (1, 8)
    np.testing.assert_array_equal(np.r_[0:4, V, 2.0], np.concatenate([np.arange(4), V, [2.0]]))
    assert np.c_[np.array([1, 2]), np.array([3, 4])].dtype == np.int64

"""The derivative API beyond grad: jacobian (reverse mode, one trace, one sweep per output
entry), elementwise_grad, re-runnable pullbacks, and check_grads, each against jax.jacrev /
jax.grad / autograd of the same program on each source."""

from __future__ import annotations

import contextlib
import functools

import autograd
import autograd.numpy as anp
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.registry import REGISTRY

from tests.support.adapters import OffByOnePercent
from tests.support.numerical import central_difference

SOURCES = ["autograd", "jax"]


def jnp_tree(tree):
    return jax.tree_util.tree_map(jnp.asarray, tree)


def assert_tree_close(actual, expected, rtol=1e-9):
    a_leaves, a_def = jax.tree_util.tree_flatten(actual)
    e_leaves, e_def = jax.tree_util.tree_flatten(expected)
    assert a_def == e_def, (a_def, e_def)
    for a, e in zip(a_leaves, e_leaves):
        e = np.asarray(e)
        assert np.shape(a) == e.shape and a.dtype == e.dtype
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * max(1.0, np.max(np.abs(e))))


def program(xp, x, A):
    return xp.tanh(A @ xp.sin(x)) * x[0]


@pytest.mark.parametrize("source", SOURCES)
def test_jacobian_matches_jacrev(source):
    rng = np.random.default_rng(0)
    x, A = rng.normal(size=3), rng.normal(size=(4, 3))
    J = rb.jacobian(functools.partial(program, np), source=source)(x, A)
    JA = rb.jacobian(functools.partial(program, np), argnums=(0, 1), source=source)(x, A)
    with jax.enable_x64(True):
        expected = jax.jacrev(functools.partial(program, jnp), argnums=(0, 1))(*jnp_tree((x, A)))
    assert_tree_close(J, expected[0])
    assert_tree_close(JA, expected)
    assert type(J) is np.ndarray and J.flags.writeable


@pytest.mark.parametrize("source", SOURCES)
def test_jacobian_of_containers_in_and_out(source):
    def f(xp, p):
        return {"u": xp.sin(p["a"]) * p["s"], "v": xp.sum(p["a"] ** 2)}

    p = {"a": np.array([0.3, -1.2, 0.7]), "s": 1.5}
    J = rb.jacobian(functools.partial(f, np), source=source)(p)
    with jax.enable_x64(True):
        expected = jax.jacrev(functools.partial(f, jnp))(jnp_tree(p))
    assert_tree_close(J, expected)


@pytest.mark.parametrize("source", SOURCES)
def test_jacobian_of_a_function_that_writes_in_place(source):
    # Each row's sweep restores and redoes the writes: the rows after the first see the same
    # tape as the first.
    def f(x):
        y = x * 1.0
        y[1:] = y[1:] * y[:-1]
        y[0] = np.sin(y[0])
        return y

    def f_jnp(x):
        y = x * 1.0
        y = y.at[1:].set(y[1:] * y[:-1])
        return y.at[0].set(jnp.sin(y[0]))

    x = np.array([0.5, 2.0, -1.0, 3.0])
    J = rb.jacobian(f, source=source)(x)
    with jax.enable_x64(True):
        expected = jax.jacrev(f_jnp)(jnp.asarray(x))
    assert_tree_close(J, expected)


@pytest.mark.parametrize("source", SOURCES)
def test_vjp_pullback_runs_again_with_the_same_answers(source):
    def f(x):
        x[0] = x[1] * x[2]  # writes into the argument: the sweep restores and redoes it
        return np.cumsum(np.exp(x))

    x = np.array([0.1, 0.2, 0.3])
    rng = np.random.default_rng(3)
    _, pullback = rb.vjp(f, x.copy(), source=source)
    for _ in range(3):
        ybar = rng.normal(size=3)
        (g,) = pullback(ybar)
        _, fresh = rb.vjp(f, x.copy(), source=source)
        np.testing.assert_array_equal(g, fresh(ybar)[0])
        np.testing.assert_allclose(g, central_difference(lambda a: np.sum(f(a) * ybar), (x,)),
                                   rtol=1e-6)


@pytest.mark.parametrize("source", SOURCES)
def test_elementwise_grad_matches_autograd(source):
    x = np.linspace(-2.0, 2.0, 7)
    f = lambda x: np.tanh(x) * np.exp(-x ** 2)
    expected = autograd.elementwise_grad(lambda x: anp.tanh(x) * anp.exp(-x ** 2))(x)
    np.testing.assert_allclose(rb.elementwise_grad(f, source=source)(x), expected, rtol=1e-12)
    X = x.reshape(7, 1) * np.ones((1, 3), np.float32)
    g32 = rb.elementwise_grad(f, source=source)(X.astype(np.float32))
    assert g32.dtype == np.float32 and g32.shape == (7, 3)
    np.testing.assert_allclose(g32[:, 1], expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="complex"):
        rb.elementwise_grad(lambda x: x * 1j)(x)


@pytest.mark.parametrize("source", SOURCES)
def test_check_grads_passes_on_a_right_gradient(source):
    params = [(np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([0.1, -0.1])), 0.7]

    def loss(p, x):
        (W, b), scale = p
        return {"loss": np.sum(np.tanh(x @ W + b) ** 2) * scale, "h": np.sin(W)}

    x = np.array([[1.0, 2.0], [0.5, -1.0]])
    worst = rb.check_grads(loss, params, x, source=source)
    assert 0.0 <= worst < 1e-6
    assert rb.check_grads(loss, params, x, argnums=0, source=source) < 1e-6
    assert rb.check_grads(lambda x: np.sin(x), np.float32([0.2, 0.4]), source=source) < 2e-3


@pytest.fixture
def off_by_one_percent():
    rb.register_adapter(OffByOnePercent())
    yield OffByOnePercent.name
    REGISTRY.unregister(OffByOnePercent.name)


def test_check_grads_names_the_worst_error_and_leaf(off_by_one_percent):
    params = {"a": np.array([0.3, 0.5]), "b": np.array([1.0, 2.0])}
    loss = lambda p: {"t": np.tanh(p["b"]), "a": p["a"]}  # one op: np.tanh
    # Trusted unchecked (with the trust lane's default check at first use, an unverified rule
    # is refused before check_grads sees a number): the check of the whole function must find
    # the error on its own. rulebridge.trust may not be on this checkout yet.
    trusted = rb.trust() if hasattr(rb, "trust") else contextlib.nullcontext()
    with trusted, pytest.raises(rb.GradientCheckError,
                                   match=r"relative error .* > rtol 1e-06 .* "
                                         r"worst is argument 0\['b'\]") as info:
        rb.check_grads(loss, params, source=off_by_one_percent)
    assert isinstance(info.value, AssertionError) and info.value.max_rel_error > 1e-3


def test_check_grads_says_when_finite_differences_cannot_decide():
    with pytest.raises(rb.GradientCheckError, match="not smooth enough"):
        rb.check_grads(lambda x: np.abs(x - 1.0 - 4e-4), np.array([1.0]))
    with pytest.raises(rb.GradientCheckError, match="nothing to check"):
        rb.check_grads(lambda i: np.sum(i), np.arange(3))


# -- has_aux on jacobian and elementwise_grad (JAX's meaning) ---------------------------------


def aux_program(xp, p, c):
    h = xp.tanh(p["W"] @ p["x"]) * c
    # aux holds the output itself, an int, a complex value and None: aux is values only, never
    # differentiated, so neither its complexity nor its sharing with the output may matter.
    return {"h": h, "s": xp.sum(h ** 2)}, {"h": h, "step": 3, "z": h * 1j, "none": None}


@pytest.mark.parametrize("source", SOURCES)
def test_jacobian_has_aux_matches_jacrev(source):
    rng = np.random.default_rng(4)
    p = {"W": rng.normal(size=(3, 2)), "x": rng.normal(size=2)}
    c = 0.7
    jac, aux = rb.jacobian(functools.partial(aux_program, np), has_aux=True, source=source)(p, c)
    both, _ = rb.jacobian(functools.partial(aux_program, np), argnums=(0, 1), has_aux=True,
                          source=source)(p, c)
    with jax.enable_x64(True):
        expected, expected_aux = jax.jacrev(functools.partial(aux_program, jnp), argnums=0,
                                            has_aux=True)(jnp_tree(p), c)
        expected_both, _ = jax.jacrev(functools.partial(aux_program, jnp), argnums=(0, 1),
                                      has_aux=True)(jnp_tree(p), jnp.asarray(c))
    assert_tree_close(jac, expected)
    assert_tree_close(both, expected_both)
    plain_out, plain_aux = aux_program(np, p, c)
    assert aux["step"] == 3 and aux["none"] is None and type(aux["h"]) is np.ndarray
    np.testing.assert_array_equal(aux["h"], plain_out["h"])
    np.testing.assert_array_equal(aux["z"], plain_aux["z"])
    np.testing.assert_allclose(aux["h"], np.asarray(expected_aux["h"]), rtol=1e-12)
    # Without has_aux the pair is the output: its complex leaf is refused by its path.
    with pytest.raises(TypeError, match=r"output\[1\]\['z'\] is complex"):
        rb.jacobian(functools.partial(aux_program, np), source=source)(p, c)


@pytest.mark.parametrize("source", SOURCES)
def test_jacobian_has_aux_against_central_differences(source):
    # An aux that is the argument itself, and an output written in place.
    def f(x):
        y = np.sin(x) * x[::-1]
        y[0] = y[0] * y[1]
        return y, x

    x = np.array([0.3, -0.8, 1.1])
    jac, aux = rb.jacobian(f, has_aux=True, source=source)(x)
    assert aux is not jac and np.array_equal(aux, x)
    expected = np.stack([central_difference(lambda a, k=k: f(a.copy())[0][k], (x,))
                         for k in range(3)])
    np.testing.assert_allclose(jac, expected, rtol=1e-7, atol=1e-10)
    jac[...] = 0  # the caller's own arrays: writing the Jacobian leaves aux and x alone
    np.testing.assert_array_equal(aux, [0.3, -0.8, 1.1])


@pytest.mark.parametrize("source", SOURCES)
def test_elementwise_grad_has_aux(source):
    def f(xp, x):
        y = xp.tanh(x) * xp.exp(-x ** 2)
        return y, (y, x.shape[0])

    x = np.linspace(-2.0, 2.0, 5)
    g, aux = rb.elementwise_grad(functools.partial(f, np), has_aux=True, source=source)(x)
    expected = autograd.elementwise_grad(lambda x: f(anp, x)[0])(x)
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    np.testing.assert_array_equal(aux[0], f(np, x)[0])
    assert aux[1] == 5 and type(aux[0]) is np.ndarray
    assert not np.shares_memory(g, aux[0])
    (g0, g1), _ = rb.elementwise_grad(lambda a, b: (a * b, a), argnums=(0, 1), has_aux=True,
                                      source=source)(x, 2 * x)
    np.testing.assert_array_equal(g0, 2 * x)
    np.testing.assert_array_equal(g1, x)
    with pytest.raises(TypeError, match=r"has_aux=True: .* must return a pair"):
        rb.elementwise_grad(np.tanh, has_aux=True, source=source)(x)
    with pytest.raises(TypeError, match=r"has_aux=True: .* must return a pair"):
        rb.jacobian(lambda x: (x, x, x), has_aux=True, source=source)(x)

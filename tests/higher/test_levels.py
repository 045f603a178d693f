"""Nesting through trace levels: grad of grad, hessian, hvp and a gradient step inside a loss,
against JAX on the same programs written in jax.numpy (float64), for each source.

The programs are written once for a module `xp` (NumPy for rulebridge, jax.numpy for the
reference). A source whose pullbacks are not NumPy code (JAX's are jitted) offers each as a
function with a rule of its own, checked before use (tests/higher/test_levels_jax.py,
tests/rules/test_pullback_rules.py).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

jax.config.update("jax_enable_x64", True)

RTOL = 1e-8
rng = np.random.default_rng(23)
W = rng.normal(size=(4, 3))
X = rng.normal(size=(5, 3))
B = rng.normal(size=3)
A0 = rng.normal(size=(3, 3)) + 4 * np.eye(3)
x0 = np.array([0.4, -0.7, 1.1])
SOURCES = [None, "autograd", "jax"]


def tanh_loss(xp, x):
    return xp.sum(xp.tanh(W @ x) ** 2)


def logsumexp(xp, x):
    m = xp.max(x)
    return m + xp.log(xp.sum(xp.exp(x - m))) + xp.sum(x ** 3) / 7


def indexing(xp, x):
    return xp.sum(x[1:] ** 2 * x[:-1]) + x[0] * x[2] + xp.sum(x[xp.array([0, 2, 2])] ** 3)


def branches(xp, x):  # away from the kinks and ties
    return (xp.sum(xp.where(x > 0, x ** 3, xp.sin(x)))
            + xp.sum(xp.maximum(x, 0.3 * x ** 2) ** 2))


def solve_slogdet(xp, a):
    return xp.sum(xp.linalg.solve(a, B)) + xp.linalg.slogdet(a)[1] + xp.sum(xp.sin(a))


def scalar(xp, t):
    return xp.sin(t) * t ** 2 + xp.exp(0.5 * t)


PROGRAMS = {
    "tanh": (tanh_loss, x0),
    "logsumexp": (logsumexp, x0),
    "indexing": (indexing, x0),
    "branches": (branches, x0),
    "solve_slogdet": (solve_slogdet, A0),
}


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_hessian_against_jax(name, source):
    program, x = PROGRAMS[name]
    got = rb.hessian(functools.partial(program, np), source=source)(x)
    assert type(got) is np.ndarray and got.shape == x.shape + x.shape and got.flags.writeable
    close(got, jax.hessian(functools.partial(program, jnp))(x))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_hvp_against_jax(name, source):
    program, x = PROGRAMS[name]
    v = np.linspace(-1.0, 1.5, x.size).reshape(x.shape)
    got = rb.hvp(functools.partial(program, np), source=source)(x, v)
    want = jax.jvp(jax.grad(functools.partial(program, jnp)), (x,), (v,))[1]
    close(got, want)


@pytest.mark.parametrize("source", SOURCES)
def test_scalar_second_and_third_order(source):
    f = functools.partial(scalar, np)
    ref = functools.partial(scalar, jnp)
    t = 0.7
    second = rb.grad(rb.grad(f, source=source), source=source)(t)
    third = rb.grad(rb.grad(rb.grad(f, source=source), source=source), source=source)(t)
    assert type(second) is float and type(third) is float  # the argument's own type
    close(second, jax.grad(jax.grad(ref))(t))
    close(third, jax.grad(jax.grad(jax.grad(ref)))(t))
    close(rb.hessian(f, source=source)(t), jax.hessian(ref)(t))


def smooth(xp, x):
    return xp.sum(xp.sin(W @ x)) * xp.sum(x ** 2) + xp.sum(xp.exp(0.5 * x) * x[::-1])


def test_fourth_order_of_an_array_program():
    f = functools.partial(smooth, np)
    ref = functools.partial(smooth, jnp)
    d = rb.jacobian(rb.jacobian(rb.hessian(f)))(x0)
    close(d, jax.jacrev(jax.jacrev(jax.hessian(ref)))(x0))


@pytest.mark.parametrize("source", SOURCES)
def test_dict_parameters(source):
    def loss(xp, p):
        return xp.sum(xp.tanh(X @ p["w"] + p["b"]) ** 2) + p["b"] * xp.sum(p["w"] ** 2)

    params = {"w": np.array([0.3, -0.2, 0.5]), "b": 0.25}
    got = rb.hessian(functools.partial(loss, np), source=source)(params)
    want = jax.hessian(functools.partial(loss, jnp))(params)
    assert set(got) == {"w", "b"} and set(got["w"]) == {"w", "b"}
    for k1 in ("w", "b"):
        for k2 in ("w", "b"):
            close(got[k1][k2], want[k1][k2])
    v = {"w": np.array([1.0, 0.5, -2.0]), "b": 0.75}
    hv = rb.hvp(functools.partial(loss, np), source=source)(params, v)
    want_hv = jax.jvp(jax.grad(functools.partial(loss, jnp)), (params,), (v,))[1]
    close(hv["w"], want_hv["w"])
    close(hv["b"], want_hv["b"])


@pytest.mark.parametrize("source", SOURCES)
def test_argnums_and_has_aux(source):
    def f(xp, x, y):
        return xp.sum(xp.sin(x) * y ** 2) + xp.sum(x * y) ** 2, {"norm": xp.sum(x ** 2)}

    y0 = np.array([0.2, 0.9, -0.4])
    got, aux = rb.hessian(functools.partial(f, np), argnums=(0, 1), has_aux=True,
                          source=source)(x0, y0)
    want, want_aux = jax.hessian(functools.partial(f, jnp), argnums=(0, 1), has_aux=True)(x0, y0)
    for i in range(2):
        for j in range(2):
            close(got[i][j], want[i][j])
    close(aux["norm"], want_aux["norm"])
    assert type(aux["norm"]) is not rb.Traced
    v = (np.ones(3), np.array([0.5, -1.0, 2.0]))
    hv, aux2 = rb.hvp(functools.partial(f, np), argnums=(0, 1), has_aux=True,
                      source=source)(x0, y0, v)
    want_hv = jax.jvp(lambda a, b: jax.grad(functools.partial(f, jnp), argnums=(0, 1),
                                            has_aux=True)(a, b)[0], (x0, y0), v)[1]
    close(hv[0], want_hv[0])
    close(hv[1], want_hv[1])


def test_jacrev_is_jacobian():
    assert rb.jacrev is rb.jacobian


@pytest.mark.parametrize("source", SOURCES)
def test_meta_gradient(source):
    d1, d2 = X[:3], X[2:]

    def inner_loss(xp, w, data):
        return xp.sum((xp.tanh(data @ w) - 0.5) ** 2)

    def meta(xp, grad_of, w):
        step = grad_of(functools.partial(inner_loss, xp))(w, d1)
        return inner_loss(xp, w - 0.3 * step, d2)

    got = rb.grad(functools.partial(meta, np, lambda f: rb.grad(f, source=source)),
                  source=source)(x0)
    want = jax.grad(functools.partial(meta, jnp, jax.grad))(x0)
    close(got, want)


@pytest.mark.parametrize("source", SOURCES)
def test_value_and_grad_and_vjp_inside_a_gradient(source):
    def f(xp, y):
        return xp.sum(xp.sin(y) * y)

    def outer_vg(x):
        value, g = rb.value_and_grad(functools.partial(f, np), source=source)(x)
        return value * np.sum(g ** 2)

    def outer_vjp(x):
        y, pullback = rb.vjp(lambda z: np.tanh(z) * z, x, source=source)
        return np.sum(pullback(np.cos(x))[0] * y)

    def ref_vg(x):
        value, g = jax.value_and_grad(functools.partial(f, jnp))(x)
        return value * jnp.sum(g ** 2)

    def ref_vjp(x):
        y, pullback = jax.vjp(lambda z: jnp.tanh(z) * z, x)
        return jnp.sum(pullback(jnp.cos(x))[0] * y)

    close(rb.grad(outer_vg, source=source)(x0), jax.grad(ref_vg)(x0))
    close(rb.grad(outer_vjp, source=source)(x0), jax.grad(ref_vjp)(x0))


def test_inner_result_that_depends_only_on_the_outer_value():
    # d/dy of sum(x**2 * y) is x**2; its gradient in x is 2x * sum of ones
    def outer(x):
        return np.sum(rb.grad(lambda y: np.sum(x ** 2 * y))(np.ones(3)))

    close(rb.grad(outer)(x0), 2 * x0)

    def constant_inner(x):  # the inner function ignores y: its gradient is zero
        return np.sum(rb.grad(lambda y: np.sum(x ** 2))(np.ones(3))) + np.sum(x)

    close(rb.grad(constant_inner)(x0), np.ones(3))


def test_outer_source_jax_under_inner_autograd():
    # levels mix sources: the inner level's pullbacks (autograd's NumPy code) recorded by an
    # outer trace whose rules are JAX's
    def outer(x):
        return np.sum(rb.grad(functools.partial(tanh_loss, np), source="autograd")(x) ** 2)

    want = jax.grad(lambda x: jnp.sum(jax.grad(functools.partial(tanh_loss, jnp))(x) ** 2))(x0)
    close(rb.grad(outer, source="jax")(x0), want)


def test_inner_jax_source_is_differentiated_again_and_first_order_unchanged():
    # JAX's pullbacks are compiled; each is recorded as one op whose rule is the VJP of the
    # jitted pullback (tests/higher/test_levels_jax.py), and the first-order rules are as they were
    f = functools.partial(tanh_loss, np)
    close(rb.hessian(f, source="jax")(x0), jax.hessian(functools.partial(tanh_loss, jnp))(x0))
    close(rb.grad(f, source="jax")(x0), jax.grad(functools.partial(tanh_loss, jnp))(x0))


def test_in_place_write_at_the_outer_level_is_recorded():
    def outer(x):
        y = np.zeros(3)
        y[1:] = x[:2] ** 2  # a write of the outer level only
        g = rb.grad(functools.partial(tanh_loss, np))(y)
        return np.sum(g * x)

    def ref(x):
        y = jnp.zeros(3).at[1:].set(x[:2] ** 2)
        return jnp.sum(jax.grad(functools.partial(tanh_loss, jnp))(y) * x)

    close(rb.grad(outer)(x0), jax.grad(ref)(x0))


def test_caller_arrays_unchanged_and_results_owned():
    x = x0.copy()
    x.flags.writeable = False
    h = rb.hessian(functools.partial(tanh_loss, np))(x)
    hv = rb.hvp(functools.partial(tanh_loss, np))(x, np.ones(3))
    assert h.flags.writeable and hv.flags.writeable
    assert not np.shares_memory(h, x) and not np.shares_memory(hv, x)
    np.testing.assert_array_equal(x, x0)


def test_float32_keys_see_through_to_the_innermost_primal():
    x = x0.astype(np.float32)
    h = rb.hessian(functools.partial(tanh_loss, np))(x)
    assert h.dtype == np.float32
    want = jax.hessian(functools.partial(tanh_loss, jnp))(x0)
    np.testing.assert_allclose(h, want, rtol=2e-4, atol=1e-5)


def test_debug_mode_checks_each_level_at_its_plain_values():
    with rb.debug():
        got = rb.hessian(functools.partial(solve_slogdet, np))(A0)
    close(got, jax.hessian(functools.partial(solve_slogdet, jnp))(A0))


@pytest.mark.parametrize("source", SOURCES)
def test_hvp_passes_keywords_through_and_takes_v_aliasing_x(source):
    """hvp's vector travels beside f's own keywords (it is never differentiated): f's keywords
    still reach f, a negative argnums still counts f's positions, and a v that is x itself, or
    a view of it, is read, never written."""
    def f(xp, x, y, *, scale):
        return scale * xp.sum(xp.tanh(W @ x) ** 2) + xp.sum(x * y) ** 2

    y0 = np.array([0.2, 0.9, -0.4])
    want_h = jax.hessian(functools.partial(f, jnp, scale=1.5), argnums=1)(x0, y0)
    for v in (y0, y0[::-1], np.ones(3)):
        before = y0.copy()
        got = rb.hvp(functools.partial(f, np), argnums=-1, source=source)(x0, y0, v, scale=1.5)
        close(got, want_h @ np.asarray(v))
        np.testing.assert_array_equal(y0, before)

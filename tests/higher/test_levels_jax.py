"""Pullbacks as rules: second and higher derivatives with source="jax".

A JAX pullback is a jitted function: it cannot run on an enclosing level's boxes. The JAX adapter
offers it as a function with a rule of its own (`Rule.pullback_rule`): the VJP of the jitted
pullback, itself jitted and cached per key, which the engine records as ONE op on the enclosing
tape, once that second-order rule passed its check against central differences of the pullback
itself. References: jax.hessian / jax.grad of the same programs written in jax.numpy (float64).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb
from rulebridge_jax.pullback import JitPullbacks

from benchmarks.hvp import P0, V, loss  # the 200-parameter network: slices, reshape, .T

jax.config.update("jax_enable_x64", True)

RTOL = 1e-10
rng = np.random.default_rng(2323)
W = rng.normal(size=(4, 3))
A0 = rng.normal(size=(3, 3)) + 4 * np.eye(3)
B = rng.normal(size=3)
x0 = np.array([0.4, -0.7, 1.1])


def mixed(xp, x):  # elementwise ops, @, solve
    y = xp.tanh(W @ x) * xp.exp(0.3 * x[0])
    z = xp.linalg.solve(A0 + xp.outer(x, x), B + x ** 2)
    return xp.sum(y ** 2) + xp.sum(xp.sin(z) * z) + xp.sum(x ** 3) / 5


def solve_in_matrix(xp, a):
    return xp.sum(xp.linalg.solve(a, B) ** 2) + xp.sum(xp.cos(a) * a) + xp.sum(a @ a)


def scalar(xp, t):
    return xp.sin(t) * t ** 2 + xp.exp(0.5 * t) + xp.tanh(t) ** 3


PROGRAMS = {"mixed": (mixed, x0), "solve_in_matrix": (solve_in_matrix, A0)}


def close(got, want, rtol=RTOL):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=1e-12)


def recorded_sources(f, *args):
    """The sources of the ops on the outer tape of `grad(f)` differentiated once more."""
    _, tape = rb.trace(rb.grad(f, source="jax"), *args, source="jax")
    return [(op.rule.name, op.rule.source) for op in tape.ops]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_hessian_with_jax_rules_against_jax(name):
    program, x = PROGRAMS[name]
    got = rb.hessian(functools.partial(program, np), source="jax")(x)
    assert type(got) is np.ndarray and got.shape == x.shape + x.shape and got.flags.writeable
    close(got, jax.hessian(functools.partial(program, jnp))(x))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_of_grad_with_jax_rules_against_jax(name):
    program, x = PROGRAMS[name]
    f = functools.partial(program, np)
    ref = functools.partial(program, jnp)
    v = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)

    def outer(x):
        return np.sum(rb.grad(f, source="jax")(x) * v)

    close(rb.grad(outer, source="jax")(x), jax.grad(lambda x: jnp.sum(jax.grad(ref)(x) * v))(x))
    close(rb.hvp(f, source="jax")(x, v), jax.jvp(jax.grad(ref), (x,), (v,))[1])


def test_source_none_uses_jax_second_order_where_jax_was_chosen():
    f = functools.partial(mixed, np)
    before = rb.REGISTRY._order
    rb.prefer("jax", "autograd")
    try:
        got = rb.hessian(f)(x0)
    finally:
        rb.REGISTRY._order = before
        rb.REGISTRY._invalidate()
    close(got, jax.hessian(functools.partial(mixed, jnp))(x0))


def test_third_and_fourth_order_of_a_scalar_function():
    f = functools.partial(scalar, np)
    ref = functools.partial(scalar, jnp)
    t = 0.7
    d2 = rb.grad(rb.grad(f, source="jax"), source="jax")(t)
    d3 = rb.grad(rb.grad(rb.grad(f, source="jax"), source="jax"), source="jax")(t)
    d4 = rb.grad(rb.grad(rb.grad(rb.grad(f, source="jax"), source="jax"), source="jax"),
                 source="jax")(t)
    assert type(d2) is float and type(d3) is float and type(d4) is float
    close(d2, jax.grad(jax.grad(ref))(t))
    close(d3, jax.grad(jax.grad(jax.grad(ref)))(t))
    close(d4, jax.grad(jax.grad(jax.grad(jax.grad(ref))))(t))


@pytest.mark.slow
def test_third_order_of_an_array_program():
    f = functools.partial(mixed, np)
    got = rb.jacobian(rb.hessian(f, source="jax"), source="jax")(x0)
    close(got, jax.jacrev(jax.hessian(functools.partial(mixed, jnp)))(x0), rtol=1e-9)


def test_each_pullback_is_one_op_on_the_enclosing_tape():
    # the inner sweep's JAX pullbacks are recorded as ops of their own rule, one per pullback,
    # not refused and not replaced by another source's rule
    def f(x):
        return np.sum(np.sin(W @ x))

    ops = recorded_sources(f, x0)
    assert ops and all(source in ("jax", "rulebridge") for _, source in ops), ops
    pullbacks = [name for name, _ in ops if name.startswith("pullback of ")]
    assert sorted(pullbacks) == ["pullback of numpy.matmul", "pullback of numpy.sin",
                                 "pullback of numpy.sum"], ops


def test_caller_arrays_unchanged_and_results_owned():
    x = x0.copy()
    x.flags.writeable = False
    h = rb.hessian(functools.partial(mixed, np), source="jax")(x)
    assert h.flags.writeable and not np.shares_memory(h, x)
    np.testing.assert_array_equal(x, x0)


def test_float32_second_order_with_jax_rules():
    x = x0.astype(np.float32)
    h = rb.hessian(lambda x: np.sum(np.tanh(W.astype(np.float32) @ x) ** 2), source="jax")(x)
    assert h.dtype == np.float32
    want = jax.hessian(lambda x: jnp.sum(jnp.tanh(W @ x) ** 2))(x0)
    np.testing.assert_allclose(h, want, rtol=2e-4, atol=1e-5)


def _holds_box(value):
    if isinstance(value, rb.Traced):
        return True
    return type(value) in (tuple, list) and any(_holds_box(item) for item in value)


def test_a_jitted_pullback_is_never_called_on_an_enclosing_levels_boxes(monkeypatch):
    # A JAX rule declares that its pullback cannot take boxes (Rule.pullback_takes_boxes): under
    # nesting the engine asks for the rule of its pullback at once, rather than calling the
    # jitted pullback on the enclosing level's boxes, letting it raise and then asking.
    f, ref = functools.partial(loss, np), functools.partial(loss, jnp)
    hvp, hessian = rb.hvp(f, source="jax"), rb.hessian(f, source="jax")
    for _ in range(2):  # warm: every key seen and checked
        hvp(P0, V)
    on_boxes, calls = [], []
    real = JitPullbacks.__call__

    def counted(self, args, kwargs, cotangent, argnums):
        calls.append(self.name)
        if _holds_box(args) or _holds_box(tuple(kwargs.values())) or _holds_box(cotangent):
            on_boxes.append(self.name)
        return real(self, args, kwargs, cotangent, argnums)

    monkeypatch.setattr(JitPullbacks, "__call__", counted)
    got_hvp, got_hessian = hvp(P0, V), hessian(P0)
    assert calls and on_boxes == [], on_boxes
    close(got_hvp, jax.jvp(jax.grad(ref), (P0,), (V,))[1], rtol=1e-8)
    close(got_hessian, jax.hessian(ref)(P0), rtol=1e-8)
    # a vjp's pullback called later on the cotangent boxes of a differentiation around it
    _, pullback = rb.vjp(lambda x: np.tanh(W @ x), x0, source="jax")
    _, jax_pullback = jax.vjp(lambda x: jnp.tanh(W @ x), x0)
    c = np.array([1.0, -2.0, 0.5, 0.25])
    got = rb.grad(lambda c: np.sum(pullback(c)[0] ** 2), source="jax")(c)
    assert on_boxes == [], on_boxes
    close(got, jax.grad(lambda c: jnp.sum(jax_pullback(c)[0] ** 2))(c), rtol=1e-8)


def test_pullback_rules_cached_per_configuration_not_stretched_to_another():
    # The compiled pullback rules and their second-order verdicts are kept per configuration
    # (arity, differentiated arguments, used outputs, signature): an hvp at one shape, dtype or
    # set of traced arguments must not hand its rule or verdict to the next.
    def f(xp, x, c):
        return xp.sum(xp.tanh(x * c) ** 2) + xp.sum(xp.sin(x) * 2.0)

    def hvp_ref(x, c, v, argnums):
        g = jax.grad(functools.partial(f, jnp), argnums)
        return jax.jvp(lambda *a: g(*a), (x, c), v)[1]

    for n in (3, 5):
        x, c = rng.normal(size=n), rng.normal(size=n)
        vx, vc = rng.normal(size=n), rng.normal(size=n)
        both = rb.hvp(functools.partial(f, np), argnums=(0, 1), source="jax")(x, c, (vx, vc))
        for got, want in zip(both, hvp_ref(x, c, (vx, vc), (0, 1))):
            close(got, want, rtol=1e-9)
        only_x = rb.hvp(functools.partial(f, np), source="jax")(x, c, vx)
        close(only_x, hvp_ref(x, c, (vx, np.zeros(n)), 0), rtol=1e-9)
    x32, c32 = x.astype(np.float32), c.astype(np.float32)
    got = rb.hvp(functools.partial(f, np), source="jax")(x32, c32, vx.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, hvp_ref(x, c, (vx, np.zeros(5)), 0), rtol=2e-4, atol=1e-5)


def test_second_hvp_at_another_key_is_decided_at_that_key():
    # A settled second-order verdict is kept for its key alone: the next key asks again
    # (shipped matrix, else a check), never reusing the verdict of the one before.
    from rulebridge.rules import selection

    asked = []
    real = selection._status

    def counting(registry, mode, rule, text, memo, run):
        if mode == selection.GRADGRAD:
            asked.append(text)
        return real(registry, mode, rule, text, memo, run)

    selection.forget(selection.GRADGRAD)
    f = lambda x: np.sum(np.cos(x) * x)  # noqa: E731
    hvp = rb.hvp(f, source="jax")
    try:
        selection._status = counting
        hvp(x0, B)
        first = list(asked)
        hvp(x0 + 0.5, B)  # the same key: settled, nothing asked
        assert asked == first and first
        hvp(np.linspace(0.1, 1.0, 6).reshape(2, 3), np.ones((2, 3)))  # another key: asked
        assert len(asked) > len(first)
        assert set(asked[len(first):]).isdisjoint(first), asked
        before = len(asked)
        hvp(x0.astype(np.float32), B.astype(np.float32))  # and another
        assert asked[before:] and all("float32" in text for text in asked[before:]), asked
    finally:
        selection._status = real
    want = jax.jvp(jax.grad(lambda x: jnp.sum(jnp.cos(x) * x)), (x0,), (B,))[1]
    close(hvp(x0, B), want)

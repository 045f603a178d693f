"""`rulebridge_jax.jax_function` of programs with decisions and of jacobians: the JAX function
handed out answers as the eager call on new inputs (to 1e-12 relative in float64), under
jax.jit and jax.vmap too, and a value that decides otherwise raises JitError (through JAX's
error of the call) instead of returning the recorded path's numbers."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from rulebridge_jax.exported import jax_function  # noqa: E402

from tests.jit.test_jit_jax import assert_close  # noqa: E402


def branch(x):
    if np.sum(x) > 0:
        return np.sum(np.sin(x) * x)
    return np.sum(x ** 3)


def masked(x):
    return np.sum(np.where(x > 0, np.tanh(x), 0.0) ** 2)


def loop(x):  # a loop count from a traced value
    y = x
    for _ in range(int(np.sum(x > 0))):
        y = np.sin(y)
    return np.sum(y)


def guard_error(call):
    with pytest.raises(Exception) as info:
        jax.block_until_ready(call())
    message = str(info.value)
    assert "JitError" in message and "decision" in message and "step(*args)" in message, message
    return message


@pytest.mark.parametrize("f", [branch, masked, loop])
def test_a_program_with_decisions_is_handed_out_and_guarded(f):
    rng = np.random.default_rng(0)
    x = np.abs(rng.normal(size=4)) + 0.1
    step = rb.jit(rb.grad(f), backend="jax")
    g = jax_function(step, x)
    with jax.enable_x64(True):
        for _ in range(3):  # new inputs on the recorded path: the eager gradient
            x2 = np.abs(rng.normal(size=4)) + 0.1
            assert_close(np.asarray(jax.jit(g)(jnp.asarray(x2))), rb.grad(f)(x2))
        ws = np.abs(rng.normal(size=(50, 4))) + 0.1
        got = np.asarray(jax.vmap(g)(jnp.asarray(ws)))
        for k in (0, 49):
            assert_close(got[k], rb.grad(f)(ws[k]))
        other = -x  # every decision above goes the other way here
        guard_error(lambda: g(jnp.asarray(other)))
        ws[7] = other
        guard_error(lambda: jax.vmap(g)(jnp.asarray(ws)))  # one example off the path
    assert_close(step(other), rb.grad(f)(other))  # the jitted function records that path


def two_outputs(p, x):
    y = np.tanh(p["w"] * x) + p["b"]
    return {"y": y, "s": np.sum(np.sin(y)), "c": np.ones(2)}


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_a_jacobian_is_handed_out_in_the_eager_structure(argnums):
    rng = np.random.default_rng(1)
    p = {"w": rng.normal(size=3), "b": rng.normal(size=3)}
    x = rng.normal(size=3)
    jac = rb.jit(rb.jacobian(two_outputs, argnums), backend="jax")
    J = jax_function(jac, p, x)
    with jax.enable_x64(True):
        for _ in range(2):
            p2 = {"w": rng.normal(size=3), "b": rng.normal(size=3)}
            x2 = rng.normal(size=3)
            got = jax.tree_util.tree_map(np.asarray, jax.jit(J)(p2, x2))
            assert_close(got, rb.jacobian(two_outputs, argnums)(p2, x2))
        ps = {"w": rng.normal(size=(5, 3)), "b": rng.normal(size=(5, 3))}
        batched = jax.vmap(J, in_axes=(0, None))(ps, x)
        row = jax.tree_util.tree_map(lambda a: np.asarray(a[3]), batched)
        assert_close(row, rb.jacobian(two_outputs, argnums)(
            {"w": ps["w"][3], "b": ps["b"][3]}, x))


def test_a_jacobian_with_a_decision():
    def f(x):
        return np.sin(x) * 2.0 if np.max(x) > 0 else np.cos(x)

    x = np.array([0.3, -0.2, 0.5])
    J = jax_function(rb.jit(rb.jacobian(f), backend="jax"), x)
    with jax.enable_x64(True):
        assert_close(np.asarray(J(jnp.asarray(x + 0.1))), rb.jacobian(f)(x + 0.1))
        guard_error(lambda: J(jnp.asarray(-np.abs(x))))

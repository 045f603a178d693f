"""In-place writes inside a nested differentiation (rulebridge/writes/nested.py): recorded as
copies one level down, so hessian, hvp, grad of grad and jvp of grad of programs that fill
buffers agree with JAX's derivatives of the same programs written with `.at[].set`; what a copy
cannot mean (a write into an argument or a view, a view read after its base was written) is
refused with MutationError, never answered wrong."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

jax.config.update("jax_enable_x64", True)

SOURCES = [None, "autograd", "jax"]
x0 = np.array([0.4, -0.7, 1.1])


def buffer_np(x):
    y = np.zeros(3)
    y[0] = x[0] * x[1]
    y[1:] = np.sin(x[1:])
    return np.sum(y ** 2)


def buffer_jnp(x):
    y = jnp.zeros(3).at[0].set(x[0] * x[1]).at[1:].set(jnp.sin(x[1:]))
    return jnp.sum(y ** 2)


def augmented_np(x):
    y = x.copy()
    y += np.sin(y)
    y *= y
    y[::2] = np.exp(y[::2])
    return np.sum(y)


def augmented_jnp(x):
    y = x + jnp.sin(x)
    y = y * y
    return jnp.sum(y.at[::2].set(jnp.exp(y[::2])))


def rows_np(x):
    y = np.ones((2, 3))
    for i in range(2):
        y[i] = x * (i + 1)
    y[:, 0] = y[:, 0] ** 3
    return np.sum(np.tanh(y))


def rows_jnp(x):
    y = jnp.stack([x, 2 * x])
    return jnp.sum(jnp.tanh(y.at[:, 0].set(y[:, 0] ** 3)))


def scattered_np(x):
    y = np.zeros(4)
    y[[0, 2]] = x[:2] ** 2
    y[3] = x[0] * x[1] * x[2]
    y.fill(0.5) if x[0] > 10 else None  # a branch not taken: no write
    return np.sum(y * y) + np.sum(np.cos(y[1:]))


def scattered_jnp(x):
    y = jnp.zeros(4).at[jnp.array([0, 2])].set(x[:2] ** 2).at[3].set(x[0] * x[1] * x[2])
    return jnp.sum(y * y) + jnp.sum(jnp.cos(y[1:]))


def broadcast_np(x):
    y = np.zeros((2, 3))
    y[:] = x  # one row broadcast to both
    y[1, 1:] = x[0]  # a scalar broadcast to a row's part
    return np.sum(np.sin(y) * y)


def broadcast_jnp(x):
    y = jnp.broadcast_to(x, (2, 3)).at[1, 1:].set(x[0])
    return jnp.sum(jnp.sin(y) * y)


def subscript_np(x):  # x[index] op= v: Python stores the result back into x[index]
    y = np.zeros((2, 3))
    y[0] = x
    y[1] = x ** 2
    y[:, 1:] += np.sin(x[1:])
    y[1, :2] *= x[0]
    y[...] -= 0.5
    return np.sum(y ** 3)


def subscript_jnp(x):
    y = jnp.stack([x, x ** 2]).at[:, 1:].add(jnp.sin(x[1:]))
    return jnp.sum((y.at[1, :2].multiply(x[0]) - 0.5) ** 3)


PROGRAMS = [(buffer_np, buffer_jnp), (augmented_np, augmented_jnp), (rows_np, rows_jnp),
            (scattered_np, scattered_jnp), (broadcast_np, broadcast_jnp),
            (subscript_np, subscript_jnp)]
IDS = ["buffer", "augmented", "rows", "scattered", "broadcast", "subscript"]


def close(actual, expected, rtol=1e-8):
    expected = np.asarray(expected)
    assert type(actual) is np.ndarray and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_hessian_of_a_program_that_writes_matches_jax(program, source):
    f_np, f_jnp = program
    x = x0.copy()
    close(rb.hessian(f_np, source=source)(x), jax.hessian(f_jnp)(jnp.asarray(x0)))
    np.testing.assert_array_equal(x, x0)  # the caller's array is not written


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_hvp_grad_of_grad_and_jvp_of_grad_agree(program):
    f_np, f_jnp = program
    v = np.array([0.3, -1.0, 2.0])
    expected = np.asarray(jax.hessian(f_jnp)(jnp.asarray(x0))) @ v
    close(rb.hvp(f_np)(x0, v), expected)
    close(rb.grad(lambda x: np.sum(rb.grad(f_np)(x) * v))(x0), expected)
    close(rb.jvp(rb.grad(f_np), [x0], [v])[1], expected)


def test_third_order_through_writes():
    def f_np(x):
        y = np.zeros(3)
        y[:] = x ** 3
        y[1] = y[1] * x[0]
        return np.sum(y)

    def f_jnp(x):
        return jnp.sum(jnp.zeros(3).at[:].set(x ** 3).at[1].set(x[1] ** 3 * x[0]))

    close(rb.jacobian(rb.hessian(f_np))(x0), jax.jacfwd(jax.hessian(f_jnp))(jnp.asarray(x0)))


def test_a_meta_gradient_whose_inner_step_fills_a_buffer():
    def inner_np(w):
        r = np.zeros(3)
        r[:] = np.tanh(w) - 0.5
        return np.sum(r ** 2)

    def meta_np(w):
        step = w - 0.1 * rb.grad(inner_np)(w)
        return inner_np(step)

    def inner_jnp(w):
        return jnp.sum((jnp.tanh(w) - 0.5) ** 2)

    def meta_jnp(w):
        return inner_jnp(w - 0.1 * jax.grad(inner_jnp)(w))

    close(rb.grad(meta_np)(x0), jax.grad(meta_jnp)(jnp.asarray(x0)))


def test_a_write_into_an_argument_is_refused_and_the_caller_s_array_kept():
    def f(x):
        x[0] = x[0] ** 2
        return np.sum(x ** 3)

    x = x0.copy()
    with pytest.raises(rb.MutationError, match=r"into an argument inside a nested[\s\S]*x\.copy"):
        rb.hessian(f)(x)
    np.testing.assert_array_equal(x, x0)
    rb.grad(f)(x)  # differentiated once, the write is recorded, as NumPy writes
    assert x[0] == x0[0] ** 2


def test_a_write_into_a_view_is_refused():
    def f(x):
        y = np.zeros(3)
        view = y[1:]
        view[0] = x[0]
        return np.sum(y * x)

    def g(x):
        y = np.zeros(3)
        view = y[1:]
        view += x[1:]  # not y[1:] += ...: the view is a name, and y would not see the copy
        return np.sum(y * x)

    for program in (f, g):
        with pytest.raises(rb.MutationError, match="into a view inside a nested"):
            rb.hessian(program)(x0)


def test_a_view_read_after_its_base_was_written_is_refused():
    def f(x):
        y = np.zeros(3)
        tail = y[1:]  # taken before the write: it shares y's memory
        y[1] = x[1] ** 2
        return np.sum(tail * x[1:])

    # NumPy's tail sees the write; a copy would not, so rulebridge refuses the read
    with pytest.raises(rb.MutationError, match="overwritten later"):
        rb.hessian(f)(x0)


def test_an_inner_value_written_into_an_outer_buffer_is_refused():
    def outer(x):
        buf = np.zeros(3)

        def inner(w):
            buf[0] = np.sum(w * x)  # the inner level's value, into the outer level's array
            return np.sum(w ** 2)

        return np.sum(rb.grad(inner)(x)) + buf[0]

    with pytest.raises(rb.MutationError, match="inner differentiation written into an array"):
        rb.grad(outer)(x0)


@pytest.mark.parametrize("program", PROGRAMS[:3], ids=IDS[:3])
def test_jit_of_a_hessian_through_writes_replays_the_eager_call(program):
    jitted = rb.jit(rb.hessian(program[0]))
    for k in range(3):
        x = x0 + 0.1 * k
        np.testing.assert_array_equal(jitted(x), rb.hessian(program[0])(x))
    assert jitted.replays == 2 and jitted.eager_calls == 0

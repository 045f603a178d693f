"""`np.asarray(x)` / `np.array(x)` of a traced value in the differentiated code's own call
(rulebridge/writes/arrays.py, issue 25): differentiable as in autograd.numpy and jax.numpy,
checked against float64 central differences of the plain NumPy program, jax.grad and
jax.hessian of the jnp program; NumPy's copy, dtype, ndmin and error behaviour kept; a
library's own np.asarray still refuses a traced value."""

import numpy as np
import pytest
import scipy.linalg

import rulebridge as rb
from rulebridge import TracingError

from tests.writes.test_plain_buffers import X, assert_gradient, jax_grad, source  # noqa: F401


def test_asarray_is_the_traced_value_itself(source):
    seen = {}

    def f(x):
        y = np.asarray(x)
        seen["same"] = y is x and np.asarray(x, dtype=np.float64) is x
        return np.sum(np.sin(y) * y)

    assert_gradient(f, [X], source)
    assert seen["same"]


def test_a_write_into_np_array_of_x_leaves_x_alone(source):
    def f(x):
        y = np.array(x)
        y[0] = 5.0  # into the copy: x keeps its value, so sum(x ** 2) still depends on x[0]
        return np.sum(y * x) + np.sum(x ** 2)

    assert_gradient(f, [X], source)
    got = rb.grad(f, source=source)(X.copy())
    np.testing.assert_allclose(got[0], 5.0 + 2 * X[0], rtol=1e-12)


def test_copy_false_is_the_traced_value_and_refuses_a_needed_copy_as_numpy_does(source):
    seen = {}

    def f(x):
        seen["same"] = np.array(x, copy=False) is x and np.asarray(x, copy=None) is x
        return np.sum(np.array(x, copy=False) ** 3)

    assert_gradient(f, [X], source)
    assert seen["same"]
    with pytest.raises(ValueError, match="copy"):
        np.array(X, dtype=np.float32, copy=False)  # NumPy's own behaviour, the same below
    with pytest.raises(ValueError, match="copy"):
        rb.grad(lambda x: np.sum(np.array(x, dtype=np.float32, copy=False)),
                source=source)(X.copy())
    with pytest.raises(ValueError, match="copy"):
        rb.grad(lambda x: np.sum(np.asarray([x[0], x[1]], copy=False)), source=source)(X.copy())


@pytest.mark.parametrize("convert", ["asarray", "array"])
def test_another_dtype_is_astype(source, convert):
    jnp = pytest.importorskip("jax.numpy")
    # each spelled out: getattr(np, name) is not followed (rulebridge/writes/follow.py)
    f = {"asarray": lambda x: np.sum(np.asarray(x, dtype=np.float32) ** 2) * x[0],
         "array": lambda x: np.sum(np.array(x, np.float32) ** 2) * x[0]}[convert]
    f_jnp = lambda x: jnp.sum(getattr(jnp, convert)(x, dtype=jnp.float32) ** 2) * x[0]
    np.testing.assert_allclose(rb.grad(f, source=source)(X.copy()), jax_grad(f_jnp, X),
                               rtol=1e-6)


def test_ndmin_order_and_subok(source):
    shapes = {}

    def f(x):
        a = np.array(x, ndmin=3)
        b = np.array(x.reshape(2, 2), order="F", subok=True)
        c = np.asarray(x, order="C")
        shapes["a"] = np.shape(a)
        return np.sum(a @ x) + np.sum(b @ b) + np.sum(np.cos(c))

    assert_gradient(f, [X], source)
    assert shapes["a"] == (1, 1, 4)


def test_a_list_of_traced_values_with_keywords(source):
    shapes = {}

    def f(x):
        m = np.array([x[0], x[1] * x[2]], ndmin=2)
        n = np.array([[x[3], 1.0]], dtype=np.float64, ndmin=3, order="F")
        shapes["m"], shapes["n"] = np.shape(m), np.shape(n)
        return np.sum(m * m) * x[2] + np.sum(np.sin(n))

    assert_gradient(f, [X], source)
    assert shapes == {"m": (1, 2), "n": (1, 1, 2)}


def test_append_of_lists_holding_traced_values(source):
    def f(x):
        m = np.append([[1.0, 2.0]], [[x[0], x[1] * x[3]]], axis=0)
        return np.sum(m ** 2) + np.sum(np.append(x, [x[2], 3.0]) ** 3)

    assert_gradient(f, [X], source)


def test_a_librarys_own_asarray_still_refuses(source):
    def f(x):
        return np.sum(scipy.linalg.expm(np.reshape(x, (2, 2))))  # converts with np.asarray

    with pytest.raises(TracingError, match="cut the gradient"):
        rb.grad(f, source=source)(X.copy())


def test_another_librarys_like_is_refused_and_a_box_like_is_the_box(source):
    class Other:
        def __array_function__(self, func, types, args, kwargs):
            return "other"

    with pytest.raises(TracingError, match="like="):
        rb.grad(lambda x: np.sum(np.asarray(x, like=Other())), source=source)(X.copy())
    assert_gradient(lambda x: np.sum(np.array(x, like=x) * x), [X], source)


def test_hessian_of_array_and_asarray(source):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)

    def f(x):
        y = np.array(x, ndmin=2)
        y[0, 1] = 0.5
        m = np.array([x[0] * x[1], x[2]], ndmin=2)
        m[0, 1] = m[0, 0] * x[3]
        return np.sum(np.sin(np.asarray(x)) * y) + np.sum(m ** 3)

    def f_jnp(x):
        y = jnp.array(x, ndmin=2).at[0, 1].set(0.5)
        m = jnp.array([x[0] * x[1], x[2]], ndmin=2)
        m = m.at[0, 1].set(m[0, 0] * x[3])
        return jnp.sum(jnp.sin(jnp.asarray(x)) * y) + jnp.sum(m ** 3)

    got = rb.hessian(f, source=source)(X.copy())
    np.testing.assert_allclose(got, np.asarray(jax.hessian(f_jnp)(X)), rtol=1e-10, atol=1e-12)


def test_a_jit_replay_of_array_and_asarray(source):
    def f(x):
        y = np.array(x, ndmin=2)
        y[0, 0] = 1.0
        return np.sum(np.asarray(x) * y) + np.sum(np.array([x[0], x[1]], ndmin=2) ** 2)

    step = rb.jit(rb.grad(f, source=source))
    for x in (X, X + 1.0, X * 2.0):
        np.testing.assert_allclose(step(x.copy()), [1 + 2 * x[0], 4 * x[1], 2 * x[2], 2 * x[3]],
                                   rtol=1e-12)

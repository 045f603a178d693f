"""Writes through zero-size views of a traced argument (`x[0, 1:] += 0.5` on a (1, 1) array), and
writes into arguments with a zero-length dimension. A zero-size array shares no memory with
anything as NumPy reports it, so the engine must recognise it as the argument's from how it was
made: such programs run as NumPy runs them (the write writes nothing) and their gradient is the
one central differences give, never a read-only error NumPy would not raise."""

import numpy as np
import pytest

import rulebridge as rb
from tests.support.numerical import central_difference


def _alias_then_empty_slice(x):
    v2 = x
    v2[0, 1:] += 0.5
    return np.sum(np.sin(x))


def _empty_column_view(x):
    v = x[:, x.shape[1]:]
    v += 0.5
    v[...] = 3.0
    v *= x[:, :0]
    return np.sum(x ** 2)


def _empty_views_of_views(x):
    w = x.T[x.shape[1]:]
    w *= 2.0
    flat = x.reshape(-1)[x.size:]
    flat[...] = 1.0
    np.sin(w, out=w)
    np.multiply(flat, 2.0, out=flat)
    x[1:1].fill(3.0)
    return np.sum(np.tanh(x) * x)


def _traced_value_into_empty_view(x):
    v = x[0, 1:]
    v[...] = np.sin(x)[0, 1:]
    x[0] = 2.0 * x[0]  # then the parent itself: the empty view is never stale
    return np.sum(np.cos(x)) + np.sum(v)


def _empty_write_between_reads(x):
    s = np.sum(x * x)
    x[:, :0] = 7.0
    x[:0] += 1.0
    return s + np.sum(np.exp(x))


PROGRAMS = [_alias_then_empty_slice, _empty_column_view, _empty_views_of_views,
            _traced_value_into_empty_view, _empty_write_between_reads]
SHAPES = [(1, 1), (2, 3), (3, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.strip("_"))
def test_write_through_empty_view_matches_central_differences(program, shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.normal(size=shape)
    expected_after = x.copy()
    program(expected_after)  # what NumPy leaves in the caller's array
    expected = central_difference(program, (x,))
    got = rb.grad(program)(x)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(x, expected_after)


def _writes_into_empty_argument(x, y):
    x[...] = 1.0
    x += np.sum(y)
    x[1:] *= 2.0
    y[0] = y[0] * 3.0
    return np.sum(np.sin(y)) + np.sum(x * x)


@pytest.mark.parametrize("empty", [(0,), (0, 3), (3, 0), (2, 0, 2)], ids=str)
def test_argument_without_elements_is_written_and_differentiated(empty):
    x = np.zeros(empty)
    y = np.array([0.4, -1.1, 2.3])
    gx, gy = rb.grad(_writes_into_empty_argument, argnums=(0, 1))(x, y.copy())
    assert gx.shape == empty and gx.dtype == np.float64
    np.testing.assert_allclose(gy, central_difference(_writes_into_empty_argument, (x, y), 1),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_empty_view_write_on_each_source(source):
    x = np.array([[0.7]])
    expected = central_difference(_alias_then_empty_slice, (x,))
    got = rb.grad(_alias_then_empty_slice, source=source)(x.copy())
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def test_read_only_callers_array_is_refused_as_numpy_refuses():
    """NumPy refuses a write into a read-only array even when it writes no element."""
    x = np.array([[0.7, 0.2]])
    x.flags.writeable = False

    def f(a):
        a[:, 2:] += 1.0
        return np.sum(a)

    with pytest.raises(ValueError, match="read-only"):
        f(x)
    with pytest.raises(ValueError, match="read-only"):
        rb.grad(f)(x)

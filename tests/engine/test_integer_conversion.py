"""A traced value converted to integers or booleans by NumPy (`np.int64(x)`,
`np.array(x, dtype=int)`: NumPy calls the box's `__array__` with that dtype) carries no
gradient, as `x.astype(int)` does: the conversion is answered like `astype` (a value the tape
keeps as a decision), not refused. autograd's test_cast_to_int. Conversions to a floating
dtype still raise: they would cut a gradient."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb
from tests.support.numerical import central_difference


def _glued(W):
    # autograd's test_numpy.py::test_cast_to_int: the last column holds indices
    new_W = W[:, :-1]
    new_inds = np.int64(W[:, -1])
    assert new_inds.dtype == np.int64
    return new_W[new_inds].sum()


def _expected(W):
    """Central differences in the columns the result reads, the index column held fixed (a
    step of it would move an index); the index column's gradient is zero."""
    inds = W[:, -1].astype(np.int64)
    expected = np.zeros_like(W)
    expected[:, :-1] = central_difference(lambda A: A[inds].sum(), (W[:, :-1].copy(),))
    return expected


def _inputs():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((5, 4))
    W[:, -1] = [0, 2, 1, 4, 2]
    return W


def test_np_int64_of_a_box_indexes_and_the_gradient_matches_finite_differences():
    W = _inputs()
    gradient = rb.grad(_glued)(W)
    expected = _expected(W)
    np.testing.assert_allclose(gradient, expected, atol=1e-7)
    assert np.all(gradient[:, -1] == 0)  # the index column carries no gradient


def test_np_array_with_a_bool_dtype_of_a_box_is_a_value():
    def f(x):
        mask = np.array(x > 0.5, dtype=bool) | np.array(x, dtype=bool)
        return np.sum(np.where(mask, x ** 2, 0.0))

    x = np.array([-1.0, 0.0, 0.3, 0.7, 2.0])
    expected = central_difference(
        lambda v: np.sum(np.where((v > 0.5) | (v != 0), v ** 2, 0.0)), (x,))
    np.testing.assert_allclose(rb.grad(f)(x), expected, atol=1e-7)


def test_a_replay_with_other_integers_is_not_the_recorded_path():
    W = _inputs()
    f = rb.grad(_glued)
    other = W.copy()
    other[:, -1] = [1, 1, 1, 1, 1]
    expected = _expected(other)
    np.testing.assert_allclose(f(W), _expected(W), atol=1e-7)
    np.testing.assert_allclose(f(other), expected, atol=1e-7)


def test_a_float_conversion_is_differentiable_and_a_librarys_still_raises():
    # the user's own np.array(x, dtype=float) is a recorded astype (rulebridge/writes/arrays.py)
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(
        rb.grad(lambda v: np.sum(np.sin(np.array(v, dtype=np.float64))))(x), np.cos(x),
        rtol=1e-14)
    asarray = np.asarray  # a name bound before the trace: a library's kind of call
    with pytest.raises(rb.TracingError, match="converted a traced value"):
        rb.grad(lambda v: np.sum(asarray(v, dtype=np.float64)))(x)

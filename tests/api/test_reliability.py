"""NaN and inf inputs propagate as NumPy would: values are NumPy's own, gradients are what the
rule's source computes on the same inputs where the value is a number, NaN where it is NaN (it
has no derivative: tests/api/test_undefined_at_nan.py), and the engine itself never raises on
them."""

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import rulebridge as rb

NAN, INF = np.nan, np.inf
SPECIAL = {
    "nan": np.array([0.5, NAN, -1.0, 2.0]),
    "inf": np.array([0.5, INF, -1.0, 2.0]),
    "-inf": np.array([0.5, -INF, -1.0, 2.0]),
    "mixed": np.array([NAN, INF, -INF, 0.0]),
    "all nan": np.full(4, NAN),
}
# The same program written twice: with NumPy (for rulebridge) and autograd.numpy (the reference
# the rules come from). `m` is the module.
PROGRAMS = {
    "elementwise": lambda m, x: m.sum(m.sin(x) * m.exp(-x * x) + m.tanh(x)),
    "log and sqrt": lambda m, x: m.sum(m.log(m.abs(x) + 1.0) + m.sqrt(x * x + 1.0)),
    # (np.prod is left out: rulebridge differentiates it exactly at zeros, autograd's VJP
    # divides by the input, so their NaN patterns differ by design; tests/fuzz/FINDINGS.md #6.)
    "products": lambda m, x: x[0] * x[1] + m.dot(x, x[::-1]),
    "reductions": lambda m, x: m.max(x) + m.mean(x) + m.std(x),
    "division": lambda m, x: m.sum(1.0 / (x * x + 1.0)),
    "indexing": lambda m, x: m.sum(x[[0, 0, 3]] * 2.0) + x[1] * x[2],
    "where": lambda m, x: m.sum(m.where(x > 0, x, 0.5 * x)),
    "branch": lambda m, x: m.sum(x ** 2) if x[1] > 0 else m.sum(m.cos(x)),
    "matmul": lambda m, x: m.sum(m.reshape(x, (2, 2)) @ m.reshape(x, (2, 2)).T),
}


@pytest.mark.parametrize("inputs", sorted(SPECIAL))
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_special_values_propagate_like_the_source(program, inputs):
    f = PROGRAMS[program]
    x = SPECIAL[inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's business, not ours
        value, gradient = rb.value_and_grad(lambda x: f(np, x), source="autograd")(x)
        expected_value = f(np, x)
        expected_gradient = autograd.grad(lambda x: f(anp, x))(x)
    np.testing.assert_array_equal(value, expected_value)
    if np.isnan(expected_value):  # every program here reads every entry of x
        assert np.isnan(gradient).all(), gradient
    else:
        np.testing.assert_array_equal(gradient, expected_gradient)  # NaN where autograd has NaN


@pytest.mark.parametrize("inputs", sorted(SPECIAL))
def test_engine_never_raises_on_special_values_even_when_numpy_warns(inputs):
    x = SPECIAL[inputs]
    f = lambda x: np.sum(np.log(x)) + np.sum(x / x) + np.sum(np.sqrt(x) * x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value, gradient = rb.value_and_grad(f)(x)
        assert np.array_equal(value, f(x), equal_nan=True)
    assert gradient.shape == x.shape and gradient.dtype == x.dtype


def test_numpys_own_floating_point_errors_stay_numpys():
    # With np.errstate(all="raise") NumPy raises FloatingPointError from inside the forward: the
    # same error the plain program raises, not one of rulebridge's.
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(2))
        with pytest.raises(FloatingPointError):
            rb.grad(lambda x: np.sum(np.log(x)))(np.zeros(2))


def test_nan_cotangent_seed_in_vjp_propagates():
    y, pullback = rb.vjp(lambda x: np.sin(x) * 2.0, np.array([0.0, 1.0]))
    (g,) = pullback(np.array([NAN, 1.0]))
    assert np.isnan(g[0]) and g[1] == 2.0 * np.cos(1.0)

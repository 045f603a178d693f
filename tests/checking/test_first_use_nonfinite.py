"""A first use at inputs that are not finite (issue 22): finite differences cannot decide there,
so the call is no verdict, and the rule is never used unverified because of it. The rule is
checked at finite stand-ins of those inputs (each NaN or inf entry replaced by a finite value of
its argument): a pass there verifies the key, and the call returns the rule's answer at the
real inputs (NaN where NumPy's function propagates NaN); a fail there is a conclusive
disagreement; anything else refuses the call. At finite inputs where NumPy's own value is not
finite (log at 0), no derivative exists: the call is refused and the next inputs are checked.
Each test uses a key (dtype, ndim) no other test and no shipped status covers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rulebridge as rb


def _shaped(values, ndim: int, dtype=np.float64) -> np.ndarray:
    return np.array(values, dtype=dtype).reshape((1,) * (ndim - 1) + (-1,))


@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
def test_a_wrong_rule_first_used_at_a_non_finite_input_is_refused_not_used(flipped, special):
    ndim = {"nan": 3, "inf": 4, "-inf": 5}[repr(float(special)).strip("'")]
    x = _shaped([0.3, special, 0.5, 1.2], ndim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(rb.UnverifiedRuleError, match="sign-flipped-sin: fail"):
            rb.vjp(np.sin, x, source=flipped)  # failed at finite stand-ins: a verdict
        for _ in range(3):  # never used unverified, then "from now on"
            with pytest.raises(rb.NoRuleError, match="sign-flipped-sin: its rule failed"):
                rb.vjp(np.sin, x, source=flipped)
    with pytest.raises(rb.NoRuleError, match="sign-flipped-sin: its rule failed"):
        rb.vjp(np.sin, np.ones_like(x), source=flipped)


def test_a_right_rule_first_used_at_nan_propagates_it_and_is_verified():
    x = _shaped([0.3, np.nan, 0.5, -1.2], 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        g = rb.grad(lambda v: np.sum(np.sin(v)), source="autograd")(x)
    assert np.isnan(g).all()  # the sum is NaN: it has no derivative (test_undefined_at_nan.py)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        (y, pullback) = rb.vjp(np.sin, x, source="autograd")  # each output its own
        (g,) = pullback(np.ones_like(x))
    np.testing.assert_array_equal(np.isnan(g), np.isnan(x))
    np.testing.assert_allclose(g[~np.isnan(x)], np.cos(x[~np.isnan(x)]), rtol=1e-12)
    rule = rb.rule_for(np.sin, rb.signature_of((x,)), "autograd")
    assert rule.status == "pass"


def test_a_right_rule_first_used_where_every_input_is_nan_gives_nan():
    x = _shaped([np.nan, np.nan], 7, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        g = rb.grad(lambda v: np.sum(np.tanh(v)), source="autograd")(x)
    assert g.dtype == np.float32 and np.all(np.isnan(g))


def test_finite_inputs_where_numpys_value_is_not_finite_are_refused_then_checked_again():
    bad = _shaped([0.0, 2.0], 8)  # log(0) = -inf: no derivative at the edge of the domain
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(rb.UnverifiedRuleError, match="could not be checked"):
            rb.grad(lambda v: np.sum(np.log(v)), source="autograd")(bad)
        good = _shaped([0.5, 2.0], 8)
        g = rb.grad(lambda v: np.sum(np.log(v)), source="autograd")(good)
    np.testing.assert_allclose(g, 1.0 / good, rtol=1e-12)

"""Where the check's two step sizes disagree, finite differences try again (issue 22, section 4:
"cannot decide here" is decided wherever a better scheme can decide): a direction scaled to each
element's magnitude, a ladder of steps and Richardson extrapolation across it with its own error
estimate (rulebridge/checking/refine.py). A pass needs the rule within the tolerance beyond that
error, a failure the rule beyond it beyond that error; anything else stays undecided."""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

from tests.support.preferred import preferred

jax.config.update("jax_enable_x64", True)

# The divide inside tanh's VJP under a Hessian: g / cosh(W x)**2, the denominators from 1.0 to
# 110, where one step for every element (1e-3 of the largest) is a tenth of the smallest.
G = np.array([1.75738439, -0.25854517, -0.39475064, 1.99086819])
C = np.array([4.38788886, 1.01699542, 1.04053619, 109.75787072])


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_the_divide_inside_tanhs_hessian_is_decided(source):
    result = rb.check_rule(np.divide, G, C, source=source)
    assert result.status == "pass", result


class _Scaled(rb.Adapter):
    """np.divide and np.sin, with the cotangents of their last argument scaled by `factor`."""

    factor = 1.0

    def functions(self):
        return [np.divide, np.sin]

    def build_rule(self, function, signature):
        factor = self.factor
        if function is np.divide:
            def pullback(residuals, g, argnums):
                _, (a, b), _ = residuals
                cts = {0: g / b, 1: -factor * g * a / b ** 2}
                return tuple(cts[i] for i in argnums)
        else:
            def pullback(residuals, g, argnums):
                return (factor * g * np.cos(residuals[1][0]),)
        return rb.Rule(function, signature, rb.CallForward(function), pullback, source=self.name)


class _SlightlyWrong(_Scaled):
    name = "slightly-wrong"
    factor = 1.001  # 0.1% off in the denominator's cotangent: a thousand tolerances


def test_a_wrong_rule_where_the_steps_disagree_is_not_passed():
    with preferred(np.divide, _SlightlyWrong()):
        result = rb.check_rule(np.divide, G, C, source=_SlightlyWrong.name)
    assert result.status in ("fail", "inconclusive"), result


class _Wrong(_Scaled):
    name = "wrong-sin"
    factor = 1.5


def test_where_no_step_can_decide_a_wrong_rule_is_never_passed():
    # sin at 1e6 and 2e6: every step of the ladder spans many periods
    x = np.array([1.0e6, 2.0e6, 3.0e6])
    with preferred(np.sin, _Wrong()):
        result = rb.check_rule(np.sin, x, source=_Wrong.name)
    assert result.status in ("inconclusive", "fail"), result


def test_the_hessian_of_tanh_is_checked_not_used_unverified():
    w = np.array([[0.5, -1.2, 0.3], [2.0, 0.7, -0.4], [-0.9, 1.5, 1.1], [0.2, -0.3, 2.5]])
    x = np.array([0.4, -0.7, 1.1])

    def loss(xp, v):
        return xp.sum(xp.tanh(w @ v) ** 2)

    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        h = rb.hessian(functools.partial(loss, np))(x)
    np.testing.assert_allclose(h, jax.hessian(functools.partial(loss, jnp))(x), rtol=1e-9)


def test_finite_inputs_where_differences_are_not_finite_are_refused_not_used_unverified():
    # xlogy at 0: a step to y < 0 leaves the domain and d/dx = log(0) is infinite; no derivative
    # to check, so the call is refused (as at a kink), and the next inputs are checked.
    import scipy.special

    def f(x, y):
        return np.sum(scipy.special.xlogy(x, y))

    shape = (1, 2, 1, 1, 1, 2)  # a key no other test uses
    zeros = np.zeros(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        with pytest.raises(rb.UnverifiedRuleError, match="could not be checked"):
            rb.grad(f, argnums=(0, 1))(zeros, zeros)
        rng = np.random.default_rng(5)
        x, y = rng.uniform(0.5, 2.0, shape), rng.uniform(0.5, 2.0, shape)
        gx, gy = rb.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.log(y), rtol=1e-12)
    np.testing.assert_allclose(gy, x / y, rtol=1e-12)

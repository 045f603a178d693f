"""check_rule catches deliberately broken rules, and passes the real ones."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge
from rulebridge import Rule, check_rule, signature_of


def _rule_for_sin(x, pullback, forward=None):
    def default_forward(args, kwargs):
        return np.sin(args[0]), (args[0],)

    return Rule(np.sin, signature_of((x,)), forward or default_forward, pullback, source="test")


def _correct(residuals, g, argnums):
    (x,) = residuals
    return (g * np.cos(x),)


@pytest.fixture
def x64():
    return np.random.default_rng(1).normal(size=(3, 4))


def test_a_correct_rule_passes_in_both_precisions(x64):
    for x in (x64, x64.astype(np.float32)):
        result = check_rule(_rule_for_sin(x, _correct), x)
        assert result.status == "pass", result
        assert result.max_rel_error < result.tolerance
        assert result.directions == 3


def test_a_sign_error_fails(x64):
    result = check_rule(_rule_for_sin(x64, lambda r, g, a: (-g * np.cos(r[0]),)), x64)
    assert result.status == "fail", result
    assert result.max_rel_error > 100 * result.tolerance
    assert "finite differences" in result.reason


def test_a_wrong_shaped_cotangent_is_an_error(x64):
    result = check_rule(_rule_for_sin(x64, lambda r, g, a: (np.sum(g * np.cos(r[0]), 0),)), x64)
    assert result.status == "error", result
    assert "float64[4]" in result.reason and "float64[3, 4]" in result.reason


def test_a_float64_cotangent_for_a_float32_input_is_an_error(x64):
    x = x64.astype(np.float32)
    widened = _rule_for_sin(x, lambda r, g, a: ((g * np.cos(r[0])).astype(np.float64),))
    result = check_rule(widened, x)
    assert result.status == "error", result
    assert "float64" in result.reason and "float32" in result.reason


def test_a_rule_that_mutates_its_input_is_an_error(x64):
    def mutating(residuals, g, argnums):
        (x,) = residuals
        np.cos(x, out=x)
        return (g * x,)

    result = check_rule(_rule_for_sin(x64, mutating), x64.copy())
    assert result.status == "error", result
    assert "mutated its inputs" in result.reason


def test_a_forward_that_mutates_its_input_is_an_error(x64):
    def forward(args, kwargs):
        x = args[0]
        y = np.sin(x)
        x *= 2.0
        return y, (x / 2.0,)

    result = check_rule(_rule_for_sin(x64, _correct, forward), x64.copy())
    assert result.status == "error" and "forward" in result.reason, result


def test_a_rule_returning_nan_never_passes(x64):
    result = check_rule(_rule_for_sin(x64, lambda r, g, a: (g * np.cos(r[0]) * np.nan,)), x64)
    assert result.status == "fail", result
    assert "not finite" in result.reason


def test_a_rule_returning_nan_at_a_kink_decides_nothing():
    # std of a constant vector: central differences are symmetric there (0), the derivative
    # does not exist, and the rule's NaN is no failure of the key (issue 22, section 4)
    result = check_rule(np.std, np.ones((3, 1, 1, 1)), source="jax", ddof=1)
    assert result.status == "inconclusive" and not result.settled, result
    assert "kink" in result.reason


def test_a_rule_right_only_for_float64_fails_for_float32(x64):
    def forward_difference(residuals, g, argnums):
        (x,) = residuals
        eps = 1e-9  # fine in float64; in float32 x + eps == x and the derivative vanishes
        return (g * ((np.sin(x + eps) - np.sin(x)) / eps).astype(x.dtype),)

    assert check_rule(_rule_for_sin(x64, forward_difference), x64).status == "pass"
    x32 = x64.astype(np.float32)
    result = check_rule(_rule_for_sin(x32, forward_difference), x32)
    assert result.status == "fail", result


def test_a_rule_whose_answer_changes_between_calls_is_an_error(x64):
    calls = []

    def drifting(residuals, g, argnums):
        calls.append(1)
        return (g * np.cos(residuals[0]) * (1 + 1e-15 * len(calls)),)

    result = check_rule(_rule_for_sin(x64, drifting), x64)
    assert result.status == "error" and "second call" in result.reason, result


def test_a_wrong_primal_fails(x64):
    def forward(args, kwargs):
        return np.sin(args[0]) + 1e-6, (args[0],)

    result = check_rule(_rule_for_sin(x64, _correct, forward), x64)
    assert result.status == "fail" and "NumPy's value" in result.reason, result


def test_a_pullback_that_raises_is_an_error(x64):
    def raising(residuals, g, argnums):
        raise ValueError("boom")

    result = check_rule(_rule_for_sin(x64, raising), x64)
    assert result.status == "error" and "ValueError: boom" in result.reason, result


def test_a_kink_is_inconclusive_not_pass_or_fail():
    x = np.array([1.0, 2.0, -3.0])  # floor jumps exactly here
    result = check_rule(np.floor, x, source="autograd")
    assert result.status == "inconclusive", result


def test_outside_the_domain_is_inconclusive():
    result = check_rule(np.log, np.array([-1.0, 2.0]), source="autograd")
    assert result.status == "inconclusive", result


def test_the_registry_rule_is_checked_with_static_arguments_and_lists(x64):
    assert check_rule(np.sum, x64, source="autograd", axis=1, keepdims=True)
    assert check_rule(np.concatenate, [x64, x64[:1]], source="autograd")
    assert check_rule(np.sin, x64 + 1j * x64[::-1], source="autograd")


def test_the_same_seed_gives_the_same_result(x64):
    rule = _rule_for_sin(x64, _correct)
    assert check_rule(rule, x64, seed=7) == check_rule(rule, x64, seed=7)
    assert check_rule(rule, x64, seed=7).seed == 7


def test_no_rule_is_a_clear_error():
    with pytest.raises(rulebridge.NoRuleError):
        check_rule(np.sin, np.array([1.0, 2.0], dtype=object), source="autograd")

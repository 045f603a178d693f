"""The check at first use (the default) and the pytest plugin: the checker as users meet it."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge
from rulebridge import Rule, RuleCheckError, UnverifiedRuleError

pytest_plugins = ["pytester"]


def test_a_wrong_unverified_rule_raises_at_first_use(flipped):
    x = np.linspace(0.1, 1.0, 4)
    with pytest.raises(UnverifiedRuleError, match=r"numpy\.sin[\s\S]*\n.*sign-flipped-sin: fail"):
        rulebridge.vjp(np.sin, x, source=flipped)


def test_trusting_the_rule_is_used_as_is(flipped):
    x = np.linspace(0.1, 1.0, 4)[:, None]
    with rulebridge.trust():
        _, pullback = rulebridge.vjp(np.sin, x, source=flipped)
    np.testing.assert_allclose(pullback(np.ones((4, 1)))[0], -np.cos(x))


def test_a_right_unverified_rule_runs_after_its_check():
    x = np.random.default_rng(0).normal(size=(2, 2, 2))  # 3-d: not a signature the matrix has
    g = rulebridge.grad(lambda x: np.sum(np.sin(x)), source="autograd")(x)
    np.testing.assert_allclose(g, np.cos(x))
    rule = rulebridge.rule_for(np.sin, rulebridge.signature_of((x,)), "autograd")
    assert rule.status == "pass" and type(rule) is Rule  # the rule itself from now on
    assert rulebridge.REGISTRY.checked("numpy.sin", "(float64[:, :, :])")["autograd"] == "pass"


def test_assert_rule_raises_with_the_reason(flipped):
    with pytest.raises(RuleCheckError, match="finite differences"):
        rulebridge.assert_rule(np.sin, np.linspace(0.1, 1.0, 4), source=flipped)
    assert rulebridge.assert_rule(np.sin, np.linspace(0.1, 1.0, 4), source="autograd").passed


def test_the_pytest_plugin_parametrizes_rows_and_offers_assert_rule(pytester):
    pytester.makepyfile("""
        import numpy as np

        def test_mine(assert_rule):
            assert_rule(np.tanh, np.linspace(-1, 1, 5), source="autograd")

        def test_rows(rulebridge_row):
            rulebridge_row.assert_verified()
    """)
    result = pytester.runpytest("--rulebridge-source", "autograd", "-k", "mine or tanh",
                                "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)  # test_mine, numpy.tanh, numpy.arctanh


@pytest.mark.parametrize("x", [1.2, np.float64(1.2), np.array(1.2)],
                         ids=["float", "float64", "0-d"])
def test_a_wrong_rule_at_a_traced_scalar_is_refused_not_trusted_unchecked(flipped, x):
    """A check differentiates the arrays among a call's arguments by default; a traced scalar
    (a Python float, a NumPy scalar) was left out of the check at first use, which then had
    nothing to differentiate and passed: a sign-flipped sin gave -cos(x) silently."""
    with pytest.raises(UnverifiedRuleError, match=r"sign-flipped-sin: fail"):
        rulebridge.grad(np.sin, source=flipped)(x)


def test_a_right_rule_at_traced_scalars_is_checked_in_them():
    # np.linspace of two traced floats (autograd's test_linspace), each source checked in both
    for source in ("autograd", "jax"):
        for num in (0, 1, 5):
            g = rulebridge.grad(lambda a, b: np.sum(np.sin(np.linspace(a, b, num))),
                                argnums=(0, 1), source=source)(1.2, -3.4)
            t = np.linspace(0.0, 1.0, num)
            c = np.cos(np.linspace(1.2, -3.4, num))
            np.testing.assert_allclose(g, (np.sum(c * (1 - t)), np.sum(c * t)), rtol=1e-12)

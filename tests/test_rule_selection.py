"""A rule the finite-difference check marked failed is never used: another source's rule is
chosen, or, when there is none, the user gets a NoRuleError that says why."""

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.registry import REGISTRY


@pytest.fixture
def autograd_sin_marked_failed():
    key = ("numpy.sin", "autograd", "(float64[:])")
    previous = REGISTRY._status.get(key)
    REGISTRY.set_status(*key, "fail")
    yield
    if previous is None:
        REGISTRY._status.pop(key, None)
    else:
        REGISTRY._status[key] = previous
    REGISTRY._invalidate()


def test_a_failed_rule_is_refused_with_the_reason(autograd_sin_marked_failed):
    with pytest.raises(rb.NoRuleError, match="failed the finite-difference check"):
        rb.grad(lambda x: np.sum(np.sin(x)), source="autograd")(np.ones(3))


def test_another_source_is_chosen_over_a_failed_rule(autograd_sin_marked_failed):
    x = np.linspace(0.0, 1.0, 4)
    _, tape = rb.trace(lambda x: np.sum(np.sin(x)), x)
    assert "sin(%0)  [jax]" in str(tape)
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(np.sin(x)))(x), np.cos(x), rtol=1e-15)


def test_other_signatures_of_the_same_function_are_unaffected(autograd_sin_marked_failed):
    x = np.linspace(0.0, 1.0, 4).reshape(2, 2)
    np.testing.assert_array_equal(rb.grad(lambda x: np.sum(np.sin(x)), source="autograd")(x),
                                  np.cos(x))

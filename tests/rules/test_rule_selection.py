"""With source=None, a rule the finite-difference check marked failed is never used: another
source's rule is chosen, or, when there is none, the user gets a NoRuleError that says why."""

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.registry import REGISTRY


def _marked_failed(*sources):
    keys = [("numpy.sin", source, "(float64[:])") for source in sources]
    previous = {key: REGISTRY._status.get(key) for key in keys}
    for key in keys:
        REGISTRY.set_status(*key, "fail")
    yield
    for key, status in previous.items():
        if status is None:
            REGISTRY._status.pop(key, None)
        else:
            REGISTRY._status[key] = status
    REGISTRY._invalidate()


@pytest.fixture
def autograd_sin_marked_failed():
    yield from _marked_failed("autograd")


@pytest.fixture
def every_sin_marked_failed():
    yield from _marked_failed(*(str(info) for info in rb.adapters()))


def test_a_failed_rule_is_refused_with_the_reason(every_sin_marked_failed):
    with pytest.raises(rb.NoRuleError, match="failed the finite-difference check"):
        rb.grad(lambda x: np.sum(np.sin(x)))(np.ones(3))


def test_an_explicit_source_whose_rule_failed_raises_saying_so(autograd_sin_marked_failed):
    x = np.linspace(0.0, 1.0, 4)
    with pytest.raises(rb.NoRuleError, match="autograd: its rule failed"):
        rb.grad(lambda x: np.sum(np.sin(x)), source="autograd")(x)


def test_trusting_an_explicit_source_gets_its_rule_as_it_is(autograd_sin_marked_failed):
    x = np.linspace(0.0, 1.0, 4)
    with rb.trust():
        g = rb.grad(lambda x: np.sum(np.sin(x)), source="autograd")(x)
    np.testing.assert_array_equal(g, np.cos(x))


def test_another_source_is_chosen_over_a_failed_rule(autograd_sin_marked_failed):
    x = np.linspace(0.0, 1.0, 4)
    _, tape = rb.trace(lambda x: np.sum(np.sin(x)), x)
    assert "sin(%0)  [jax]" in str(tape)
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(np.sin(x)))(x), np.cos(x), rtol=1e-15)


def test_other_signatures_of_the_same_function_are_unaffected(autograd_sin_marked_failed):
    x = np.linspace(0.0, 1.0, 4).reshape(2, 2)
    np.testing.assert_array_equal(rb.grad(lambda x: np.sum(np.sin(x)), source="autograd")(x),
                                  np.cos(x))

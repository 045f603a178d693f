"""The contract of a pullback offered as a rule (`Rule.pullback_rule`), with adapters (tests/support/adapters.py)
whose pullbacks are not NumPy code (they convert their inputs with `np.asarray`, as a
compiled routine does, so they cannot run on an enclosing level's boxes).

- A correct second-order rule is checked against central differences of the pullback and then
  recorded: the Hessian is right.
- A wrong one is refused, never used: with the source named, a NestedDifferentiationError that
  names the function, the source, the verdict and what to do; with source=None, another
  source's NumPy-code pullback gives the right number.
- A source that offers none: the error names the function and the source and says what to do.
- A rule declaring that its pullback cannot take boxes (`pullback_takes_boxes=False`) is never
  called on them: the same routes, without the failed call.
"""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.checking import gradgrad
from rulebridge.rules import selection

from tests.support.adapters import Compiled
from tests.support.preferred import preferred

x0 = np.array([0.3, -1.2, 0.8])


def f(x):
    return np.sum(np.sin(x) * x)


def hessian_of_f(x):  # d2/dx2 of sin(x) x = 2 cos(x) - x sin(x), on the diagonal
    return np.diag(2 * np.cos(x) - x * np.sin(x))


@pytest.fixture(autouse=True)
def _fresh_verdicts():
    gradgrad.forget()
    yield
    gradgrad.forget()


def test_a_checked_second_order_rule_is_recorded_and_right():
    with preferred(np.sin, Compiled("compiled_right", "right")) as name:
        h = rb.hessian(f, source=name)(x0)
        np.testing.assert_allclose(h, hessian_of_f(x0), rtol=1e-12, atol=1e-14)
        _, tape = rb.trace(rb.grad(f, source=name), x0, source=name)
        names = [op.rule.name for op in tape.ops]
        assert names.count("pullback of numpy.sin (compiled)") == 1, names
        assert any(key[0] == "numpy.sin" and status == "pass"
                   for key, status in selection.verdicts(selection.GRADGRAD).items())


def test_a_wrong_second_order_rule_is_refused_with_the_source_named():
    with preferred(np.sin, Compiled("compiled_wrong", "wrong")) as name:
        with pytest.raises(rb.NestedDifferentiationError) as info:
            rb.hessian(f, source=name)(x0)
        message = str(info.value)
        assert "numpy.sin" in message and "compiled_wrong" in message
        assert "not verified here: fail" in message
        assert "compute the inner derivative in closed form" in message
        # first order still works: nothing about the first-order rule was marked
        np.testing.assert_allclose(rb.grad(f, source=name)(x0), np.sin(x0) + x0 * np.cos(x0),
                                   rtol=1e-12)


def test_a_wrong_second_order_rule_falls_over_to_another_source_with_source_none():
    with preferred(np.sin, Compiled("compiled_wrong2", "wrong")):
        h = rb.hessian(f)(x0)
    np.testing.assert_allclose(h, hessian_of_f(x0), rtol=1e-12, atol=1e-14)


def test_a_source_offering_no_rule_for_its_pullback_is_refused_clearly():
    with preferred(np.sin, Compiled("compiled_none", None)) as name:
        with pytest.raises(rb.NestedDifferentiationError) as info:
            rb.hessian(f, source=name)(x0)
    message = str(info.value)
    assert "numpy.sin(float64[:]) cannot be differentiated twice with the compiled_none rule" \
        in message
    assert "offers no rule for its pullback" in message
    assert "source='autograd'" in message  # what to do: a source whose pullback is NumPy code


def test_a_pullback_declared_unable_to_take_boxes_is_not_called_on_them():
    # Rule.pullback_takes_boxes=False: under nesting the engine goes to the rule's pullback rule
    # at once; undeclared, the same pullback is called on the boxes, raises, and then goes there.
    declared, undeclared = Compiled("compiled_declared", "right", declares=True), \
        Compiled("compiled_undeclared", "right")
    for adapter in (declared, undeclared):
        with preferred(np.sin, adapter) as name:
            h = rb.hessian(f, source=name)(x0)
            np.testing.assert_allclose(h, hessian_of_f(x0), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(rb.grad(f, source=name)(x0),  # first order: plain values
                                       np.sin(x0) + x0 * np.cos(x0), rtol=1e-12)
    assert declared.on_boxes == 0
    assert undeclared.on_boxes > 0


def test_a_declared_pullback_without_a_rule_is_refused_clearly_without_being_called():
    adapter = Compiled("compiled_declared_none", None, declares=True)
    with preferred(np.sin, adapter) as name:
        with pytest.raises(rb.NestedDifferentiationError) as info:
            rb.hessian(f, source=name)(x0)
    message = str(info.value)
    assert "numpy.sin(float64[:]) cannot be differentiated twice with the " \
        "compiled_declared_none rule" in message
    assert "offers no rule for its pullback" in message
    assert "source='autograd'" in message
    assert adapter.on_boxes == 0


def test_a_declared_pullback_falls_over_to_another_source_with_source_none():
    adapter = Compiled("compiled_declared_none2", None, declares=True)
    with preferred(np.sin, adapter):
        h = rb.hessian(f)(x0)
    np.testing.assert_allclose(h, hessian_of_f(x0), rtol=1e-12, atol=1e-14)
    assert adapter.on_boxes == 0

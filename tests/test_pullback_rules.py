"""The contract of a pullback offered as a rule (`Rule.pullback_rule`), with adapters defined
here whose pullbacks are not NumPy code (they convert their inputs with `np.asarray`, as a
compiled routine does, so they cannot run on an enclosing level's boxes).

- A correct second-order rule is checked against central differences of the pullback and then
  recorded: the Hessian is right.
- A wrong one is refused, never used: with the source named, a NestedDifferentiationError that
  names the function, the source, the verdict and what to do; with source=None, another
  source's NumPy-code pullback gives the right number.
- A source that offers none: the error names the function and the source and says what to do.
"""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.checking import gradgrad
from rulebridge.rules import selection

from .preferred import preferred

x0 = np.array([0.3, -1.2, 0.8])


def f(x):
    return np.sum(np.sin(x) * x)


def hessian_of_f(x):  # d2/dx2 of sin(x) x = 2 cos(x) - x sin(x), on the diagonal
    return np.diag(2 * np.cos(x) - x * np.sin(x))


def _compiled_sin_pullback(residuals, g, argnums):
    output, args, kwargs = residuals
    return (np.asarray(g) * np.cos(np.asarray(args[0])),)  # refuses a box: not NumPy code


def _pullback_function(x, g):  # the pullback of sin, as a function of flat arrays
    return (np.asarray(g) * np.cos(np.asarray(x)),)


_pullback_function.__rulebridge_name__ = "pullback of numpy.sin (compiled)"


class Compiled(rb.Adapter):
    """np.sin with a pullback that is not NumPy code; `second` decides what its pullback offers:
    "right", "wrong" (a second-order rule off by a factor of 2) or None (no rule). Every other
    function: autograd's rule under this source's name."""

    def __init__(self, name, second):
        self.name, self.second = name, second

    def version(self):
        return "1"

    def functions(self):
        return [np.sin]

    def build_rule(self, function, signature):
        if function is not np.sin:  # the rest: autograd's rules (NumPy code), as this source's
            rule = rb.REGISTRY.adapter("autograd").build_rule(function, signature)
            rule.source = self.name
            return rule
        return rb.Rule(np.sin, signature, rb.CallForward(np.sin), _compiled_sin_pullback,
                       source=self.name, source_version="1",
                       pullback_rule=None if self.second is None else self._offer)

    def _offer(self, residuals, g, argnums):
        output, args, kwargs = residuals
        factor = 1.0 if self.second == "right" else 2.0

        def second_pullback(res, gg, nums):  # d/dx (g cos x) = -g sin x; d/dg = cos x
            _, (x, g), _ = res
            x, g, gg = np.asarray(x), np.asarray(g), np.asarray(gg[0])
            cts = {0: factor * -gg * g * np.sin(x), 1: gg * np.cos(x)}
            return tuple(rb.conform_cotangent(cts[i], (x, g)[i]) for i in nums)

        signature = rb.signature_of((rb.primal(args[0]), rb.primal(g)))
        rule = rb.Rule(_pullback_function, signature, rb.CallForward(_pullback_function),
                       second_pullback, source=self.name, source_version="1")
        return rb.PullbackCall(rule, (args[0], g), lambda outputs: outputs)


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

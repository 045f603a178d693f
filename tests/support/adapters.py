"""Adapters the tests register: deliberately wrong or unusual sources, each one idea.

- `SignFlippedSin`: d sin = -cos, a wrong rule every check must catch.
- `OffByOnePercent`: np.tanh's pullback 1% too large, which only a check of the whole function
  finds when the rule is trusted unchecked.
- `Compiled`: np.sin with a pullback that is not NumPy code (it converts its inputs with
  `np.asarray`, as a compiled routine does), and a second-order rule that is right, wrong or
  absent.
"""

from __future__ import annotations

import numpy as np

import rulebridge as rb
from rulebridge import Declined, Rule


class SignFlippedSin(rb.Adapter):
    """A deliberately wrong source: d sin = -cos."""

    name = "sign-flipped-sin"

    def functions(self):
        return [np.sin]

    def build_rule(self, function, signature):
        if function is not np.sin:
            raise Declined("this test adapter only has sin")

        def forward(args, kwargs):
            return np.sin(args[0]), args[0]

        def pullback(x, g, argnums):
            return (-g * np.cos(x),)

        return Rule(np.sin, signature, forward, pullback, source=self.name)


class OffByOnePercent(rb.Adapter):
    """A rule for np.tanh whose pullback is 1% too large."""

    name = "off-by-one-percent"

    def version(self):
        return "1.0"

    def functions(self):
        return [np.tanh]

    def build_rule(self, function, signature):
        if function is not np.tanh:
            raise rb.Declined("only np.tanh")

        def forward(args, kwargs):
            out = np.tanh(*args)
            return out, out

        def pullback(out, g, argnums):
            return (1.01 * g * (1 - out ** 2),)

        return rb.Rule(function, signature, forward, pullback, source=self.name,
                       source_version="1.0")


def _compiled_sin_pullback(residuals, g, argnums):
    output, args, kwargs = residuals
    return (np.asarray(g) * np.cos(np.asarray(args[0])),)  # refuses a box: not NumPy code


def _pullback_function(x, g):  # the pullback of sin, as a function of flat arrays
    return (np.asarray(g) * np.cos(np.asarray(x)),)


_pullback_function.__rulebridge_name__ = "pullback of numpy.sin (compiled)"


class Compiled(rb.Adapter):
    """np.sin with a pullback that is not NumPy code; `second` decides what its pullback offers:
    "right", "wrong" (a second-order rule off by a factor of 2) or None (no rule). Every other
    function: autograd's rule under this source's name. `declares`: the rule says that its
    pullback cannot take boxes (`Rule.pullback_takes_boxes=False`); `on_boxes` counts the calls
    of its pullback that were handed an enclosing level's boxes all the same."""

    def __init__(self, name, second, declares=False):
        self.name, self.second, self.declares = name, second, declares
        self.on_boxes = 0

    def version(self):
        return "1"

    def functions(self):
        return [np.sin]

    def build_rule(self, function, signature):
        if function is not np.sin:  # the rest: autograd's rules (NumPy code), as this source's
            rule = rb.REGISTRY.adapter("autograd").build_rule(function, signature)
            rule.source = self.name
            return rule
        return rb.Rule(np.sin, signature, rb.CallForward(np.sin), self._pullback,
                       source=self.name, source_version="1",
                       pullback_rule=None if self.second is None else self._offer,
                       pullback_takes_boxes=not self.declares)

    def _pullback(self, residuals, g, argnums):
        if isinstance(residuals[1][0], rb.Traced) or isinstance(g, rb.Traced):
            self.on_boxes += 1
        return _compiled_sin_pullback(residuals, g, argnums)

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

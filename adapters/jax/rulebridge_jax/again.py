"""A JAX pullback as a function with a rule of its own, for derivatives of higher order.

Under nesting (grad of grad, hessian) the inner sweep's pullbacks run on the enclosing level's
boxes, which a jitted pullback cannot take. `JitPullbacks.pullback_call` offers the pullback of
one configuration instead as a call of one JAX function of flat arrays (the leaves, then the
used cotangents) returning the leaf cotangents; the engine records that call as one op of the
enclosing level with the rule `FunctionRules.rule` builds for it:

- its forward runs the jitted pullback (the first-order one, compiled once per configuration);
- its pullback is the VJP of that function, compiled by a `JitPullbacks` of its own, so it is
  jitted and cached per configuration exactly as the first-order pullbacks are, and it offers
  itself as a rule in turn (the third order, and so on);
- its pushforward is the function's `jax.jvp`, jitted by a `JitPushforwards` (forward over
  reverse: `rulebridge.jvp` of `rulebridge.grad`).

rulebridge checks that rule against central differences of the pullback itself before using it
(the matrix's gradgrad column, or a check at the op's values).
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

import rulebridge
from rulebridge import CallForward, Rule

from .pullback import JitPullbacks
from .pushforward import JitPushforwards


class FunctionRules:
    """Rules, per signature, for `jax_function`: flat array arguments -> a tuple of arrays."""

    def __init__(self, jax_function: Callable, name: str,
                 check: Callable[[tuple, tuple], None] | None = None,
                 compiled: Callable | None = None) -> None:
        # `compiled`: the function jitted already (the first-order pullback), else jitted here
        jitted = compiled or jax.jit(jax_function)
        self.name = name
        self.pullbacks = JitPullbacks(jax_function, name, operands=True)
        self.pushforwards = JitPushforwards(jax_function, name, operands=True)
        self.rules: dict[tuple, Rule] = {}

        def function(*args):
            with jax.enable_x64(True):
                outs = tuple(np.asarray(o) for o in jitted(*args))
            if check is not None:
                check(outs, args)
            return outs

        function.__rulebridge_name__ = name
        function.__qualname__ = function.__name__ = name.replace(" ", "_").replace(".", "_")
        self.function = function

    def rule(self, args: tuple) -> Rule:
        """The rule of the function at the signature of `args` (boxes: their innermost values)."""
        signature = rulebridge.signature_of(tuple(rulebridge.primal(a) for a in args))
        rule = self.rules.get(signature)
        if rule is None:
            pullbacks, pushforwards = self.pullbacks, self.pushforwards

            def pullback(residuals, g, argnums):
                return pullbacks(residuals[1], {}, g, argnums)

            def pullback_rule(residuals, g, argnums):
                return pullbacks.pullback_call(residuals[1], {}, g, argnums)

            def jvp(residuals, tangents, argnums):
                return _as_outputs(pushforwards(residuals[1], {}, tangents, argnums))

            rule = self.rules[signature] = Rule(
                self.function, signature, CallForward(self.function), pullback, source="jax",
                source_version=jax.__version__, jvp=jvp, pullback_rule=pullback_rule,
                pullback_takes_boxes=False)  # jitted too: the next order goes to its rule
        return rule


def _as_outputs(tangent: Any) -> tuple:
    """The pushforward of a function returning a tuple of arrays, as a tuple."""
    return tangent if type(tangent) is tuple else (tangent,)

"""A pullback that is not NumPy code, differentiated again: one op of the enclosing level.

Under nesting (grad of grad, hessian; rulebridge/rules/levels.py) the inner sweep's pullbacks run
on the enclosing level's boxes, which records them. A pullback that is NumPy code is traced like
any code. One that is not (JAX's jitted pullbacks) cannot take a box, and raises (or its rule
declares so, `Rule.pullback_takes_boxes=False`, and it is not called): its rule may then offer
the pullback as a function with a rule of its own (`Rule.pullback_rule`, a `PullbackCall`),
which this module records as ONE op on the highest-level tape among the call's boxes, with that
second-order rule. The rule is used only where its check against central
differences of the pullback itself passed (rules/selection.py `pullback_rule_status`: the shipped
matrix's gradgrad column, else a check at the op's own values). Any depth works the same way:
the op's own pullback, run by the enclosing level's sweep on the boxes of a level further out,
offers its rule in turn. Where the call's values are themselves boxes of a lower level, its
forward is recorded there first, as `Tape.record` does for NumPy's functions.

Nothing here is on the first-order path: the sweep reaches it only through a pullback that
raised on boxes or declines them (engine/fallback.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import NestedDifferentiationError, RulebridgeError
from ..rules.levels import Box, holds_box
from ..rules.registry import REGISTRY
from ..rules.rule import CallForward, PullbackCall, Rule
from ..rules.selection import pullback_rule_status
from .box import NO_KWARGS, Traced

_ndarray = np.ndarray


def pullback_again(rule: Rule, residuals: Any, g: Any, argnums: tuple, key: str) -> tuple | str:
    """The cotangents of `rule`'s pullback at these residuals and cotangent (which hold an
    enclosing level's boxes), recorded as one op there with the rule the pullback offers; or,
    where it offers none or its rule is not verified, why not (a str)."""
    offer = rule.pullback_rule
    if offer is None:
        return f"the {rule.source} rule offers no rule for its pullback"
    try:
        call = offer(residuals, g, argnums)
    except RulebridgeError:
        raise
    except Exception as exc:
        return (f"the {rule.source} rule could not offer its pullback as a rule here "
                f"({type(exc).__name__}: {exc})")
    if not isinstance(call, PullbackCall) or not isinstance(call.rule, Rule):
        return (f"the {rule.source} rule's pullback_rule returned {type(call).__name__}, not a "
                "rulebridge.PullbackCall of a Rule")
    traced = tuple(i for i, a in enumerate(call.args) if isinstance(a, Box))
    status, reason = pullback_rule_status(REGISTRY, rule, key, call, traced)
    if status != "pass":
        return (f"the rule {rule.source} offers for its pullback is not verified here: "
                f"{status}" + (f" ({reason})" if reason else ""))
    outputs = record_call(call.rule, tuple(call.args))
    return call.assemble(outputs) if call.assemble is not None else outputs


def record_call(rule: Rule, args: tuple) -> Any:
    """`rule.function(*args)`, recorded as one op of `rule` on the highest-level tape among the
    boxes in `args` (a flat tuple); a lower level's box is a constant there, and the forward
    called on it is recorded by that lower level first."""
    tape = None
    for a in args:
        if type(a) is Traced and not getattr(a._tape, "plain", False) and (
                tape is None or a._tape.level > tape.level):
            tape = a._tape
    if tape is None:  # nothing traced: the plain call
        return rule.forward(args, NO_KWARGS)[0]
    if tape.guard is not None:
        tape.guard(rule.function, args)
    values, inputs = [], []
    for a in args:
        if type(a) is Traced and a._tape is tape:
            values.append(a._value)
            inputs.append(a._var)
            continue
        if type(a) is Traced and getattr(a._tape, "plain", False):  # set free (detached.py)
            a = a._value
        elif type(a) is _ndarray:  # what the forward saw: engine/protect.py
            a = tape.protected.constant(a)
        elif type(a) is Traced:  # a lower level's box: a constant here
            tape.nested = True
        values.append(a)
        inputs.append(None)
    values = tuple(values)
    if holds_box(values):  # a lower level's boxes: that level records the forward
        if type(rule.forward) is not CallForward:
            raise NestedDifferentiationError(
                f"the {rule.source} rule for {rule.name} offered for a pullback has a forward "
                "that is not a rulebridge.CallForward, so it cannot be recorded at a lower "
                "level of a nested differentiation.",
                fix="Rule(function, signature, rulebridge.CallForward(function), ...)  # in the "
                    "adapter's pullback_rule")
        out = record_call(rule, values)
        residuals = (out, values, None)  # CallResiduals' fields
    else:
        out, residuals = rule.forward(values, NO_KWARGS)
    return tape.record_output(rule, values, NO_KWARGS, tuple(inputs), out, residuals)

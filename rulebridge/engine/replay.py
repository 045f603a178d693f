"""`Tape.replay`: the recorded path recomputed on new values of the traced arguments, with no
boxes, checking the program's recorded decisions as it goes (decisions.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..rules.keys import configuration
from ..rules.signature import signature_of
from .decisions import check as check_decisions
from .forwards import call_forward
from .protect import read_only
from .result import bind, substitute_result

_ndarray = np.ndarray


def replay(tape, args: tuple) -> Any:
    """`tape.replay(*args)` (see `Tape.replay`)."""
    env: dict[int, Any] = {}
    for var, value in zip(tape.inputs, bind(tape.arguments, tape.inputs, args)):
        env[var] = read_only(value) if type(value) is _ndarray else value  # see protect
    decisions, checked = tape.decisions, 0

    def rerun(decision):  # an op whose answer was a decision, on the replayed values
        rule, args, kwargs = decision.call
        values = tuple(substitute(a, v, env) for a, v in zip(args, decision.var))
        return call_forward(rule, values, kwargs, decision.var)[0]

    for position, op in enumerate(tape.ops):
        # the path's decisions taken before this op, on values the replay has computed
        checked = check_decisions(decisions, checked, position, env, rerun)
        values = tuple(substitute(a, v, env) for a, v in zip(op.args, op.inputs))
        rule = op.rule
        signature = signature_of(values)
        if signature != rule.signature:
            rule = tape._lookup(rule.function, signature,
                                configuration(rule.function, values, op.kwargs))
        out, _ = call_forward(rule, values, op.kwargs, op.inputs)
        if op.structure is None:
            env[op.outputs[0]] = out
        else:
            for var, item in zip(op.outputs, out):
                if var is not None:
                    env[var] = item
    check_decisions(decisions, checked, len(tape.entries), env, rerun)
    return substitute_result(tape.outputs, env)


def substitute(value, var, env):
    if var is None:
        return value
    if type(var) is int:
        return env[var]
    return type(value)(substitute(a, v, env) for a, v in zip(value, var))

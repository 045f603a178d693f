"""The forward sweep: one pass over a recorded tape in program order, no recursion.

Tangents live in a dict keyed by variable; a variable without one has a zero tangent, and an op
none of whose inputs has a tangent is skipped (its outputs' tangents are zero). Each op's
tangents come from its pushforward (rules/selection.py) or its pullback transposed (transpose.py), and
are checked for their output's shape and dtype. Tangents are never written in place, so one may
be shared by several variables (the copy's pushforward is the identity).

Writes: before the sweep every recorded write is undone (`Effects.begin_forward`), and each is
redone as the sweep passes it, so every pushforward reads the memory its forward saw; the
tape's memory is as the program left it afterwards, also when a pushforward raised.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.hooks import Effect
from ..engine.op import UNARY
from ..engine.tape import Tape
from ..engine.fallback import pullback_raised
from ..errors import RuleContractError, RulebridgeError
from ..rules.levels import Box, primal as innermost
from ..rules.registry import REGISTRY
from ..rules.rule import CallForward
from ..rules.selection import pushforward
from ..rules.signature import format_signature, is_differentiable
from .transpose import PullbackRaised, transposed

_ndarray = np.ndarray


def forward(tape: Tape, seeds: dict[int, Any]) -> dict[int, Any]:
    """The tangent of every variable the seeds reach (seeds: tangents of input variables)."""
    tangents: dict[int, Any] = dict(seeds)
    effects = tape.effects
    if effects is not None:
        effects.begin_forward()
    try:
        for entry in tape.entries:
            rule, args, kwargs, inputs, outputs, structure, residuals = entry
            if structure is UNARY:  # `residuals` holds the output alone
                residuals = (residuals, args, None)  # CallResiduals' fields
                structure = None
            argnums, given = _input_tangents(tangents, args, inputs)
            if argnums:
                try:
                    out = _push(rule, residuals, args, kwargs, argnums, given, structure)
                except PullbackRaised as raised:  # on an enclosing level's boxes
                    out = _pushed_by_another(tape, entry, raised.exc, residuals, argnums, given)
                except RulebridgeError:
                    raise
                except Exception as exc:  # the rule's pullback raised at a trusted key
                    out = _pushed_by_another(tape, entry, exc, residuals, argnums, given)
                if structure is None:
                    if out is not None:
                        tangents[outputs[0]] = out
                else:
                    for var, t in zip(outputs, out):
                        if var is not None and t is not None:
                            tangents[var] = t
            if isinstance(residuals, Effect):
                residuals.redo()
    finally:
        if effects is not None:
            effects.end_sweep()
    return tangents


def _pushed_by_another(tape: Tape, entry: tuple, exc: Exception, residuals, argnums: tuple,
                       given: tuple) -> Any:
    """The op's tangents after its rule's pullback raised while transposed: the pullback of the
    next source's rule at the key, transposed, as the reverse sweep falls back
    (rulebridge/engine/fallback.py: that rule is verified at the key or checked here first; a
    named source, or no other rule, is a RuleContractError naming them)."""
    rule, args, kwargs, _, _, structure, _ = entry
    outputs = _primal_outputs(rule, residuals, args, kwargs)
    return transposed(rule, residuals, args, kwargs, argnums, given, outputs,
                      structure is not None and structure is not UNARY, f"{exc}",
                      lambda g: pullback_raised(tape, entry, exc, g, argnums))


def _input_tangents(tangents: dict, args: tuple, inputs: tuple) -> tuple[tuple, tuple]:
    argnums, given = [], []
    for i, var in enumerate(inputs):
        if var is None:
            continue
        if type(var) is int:
            t = tangents.get(var)
            if t is None:
                continue
        else:  # a list or tuple argument: a list of tangents, zeros for its other items
            items = [None if v is None else tangents.get(v) for v in var]
            if all(t is None for t in items):
                continue
            t = [_zeros(a) if t is None and is_differentiable(a) else t
                 for a, t in zip(args[i], items)]
        argnums.append(i)
        given.append(t)
    return tuple(argnums), tuple(given)


def _push(rule, residuals, args, kwargs, argnums, given, structure) -> Any:
    chosen, inner = rule.chosen(residuals)
    jvp, why = pushforward(REGISTRY, chosen, args, kwargs, argnums)
    outputs = None
    if jvp is not None:
        try:
            out = jvp(inner, given, argnums)
        except Exception as exc:  # at a checked key: the pullback still serves
            why = f"the {chosen.source} pushforward raised {type(exc).__name__}: {exc}"
        else:
            return _conformed(out, rule, residuals, args, kwargs, structure)
    outputs = _primal_outputs(rule, residuals, args, kwargs)
    return transposed(rule, residuals, args, kwargs, argnums, given, outputs,
                      structure is not None, why)


def _primal_outputs(rule, residuals, args, kwargs) -> list:
    """The op's outputs as a list: a CallForward rule's residuals hold them, otherwise NumPy's
    own function computes them again (the value is NumPy's either way)."""
    chosen, inner = rule.chosen(residuals)
    if type(chosen.forward) is CallForward:
        out = inner[0]
    else:
        out = rule.function(*args, **(kwargs or {}))
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _conformed(out, rule, residuals, args, kwargs, structure) -> Any:
    """The contract's cheap check: inexact arrays or scalars (None for a zero), of their
    outputs' shapes and dtypes where the op's residuals hold the outputs."""
    several = structure is not None
    items = out if several else (out,)
    if several and (type(out) not in (tuple, list)):
        raise RuleContractError(f"the {rule.source} pushforward for {_where(rule)} returned a "
                                f"{type(out).__name__} for several outputs; expected a tuple")
    chosen, inner = rule.chosen(residuals)
    primals = None
    if type(chosen.forward) is CallForward:
        primal = inner[0]
        primals = list(primal) if several else [primal]
    for k, t in enumerate(items):
        if t is None:
            continue
        if isinstance(t, Box):  # an enclosing level's tangent (reverse over forward)
            t = innermost(t)
        if not isinstance(t, (_ndarray, np.generic)) or not is_differentiable(t):
            raise RuleContractError(f"the {rule.source} pushforward for {_where(rule)} returned "
                                    f"a {type(t).__name__} as the tangent of output {k}")
        if primals is not None and k < len(primals) and is_differentiable(primals[k]):
            p = innermost(primals[k])
            if np.shape(t) != np.shape(p) or t.dtype != np.result_type(p):
                raise RuleContractError(
                    f"the {rule.source} pushforward for {_where(rule)} returned a tangent of "
                    f"{t.dtype} shape {np.shape(t)} for output {k}, which is "
                    f"{np.result_type(p)} shape {np.shape(p)}")
    return tuple(items) if several else out


def _zeros(primal) -> Any:
    z = np.zeros(np.shape(primal), np.result_type(primal))
    return z if type(primal) is _ndarray else z[()]


def _where(rule) -> str:
    return f"{rule.name}{format_signature(rule.signature)}"

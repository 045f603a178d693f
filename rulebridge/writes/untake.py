"""The engine's own pullback of an index read, for nested differentiation.

A source's pullback of `x[index]` scatters the cotangent into a buffer in place (autograd's
`SparseObject`, `np.add.at`), which cannot run on an enclosing differentiation's boxes: a plain
buffer cannot hold them. Under nesting the engine uses its own, functional one instead:
`untake(g, index, shape, dtype)`, the array of zeros with `g` added at `index`, an op with a
rule of its own. Its pullback is the index read again, so every order differentiates (getitem,
untake, getitem, ...).

The tape reaches it two ways. An index read recorded on an enclosing differentiation's boxes
(`Writes.nested_rule`, asked by `Tape._rule_for` when an op's arguments hold boxes) is given the
engine's rule `nested_getitem_rule` at once: NumPy's index read as its forward, `untake` as its
pullback, so no source's pullback is tried and raises first (an exception built with the user's
location, and the source's scatter into a buffer, each time: about 6% of an hvp of the
benchmark's network, `python -m benchmarks.hvp --instructions`). A read of plain values whose
cotangent is a box reaches it after the source's pullback raised (`Writes.nested_pullback`,
rulebridge/engine/fallback.py). Both give the same values as the sources' scatter.
"""

from __future__ import annotations

import operator

import numpy as np

from ..engine.box import NO_KWARGS, Traced
from ..rules.levels import primal
from ..rules.rule import CallForward, Rule


def untake(g, index, shape: tuple, dtype):
    """Zeros of `shape` and `dtype` with `g` added at `index` (repeats add up)."""
    if type(g) is Traced:  # recorded by g's level, whose forward calls this on g's value
        return g._tape.record(untake, (g, index, shape, dtype), NO_KWARGS)
    out = np.zeros(shape, dtype)
    np.add.at(out, index, g)
    return out


untake.__rulebridge_name__ = "rulebridge.untake"


def _untake_pullback(residuals, g, argnums):
    _, args, _ = residuals
    return tuple(g[args[1]] if i == 0 else None for i in argnums)


def _untake_pushforward(residuals, tangents, argnums):
    """`untake` is linear in `g`: its tangent is `untake` of g's tangent (forward over reverse,
    which would otherwise transpose it one output entry at a time)."""
    _, args, _ = residuals
    for i, t in zip(argnums, tangents):
        if i == 0:
            return untake(t, *args[1:])
    return None


def untake_rule(signature) -> Rule:
    return Rule(untake, signature, CallForward(untake), _untake_pullback, source="rulebridge",
                notes="engine: the cotangent of an index read, under nesting",
                jvp=_untake_pushforward)


def _getitem_cotangents(args: tuple, kwargs, g, argnums: tuple) -> tuple:
    x, index = args
    value = primal(x)
    return tuple(untake(g, index, np.shape(value), np.result_type(value)) if i == 0 else None
                 for i in argnums)


NESTED_PULLBACKS = {operator.getitem: _getitem_cotangents}


def _nested_getitem_pullback(residuals, g, argnums):
    _, args, kwargs = residuals  # CallForward's: (output, args, kwargs)
    return _getitem_cotangents(args, kwargs, g, argnums)


def _nested_getitem_pushforward(residuals, tangents, argnums):
    """An index read is linear: its tangent is the tangent read at the same index."""
    _, args, _ = residuals
    for i, t in zip(argnums, tangents):
        if i == 0:
            return t[args[1]]
    return None


def nested_getitem_rule(function, signature) -> Rule | None:
    """The engine's rule for `x[index]` on an enclosing differentiation's box `x` (see the
    module); None for any other function. Made once per call shape: the tape's rule cache
    keeps it (engine/tape.py `_rule_for`)."""
    if function is not operator.getitem:
        return None
    return Rule(operator.getitem, signature, CallForward(operator.getitem),
                _nested_getitem_pullback, source="rulebridge", notes="engine: an index read "
                "under nesting (its cotangent is rulebridge.untake)",
                jvp=_nested_getitem_pushforward)

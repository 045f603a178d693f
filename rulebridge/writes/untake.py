"""The engine's own pullback of an index read, for nested differentiation.

A source's pullback of `x[index]` scatters the cotangent into a buffer in place (autograd's
`SparseObject`, `np.add.at`), which cannot run on an enclosing differentiation's boxes: a plain
buffer cannot hold them. Under nesting the engine uses its own, functional one instead:
`untake(g, index, shape, dtype)`, the array of zeros with `g` added at `index`, an op with a
rule of its own. Its pullback is the index read again, so every order differentiates (getitem,
untake, getitem, ...). The tape reaches it through `Writes.nested_pullback`
(rulebridge/engine/fallback.py), only after a source's pullback could not run on boxes.
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

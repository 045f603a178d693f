"""A write as a pure function: `x' = setitem(x, index, v)` returning a new array, for
`Tape.replay`, a recorded program (rulebridge/jit) and writes at nested levels
(rulebridge/writes/nested.py), none of which has a saved state to swap (write.py)."""

from __future__ import annotations

import numpy as np

from ..rules.conform import conform_cotangent
from ..rules.levels import Box
from .indices import covers_all

_ndarray = np.ndarray


def _functional_write(args, kwargs):
    """The write as a pure function, for `Tape.replay` and a recorded program
    (rulebridge/jit): a new array, and residuals whose pullback moves the cotangent as the
    write's own does (`Write.pullback`), without a saved state to swap."""
    target, index, value = args
    out = target.copy()
    out[index] = value
    return out, FunctionalWrite(index, value, covers_all(index))


class FunctionalWrite:
    """What the pullback of a functional write needs: where it wrote and what (for the
    value's cotangent's shape and dtype), and the target's shape and dtype for its
    pushforward. Its cotangents may be boxes of an enclosing level (nested.py)."""

    __slots__ = ("index", "value", "full", "shape", "dtype")

    def __init__(self, index, value, full: bool, shape=None, dtype=None) -> None:
        self.index, self.value, self.full = index, value, full
        self.shape, self.dtype = shape, dtype

    def pushforward(self, tangents, argnums):
        """The target's tangent (zeros when it is constant) with the value's written in."""
        out = _copy(tangents[0]) if argnums[0] == 0 else np.zeros(self.shape, self.dtype)
        out[self.index] = tangents[-1] if argnums[-1] == 2 else 0
        return out

    def pullback(self, g, argnums):
        """The target's cotangent is `g` with the written part zeroed (a new array), the
        value's is `g[index]` conformed to the value: the numbers `Write.pullback` gives."""
        if g is None:
            return (None,) * len(argnums)
        with_value = len(argnums) == 2 or argnums == (2,)
        value_ct = None
        if with_value:
            value_ct = g if self.full else g[self.index]
            if type(value_ct) is _ndarray and np.may_share_memory(value_ct, g):
                value_ct = value_ct.copy()
            value_ct = conform_cotangent(value_ct, self.value)
        cts = []
        for i in argnums:
            if i == 0:
                if self.full:
                    cts.append(None)
                else:
                    target_ct = _copy(g)
                    target_ct[self.index] = 0
                    cts.append(target_ct)
            else:
                cts.append(value_ct)
        return tuple(cts)


def _copy(x):
    """A new array of `x`'s values; a box's copy is recorded at its level."""
    return x.copy() if isinstance(x, Box) else np.array(x, copy=True)

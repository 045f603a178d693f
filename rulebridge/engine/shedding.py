"""Before a sweep, a tape keeps a large array alive only where a pullback needs it.

An op's traced arguments become stand-ins of the same shape and dtype (all the sweep reads of
them), and a `CallForward` rule may compact its residuals (`CallForward.compact`). Holding every
large intermediate raised the peak memory of a gradient above autograd's, which cost page faults
and cache misses on each call (benchmarks/suite.py's kron rows).
"""

from __future__ import annotations

import numpy as np

from ..rules.rule import CallForward, CallResiduals
from .op import UNARY

_ndarray = np.ndarray
LARGE_BYTES = 1 << 16  # below this, keeping an array costs less than shedding it


def shed_large_values(tape) -> None:
    """Shed the large arrays `tape`'s ops hold and their pullbacks do not need. A tape that
    wrote into arrays is left as it is: its sweep restores overwritten values, which a VJP made
    now, at the end of the forward, could read before they are restored."""
    tape.decisions.clear()  # a tape about to be swept is never replayed: they hold arguments
    if tape.effects is not None or not tape.holds_large:
        return
    tape.holds_large = False  # once: a second call finds nothing left to shed
    entries = tape.entries
    for index, (rule, args, kwargs, inputs, outputs, structure,
                residuals) in enumerate(entries):
        if not _holds_large(rule, args, structure, residuals):
            continue
        forward = rule.forward
        compact = forward.compact if type(forward) is CallForward else None
        if structure is UNARY:
            if compact is None:
                continue  # its residuals are made from Op.args: x must stay
            structure, residuals = None, (residuals, args, None)  # CallResiduals' fields
        if compact is not None:
            argnums = tuple(i for i, v in enumerate(inputs) if v is not None)
            residuals = compact(residuals, argnums)
        args = tuple(_stand_in(value) if type(var) is int and _is_large(value) else value
                     for value, var in zip(args, inputs))
        entries[index] = (rule, args, kwargs, inputs, outputs, structure, residuals)


def _is_large(x) -> bool:
    return type(x) is _ndarray and x.nbytes >= LARGE_BYTES


def _holds_large(rule, args: tuple, structure, residuals) -> bool:
    """A large argument, or a large output (what an op in the `UNARY` form keeps in place of
    residuals, or the output a CallForward's residuals hold)."""
    if any(_is_large(value) for value in args):
        return True
    if structure is UNARY:
        return _is_large(residuals)
    return type(rule.forward) is CallForward and _is_large(CallResiduals._make(residuals).output)


def _stand_in(array: np.ndarray) -> np.ndarray:
    """A read-only array of `array`'s shape and dtype that owns one element."""
    return np.broadcast_to(np.zeros((), array.dtype), array.shape)

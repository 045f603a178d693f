"""Boxes set free: buffers a tape followed that held no traced value when the differentiated
function returned, and that something still references (a dict, a global, the result).

Such a buffer is what `np.zeros(n)` would have been without rulebridge, so using it after the
call must work as a plain array would, not raise that a traced value escaped. `set_free` gives
the box `FREE` as its tape, and a copy of its memory when the tape wrote into arrays (its sweep,
which a pullback may run later, undoes and redoes those writes in the original): every NumPy
function, operator, index and write on it then computes on that array, NumPy's own results,
plain arrays out; `np.asarray` of it is the array itself. In a later trace it is a constant:
`live * free` records the product with the plain array, and writing a traced value into it
raises, as writing one into any plain array does. Only the followed allocations themselves are
set free (not values computed from them), and only those still alive: the tape notes them by
weak reference.
"""

from __future__ import annotations

import numpy as np

from ..errors import MutationError
from .box import Traced
from .constants import constant_value

class _Free:
    """The tape of boxes set free: calls on them compute on their plain arrays."""

    plain = True  # read by rulebridge/engine/constants.py
    finished = False
    guard = None

    def record(self, function, args, kwargs, guarded: bool = True):
        if type(args) is Traced:
            args = (args,)
        live = _live_tape(args) or _live_tape(tuple(kwargs.values()))
        args = plain(args)
        kwargs = {k: plain(v) for k, v in kwargs.items()}
        if live is not None:  # a constant of another trace's op
            return live.record(function, args, kwargs, guarded)
        return function(*args, **kwargs)

    def check_open(self, function) -> None:
        pass


class _FreeWrites:
    """Writes into a box set free: into its plain array; a traced value is refused."""

    plain_buffer_fix = ("allocate the buffer inside the differentiated function, or from a "
                        "traced array (np.zeros_like(x))")

    @staticmethod
    def _plain_only(what, *values):
        if _live_tape(values) is not None:
            raise MutationError(
                f"{what}: a traced value written into an array allocated by an earlier "
                "differentiated call, which this trace does not follow, so later reads of it "
                f"would drop the gradient. Instead, {_FreeWrites.plain_buffer_fix}.")
        return [plain(v) for v in values]

    def setitem(self, box, index, value) -> None:
        index, value = self._plain_only("x[index] = value", index, value)
        box._value[index] = value

    def fill(self, box, value) -> None:
        self.setitem(box, Ellipsis, value)

    def augmented(self, function, box, other):
        (other,) = self._plain_only("an in-place operator", other)
        function(box._value, other, out=box._value)
        return box

    def ufunc_out(self, box, ufunc, inputs, kwargs):
        inputs, kwargs = self._plain_only(f"{ufunc}(..., out=...)", inputs, kwargs)
        return ufunc(*inputs, **kwargs)

    def function_out(self, box, func, types, args, kwargs):
        args, kwargs = self._plain_only("out=...", args, kwargs)
        return func(*args, **kwargs)

    def refuse_ufunc_at(self, ufunc) -> None:
        raise MutationError(f"{getattr(ufunc, '__name__', ufunc)}.at on an array allocated in an "
                            "earlier differentiated call: call it on np.asarray(x).")


FREE = _Free()
FREE.writes = _FreeWrites()


def is_free(box) -> bool:
    return box._tape is FREE


def plain(value):
    """`value` with boxes set free replaced by their arrays (in lists, tuples and dicts too)."""
    if type(value) is Traced:
        return value._value if value._tape is FREE else value
    if type(value) is list or type(value) is tuple:
        return type(value)(plain(v) for v in value)
    if type(value) is dict:
        return {k: plain(v) for k, v in value.items()}
    return value


def _live_tape(values):
    for value in values:
        if type(value) is Traced:
            if value._tape is not FREE:
                return value._tape
        elif type(value) in (list, tuple):
            tape = _live_tape(value)
            if tape is not None:
                return tape
        elif type(value) is dict:
            tape = _live_tape(tuple(value.values()))
            if tape is not None:
                return tape
    return None


def set_free(tape, buffers: list) -> None:
    """Set free each of `buffers` (weak references to followed buffers of `tape`, whose function
    has returned) that is still alive, so referenced from somewhere, and holds no traced value."""
    for reference in buffers:
        box = reference()
        if box is None:
            continue
        try:
            value = constant_value(box)
        except Exception:  # a stale alias refused: the box stays the tape's, and refuses later
            continue
        if value is None or box._tape is not tape:
            continue
        if tape.effects is not None and type(value) is np.ndarray:
            value = np.copy(value, order="K")  # the sweep may undo and redo writes in it
        box._value = value
        box._tape = FREE

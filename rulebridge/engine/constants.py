"""Which boxes hold no traced value: their value does not depend on the traced arguments.

A buffer the tape follows (`np.zeros(n)` in differentiated code, rulebridge/writes/follow.py)
that never receives a traced value must behave as the plain array it would have been: convert
with `__array__`, `float()`, `.tolist()`, go to any library. Converting such a box cuts no
gradient, because none can flow through it.

A variable depends on the traced arguments when it is one of them, or an op that reads a
dependent variable defines it. The engine's allocations (`Writes.independent`) depend on nothing
even when shaped like a traced array (`np.zeros_like(x)`). The answer is kept per variable and
extended over the ops recorded since the last question, so asking costs O(new ops): nothing on
the recording path.

Once converted, the memory is the plain world's too: the array handed out is a read-only view
(a library cannot write behind the tape's back), and a later write of a traced value into that
memory raises (`exported`), since the plain array handed out would not follow it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_ndarray = np.ndarray


class Dependence:
    """Per tape (`constants_of(tape)`): which variables depend on the traced arguments."""

    __slots__ = ("depends", "scanned", "exported")

    def __init__(self) -> None:
        self.depends = bytearray()  # variable -> 1 when it depends on a traced argument
        self.scanned = 0  # ops of the tape looked at so far
        self.exported: list = []  # read-only views of constant boxes handed to plain code

    def update(self, tape) -> None:
        depends = self.depends
        if len(depends) < tape.n_vars:
            depends.extend(bytes(tape.n_vars - len(depends)))
        for var in tape.inputs:
            depends[var] = 1
        entries = tape.entries
        independent = tape.writes.independent
        for i in range(self.scanned, len(entries)):
            rule, _, _, inputs, outputs, _, _ = entries[i]
            if independent(rule) and all(v is None for v in inputs[1:]):
                continue  # a new buffer (a traced fill value would make it depend)
            if _any_depends(inputs, depends):
                for var in outputs:
                    if var is not None:
                        depends[var] = 1
        self.scanned = len(entries)


def _any_depends(inputs, depends) -> bool:
    for var in inputs:
        if var is None:
            continue
        if type(var) is int:
            if depends[var]:
                return True
        elif _any_depends(var, depends):
            return True
    return False


def constants_of(tape) -> Dependence:
    state = tape.__dict__.get("_dependence")
    if state is None:
        state = tape._dependence = Dependence()
    return state


def constant_value(box) -> Any:
    """The value of `box` when it holds no traced value and its tape is recording; else None.
    A box made stale by a write through an alias is brought up to date (or refused) first, as
    any read would be."""
    tape = box._tape
    if tape.finished:
        return None
    if getattr(tape, "plain", False):  # set free (rulebridge/engine/detached.py)
        return box._value
    if tape.guard is not None:
        tape.guard("a conversion to a plain value", (box,))
    state = constants_of(tape)
    state.update(tape)
    if box._var >= len(state.depends) or state.depends[box._var]:
        return None
    return box._value


def export(box, value, dtype=None, copy=None):
    """`__array__` of a constant box: a read-only view of its memory (remembered, so a later
    traced write into it is refused), or a fresh array when a copy or another dtype is asked."""
    if copy or (dtype is not None and np.dtype(dtype) != np.result_type(value)):
        return np.array(value, dtype=dtype, copy=True)
    if type(value) is not _ndarray:
        return np.array(value)  # a NumPy scalar: no memory to share
    if getattr(box._tape, "plain", False):
        return value  # set free: the caller's own array now
    view = value.view()
    view.flags.writeable = False
    constants_of(box._tape).exported.append(view)
    return view


def shares_exported(tape, array) -> bool:
    """Does `array` share memory with a constant box's value handed to plain code?"""
    state = tape.__dict__.get("_dependence")
    if state is None or not state.exported or type(array) is not _ndarray:
        return False
    return any(np.may_share_memory(array, e) for e in state.exported)


def depends(tape, var) -> bool:
    state = constants_of(tape)
    state.update(tape)
    return var < len(state.depends) and bool(state.depends[var])

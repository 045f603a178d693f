"""In-place writes inside a nested differentiation (grad of grad, hessian, hvp, a gradient step
inside a loss), recorded functionally.

At a nested level a box's value is a box of the level below (rulebridge/rules/levels.py), or the
written value is. The first-order discipline (write.py: write the memory, save what was
overwritten, swap it back in the sweep) would write the level below's boxes in place, and the
residuals of this level's earlier ops hold those very boxes: their pullbacks would read values
the forward never saw. So a write here is a pure function of the level below, as JAX writes
`x.at[i].set(v)`:

- one level down, the target is copied (a box's copy is recorded there; a plain array is
  allocated there as a box and filled) and the value is written into the copy, which is that
  level's own write, recorded by its own rules, nested again if it has to be;
- on this level, one op `x' = setitem(x, index, v)` whose pullback moves the cotangent as a
  write does (`FunctionalWrite`), and the box is rebound to the copy.

NumPy's aliasing is kept by refusing what a copy cannot mean: a write into an argument (the
caller's array would not change as NumPy changes it), into a view (its base would not see it),
or into memory plain code holds. Views of the written array taken before the write are stale
afterwards, and reading one raises MutationError (the write is logged like any other,
rulebridge/writes/views.py).
"""

from __future__ import annotations

import dis
import operator

import numpy as np

from ..engine.constants import shares_exported
from ..engine.refusals import STORES, asking_frame
from ..engine.box import NO_KWARGS
from ..errors import MutationError
from ..rules.levels import Box, primal, primals
from ..rules.signature import signature_of
from .indices import covers_all, has_repeats
from .functional import FunctionalWrite
from .write import Described, MutationState, _fit, _write_rule

_ndarray = np.ndarray
_BINARY_OP, _SWAP, _CACHE = (dis.opmap.get(name) for name in ("BINARY_OP", "SWAP", "CACHE"))


def writes_lower_level(box, value) -> bool:
    """Does `box[index] = value` reach values of an enclosing differentiation: the box's value
    is a box of a lower level, or the value is or holds one?"""
    box_type = type(box)
    if type(box._value) is box_type:
        return True
    return type(value) is box_type and (value._tape is not box._tape
                                         or type(value._value) is box_type)


def nested_setitem(box, index, value, what: str | None = None):
    """`box[index] = value` where `box` or `value` holds values of a lower level (see the
    module); returns `box`, rebound."""
    tape = box._tape
    tape.check_open(operator.setitem)
    tape.nested = True  # the box is rebound to a lower level's box (engine/sweep.py reads it)
    index = tape.protected.constants_in(index)
    target = box._value
    memory = primal(target)
    what = Described(what, index, memory)
    state = tape.effects or MutationState(tape, type(box))
    state.aliases.check(box, what)
    _refuse_unless_owned(tape, box, memory, what)
    value_var, lower_value = None, value
    if type(value) is type(box) and value._tape is tape:
        state.aliases.check(value, what)
        region = memory[index]
        value = _fit(value, np.shape(region), what)
        if has_repeats(index, memory.shape):
            raise MutationError(
                f"{what}: the index repeats a position, so NumPy keeps only one of the values "
                "written there and which one is unspecified.",
                fix="index = np.unique(index)  # write each position once")
        value_var, lower_value = value._var, value._value
    written = _written_copy(target, index, lower_value, memory)
    args = (target, index, lower_value)
    residuals = FunctionalWrite(index, lower_value, covers_all(index), memory.shape,
                                memory.dtype)
    var = tape.new_var()
    tape.entries.append((_write_rule(signature_of(primals(args))), args, NO_KWARGS,
                         (box._var, None, value_var), (var,), None, residuals))
    tape.last_outputs = (var,)
    state.aliases.logged(memory, memory, var, what)  # views taken before are stale now
    box._value, box._var = written, var
    return box


def _written_copy(target, index, value, memory):
    """One level down: a copy of `target` with `value` written at `index`."""
    if isinstance(target, Box):
        out = target.copy()
    else:  # a plain array here, written with a lower level's value: that level's box of it
        out = value._tape.record(np.zeros, (memory.shape,), {"dtype": memory.dtype},
                                 guarded=False)
        out[...] = target
    out[index] = value
    return out


def _refuse_unless_owned(tape, box, memory, what) -> None:
    if type(memory) is not _ndarray:
        raise MutationError(f"{what}: an in-place write into a {type(memory).__name__} inside a "
                            "nested differentiation.", fix="y = x + v  # instead of x += v")
    for var in tape.inputs:
        if np.may_share_memory(memory, primal(tape.values[var])):
            raise MutationError(
                f"{what}: an in-place write into an argument inside a nested differentiation "
                "(grad of grad, hessian, hvp, a gradient step inside a loss). rulebridge records "
                "writes at nested levels as copies, and the caller's array would not change as "
                "NumPy changes it.",
                fix="x = x.copy()  # first, inside the function; then write into x")
    if memory.base is not None:
        raise MutationError(
            f"{what}: an in-place write into a view inside a nested differentiation: rulebridge "
            "records writes at nested levels as copies, and the view's base would not see it.",
            fix="write into the base array itself (x[1:3] = v rather than view = x[1:]; "
                "view[:2] = v)")
    if shares_exported(tape, memory):
        raise MutationError(
            f"{what}: a write inside a nested differentiation into memory already handed to "
            "plain code (np.asarray, a library call), which would not see it.",
            fix="buf = buf.copy()  # before the write")


def stored_back() -> bool:
    """Is the code that asked running `x[index] op= v`, so that the operator's result is stored
    into `x[index]` next? Python runs it as `t = x[index]; t = t.__iop__(v); x[index] = t`,
    with `t` on its stack only: at a nested level, where a write into the view `t` is refused,
    the result can go to the store instead. Proven from the bytecode (Python 3.11 and 3.12:
    BINARY_OP, then SWAPs, then STORE_SUBSCR or STORE_SLICE); unproven elsewhere."""
    if _BINARY_OP is None or _SWAP is None:
        return False
    frame = asking_frame()
    if frame is None or frame.f_lasti < 0:
        return False
    code, i = frame.f_code.co_code, frame.f_lasti
    if code[i] != _BINARY_OP:
        return False
    i += 2
    while i < len(code) and code[i] == _CACHE:
        i += 2
    swaps = 0
    while i < len(code) and code[i] == _SWAP:
        i, swaps = i + 2, swaps + 1
    return swaps >= 2 and i < len(code) and code[i] in STORES

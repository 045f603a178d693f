"""Before a sweep, a tape keeps a large array alive only where a pullback needs it.

An op's traced arguments become stand-ins of the same shape and dtype (all the sweep reads of
them), and a `CallForward` rule may compact its residuals (`CallForward.compact`). Holding every
large intermediate raised the peak memory of a gradient above autograd's, which cost page faults
and cache misses on each call (benchmarks/suite.py's kron rows).
"""

from __future__ import annotations

import weakref

import numpy as np

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
    _shed(tape, tape.shed_from, False)
    tape.shed_from = len(tape.entries)


def large_output(tape) -> None:
    """`tape` recorded an output of LARGE_BYTES or more. A tape only the reverse sweep reads
    (`sheds_as_recorded`: grad, vjp, jacobian) sheds the ops recorded since it last did, while
    the function still runs: a loop's large temporaries (and the cyclic garbage holding them)
    are then freed as NumPy frees them, not kept by the tape until the sweep. Each op is shed
    before any write the program makes after it (`before_write`), so a VJP made now reads the
    memory its forward read."""
    tape.holds_large = True
    if tape.sheds_as_recorded:
        tape.decisions.clear()  # never replayed, and they hold arguments
        _shed(tape, tape.shed_from, True)
        tape.shed_from = len(tape.entries)


def before_write(tape) -> None:
    """The program is about to write into memory (rulebridge/writes/write.py, every first-order
    write): the ops recorded since the last shed are shed now, at the memory they read. Shedding
    goes on after it, so a loop that writes into a fresh buffer every iteration (and makes cyclic
    garbage of it) keeps no iteration's buffer alive through the ops that read it."""
    if tape.sheds_as_recorded and tape.holds_large:
        _shed(tape, tape.shed_from, True)
        tape.shed_from = len(tape.entries)


def _shed(tape, start: int, writes_may_follow: bool) -> None:
    """Shed the ops `tape.entries[start:]` (each once: `shed_from` says how far a tape got).

    A large traced argument becomes a stand-in; a small one that is a view of a large array (a
    row `x[i]` of a large temporary) a copy of its own, exact, so the op does not keep the whole
    array alive: the rule is handed the copy too (`Rule.rebased`, before `compact`, so a VJP made
    now captures the copy, not the view). While writes may follow, an argument the op's output
    is a view of is where a write through that view finds its parent
    (rulebridge/writes/views.py): it is kept by weak reference (`shed_parent`), since a parent
    no one holds has no views left to write through."""
    entries = tape.entries
    for index in range(start, len(entries)):
        rule, args, kwargs, inputs, outputs, structure, residuals = entries[index]
        if not _holds_large(rule, args, structure, residuals):
            continue
        argnums = tuple(i for i, v in enumerate(inputs) if v is not None)
        if structure is UNARY:
            output = residuals
        else:
            call = rule.call_residuals(residuals)
            output = writes_may_follow if call is None else call[0]  # (True: not known)
        # A function whose views writes follow: its output is a view of its first argument
        # even where the residuals do not show the output (`True`, not known).
        viewing = output is True and tape.writes.follows_views(rule.function)
        copies = _copies(args, inputs, output, writes_may_follow and (
            output is not True or viewing))
        rule_args = args if copies is None else tuple(
            copies.get(i, value) for i, value in enumerate(args))
        if structure is UNARY:
            compacted = rule.compacted((residuals, rule_args, None), argnums)  # CallResiduals'
            if compacted is None:
                if copies is None:
                    continue  # its residuals are made from Op.args: x must stay
            else:
                structure, residuals = None, compacted
        else:
            if copies is not None:
                rebased = rule.rebased(residuals, rule_args)
                if rebased is not None:
                    residuals = rebased
            compacted = rule.compacted(residuals, argnums)
            if compacted is not None:
                residuals = compacted
        shed = []
        for i, (value, var) in enumerate(zip(args, inputs)):
            if type(var) is not int or type(value) is not _ndarray:
                shed.append(value)
            elif copies is not None and i in copies:
                shed.append(copies[i])
            elif writes_may_follow and _aliases(output, value):
                if (output is True and not (viewing and i == 0)) or value.size < 2 or not (
                        _is_large(value) or _views_large(value)):
                    shed.append(value)  # not known what reads it
                else:
                    _parents(tape)[index] = weakref.ref(value)
                    shed.append(stand_in(value))
            elif _is_large(value):
                shed.append(stand_in(value))
            else:
                shed.append(value)
        entries[index] = (rule, tuple(shed), kwargs, inputs, outputs, structure, residuals)


def _copies(args: tuple, inputs: tuple, output, viewed: bool) -> dict | None:
    """Position -> a frozen copy, for each traced argument that is a small view of a large
    array, unless the op's output may be a view of it a write follows back to it (`viewed`:
    writes may follow, and the output is known, or from a function whose views writes follow).
    None: no argument is. Paid only here, on ops that hold a view of a large array, never on
    an op's record."""
    copies = None
    for i, (value, var) in enumerate(zip(args, inputs)):
        if (type(var) is int and type(value) is _ndarray and not _is_large(value)
                and _views_large(value) and not (viewed and _aliases(output, value))):
            if copies is None:
                copies = {}
            copies[i] = frozen(value)
    return copies


def shed_parent(tape, index: int, value):
    """The argument `value` of the op `tape.entries[index]` as the op read it: itself, or the
    array a stand-in took the place of while writes may follow (None once it was freed)."""
    parents = tape.__dict__.get("shed_parents")
    reference = None if parents is None else parents.get(index)
    return value if reference is None else reference()


def _parents(tape) -> dict:
    parents = tape.__dict__.get("shed_parents")
    if parents is None:
        parents = tape.shed_parents = {}  # op index -> weak reference to a shed argument
    return parents


def _aliases(output, array: np.ndarray) -> bool:
    if type(output) is _ndarray:
        return np.may_share_memory(output, array)
    if type(output) is tuple or type(output) is list:
        return any(_aliases(item, array) for item in output)
    return not isinstance(output, np.generic)  # True (not known) or another type: keep it


def is_stand_in(value) -> bool:
    """Is `value` what `stand_in` put in place of a large argument (or looks like it: the
    safe side, read as gone)?"""
    return (type(value) is _ndarray and value.size > 1 and not any(value.strides)
            and not value.flags.writeable)


def _is_large(x) -> bool:
    return type(x) is _ndarray and x.nbytes >= LARGE_BYTES


def _views_large(x) -> bool:
    """Is `x` a view of a large array (whose memory it keeps alive)?"""
    base = x.base
    return type(base) is _ndarray and base.nbytes >= LARGE_BYTES


def frozen(x: np.ndarray) -> np.ndarray:
    """A read-only copy of `x` that owns its memory."""
    copy = x.copy()
    copy.flags.writeable = False
    return copy


def _holds_large(rule, args: tuple, structure, residuals) -> bool:
    """A large argument (or a view of a large array), or a large output (what an op in the
    `UNARY` form keeps in place of residuals, or the output a CallForward's residuals hold)."""
    if any(type(value) is _ndarray and (value.nbytes >= LARGE_BYTES or _views_large(value))
           for value in args):
        return True
    if structure is UNARY:
        return _is_large(residuals)
    call = rule.call_residuals(residuals)
    return call is not None and _is_large(call[0])


def stand_in(array: np.ndarray) -> np.ndarray:
    """A read-only array of `array`'s shape and dtype that owns one element."""
    return np.broadcast_to(np.zeros((), array.dtype), array.shape)

"""An op: one recorded call, as the tape stores it (`Tape.entries`) and names it (`Tape.ops`).

The tape stores each op as a plain tuple in `Op`'s field order, and the engine unpacks it into
names in that order (tests/project/test_architecture.py checks every unpacking against `Op._fields`).
An `Op` itself, a tuple subclass, costs 2.5k more instructions an op to make, free and unpack
than a plain tuple (valgrind, the sin/tanh chain), and an instance of a slotted class 1.4k: see
docs/performance.md. `Tape.ops` names the stored tuples as `Op`s when they are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

_tuple_new = tuple.__new__


class _Unary:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNARY"


# `Op.structure` of the commonest op as the tape stores it: `y = f(x)` by a `CallForward` rule,
# with x a traced ndarray and no keywords. The stored `residuals` field then holds y alone: the
# rule's residuals, `CallResiduals(y, (x,), None)` (rulebridge/rules/rule.py), are made only when
# something needs them (a pullback, `Tape.ops`), and the sweep calls `Rule.unary_vjp(y, x)`
# straight from the op. Such an op saves a tuple on the forward pass, and the sweep's tests of
# whether an op is `y = f(x)`.
UNARY = _Unary()


class Op(NamedTuple):
    """One recorded call: `outputs = rule.function(*args, **kwargs)`.

    `inputs[i]` is the variable of positional argument `i` (an int), None for a constant, or a
    tuple of those for a list/tuple argument. `structure` is None for a single output, otherwise
    the container type the function returned (tuple, list, or a namedtuple class); the tape also
    stores the commonest op in the `UNARY` form, which `Tape.ops` shows as a single output with
    its rule's residuals."""

    rule: Any
    args: tuple
    kwargs: Any
    inputs: tuple
    outputs: tuple
    structure: Any
    residuals: Any


class OpsView(Sequence):
    """`Tape.ops`: the tape's ops as `Op`s, read-only; each item is named when it is read, O(1)."""

    __slots__ = ("_entries",)

    def __init__(self, entries: list) -> None:
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [as_op(entry) for entry in self._entries[index]]
        return as_op(self._entries[index])

    def __repr__(self) -> str:
        return f"<{len(self)} ops>"


def as_op(entry: tuple) -> Op:
    """A stored op (a plain tuple, or an Op a user put there) as an Op, in the form the rule
    contract describes."""
    if isinstance(entry, Op):
        return entry
    rule, args, kwargs, inputs, outputs, structure, residuals = entry
    if structure is UNARY:  # `residuals` holds the output alone
        return Op(rule, args, kwargs, inputs, outputs, None, (residuals, args, None))
    return _tuple_new(Op, entry)

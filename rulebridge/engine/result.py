"""What `trace` leaves on a tape for `replay` and printing: `Tape.arguments`, the traced call's
positional arguments, and `Tape.outputs`, its result.

Both are structures (rulebridge/tree.py) with each traced leaf replaced by its variable, an int;
every other leaf is held as a `Constant`, so an int the function returned is never read as a
variable. `bind` matches the arguments of a replay against `Tape.arguments`: containers of the
same structure (a tuple is not a namedtuple; a dict's keys are matched by name, in any order),
with the same constants, or else an error that says what differs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ArgumentError, UsageError
from ..tree import Structure, describe, tree_flatten


class Constant:
    """A leaf that no op computed (an int, a string, a plain array): in `Tape.outputs`, a
    result leaf; in `Tape.arguments`, an argument's leaf the tape computed with as it was."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def substitute_result(result: Any, env: dict[int, Any]) -> Any:
    """`result` with each variable replaced by its value in `env`."""
    leaves, structure = tree_flatten(result)
    return structure.unflatten([env[v] if type(v) is int else
                                v.value if type(v) is Constant else v for v in leaves])


class _Star:
    def __repr__(self) -> str:
        return "*"


def layout(structure: Structure) -> str:
    """A structure as it would be written, with `*` for each leaf: `{'W': *, 'b': (*, *)}`."""
    return repr(structure.unflatten([_Star()] * structure.n_leaves))


def bind(arguments: list | None, inputs: list[int], args: tuple) -> list:
    """One value per tape input (in `inputs`' order) for `tape.replay(*args)`: `args` are the
    traced call's positional arguments again, or (as before containers) one value per input."""
    if arguments is not None and len(args) == len(arguments):
        matched = [tree_flatten(a) for a in args]
        if all(s == structure for (_, s), (structure, _) in zip(matched, arguments)):
            values: dict[int, Any] = {}
            for i, ((leaves, _), (structure, held)) in enumerate(zip(matched, arguments)):
                paths = None
                for k, (leaf, var) in enumerate(zip(leaves, held)):
                    if type(var) is int:
                        values[var] = leaf
                    elif not _same(var.value, leaf):
                        paths = paths or structure.paths(f"args[{i}]")
                        raise ArgumentError(
                            f"tape.replay: {paths[k]} is {_text(leaf)}, but it was "
                            f"{_text(var.value)} when the tape was traced, and the tape "
                            "computes with that value (only float and complex leaves are "
                            "traced; other leaves are recorded into the ops as constants). "
                            "Trace again with the new value.")
            return [values[var] for var in inputs]
    if len(args) == len(inputs) and all(tree_flatten(a)[1].is_leaf for a in args):
        return list(args)
    raise UsageError(_mismatch(arguments, inputs, args))


def _mismatch(arguments: list | None, inputs: list[int], args: tuple) -> str:
    leaves = f"or one value per traced input ({len(inputs)})"
    if arguments is None:
        return f"tape.replay takes {len(inputs)} argument(s), one per traced input, got {len(args)}"
    traced = ", ".join(layout(structure) for structure, _ in arguments)
    if len(args) != len(arguments):
        return (f"tape.replay takes the {len(arguments)} positional argument(s) the tape was "
                f"traced with ({traced}) {leaves}, got {len(args)}")
    for i, (a, (structure, _)) in enumerate(zip(args, arguments)):
        got = tree_flatten(a)[1]
        if got != structure:
            return (f"tape.replay: args[{i}] is {describe(a)} laid out as {layout(got)}, but the "
                    f"tape was traced with {layout(structure)} there ({got.type_name()} vs "
                    f"{structure.type_name()} at the top; a tuple is not a namedtuple, and a "
                    "dict must have the same keys). Replay on arguments of the traced "
                    "structure, or trace again.")
    return f"tape.replay: the arguments do not match the tape's ({traced})"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (type(a) is type(b) and a.shape == b.shape and a.dtype == b.dtype
                and bool(np.array_equal(a, b)))
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # a value whose == raises: the very object only
        return a is b


def _text(x: Any) -> str:
    if isinstance(x, np.ndarray) and x.size > 8:
        return describe(x) + f" of dtype {x.dtype}"
    text = repr(x)
    return text if len(text) <= 40 else describe(x)

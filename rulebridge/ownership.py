"""What goes back to the caller: a cotangent laid out as its argument (`as_argument`), and
returned arrays that are the caller's own (`Ownership`: distinct, writable, aliasing nothing the
caller holds). Used once per call by the boundary (rulebridge/boundary.py), never per op."""

from __future__ import annotations

from typing import Any

import numpy as np

from .engine.box import Traced
from .rules.levels import primal
from .tree import is_container, tree_flatten

_ndarray = np.ndarray


def as_argument(ct: Any, arg: Any) -> Any:
    """The cotangent in the argument's own type: array, NumPy scalar or Python scalar (zeros
    for None). An array here may still be a read-only view or alias: `Ownership.give` it."""
    if type(arg) is Traced or type(ct) is Traced:  # an enclosing differentiation's values
        return _as_argument_box(ct, arg)
    if ct is None:
        ct = np.zeros_like(arg)
    if isinstance(arg, _ndarray):
        return ct if type(ct) is _ndarray else np.asarray(ct)
    if isinstance(arg, np.generic):
        return arg.dtype.type(ct)
    return type(arg)(ct[()] if isinstance(ct, _ndarray) else ct)


def _as_argument_box(ct: Any, arg: Any) -> Any:
    """`as_argument` where the argument or its cotangent is a box of an enclosing trace: the
    cotangent stays a box there (its value is checked against the argument's innermost primal:
    the sweep made it of that shape and dtype)."""
    return ct if type(ct) is Traced else as_argument(ct, primal(arg))


class Ownership:
    """Every array returned to the caller is the caller's own: writable, and sharing memory
    with nothing the caller holds (its arguments, its cotangents, a value returned to it) nor
    with another returned array. Arrays are told apart by the object that owns their memory,
    found by following `.base`; two arrays with the same owner count as sharing (a copy too
    many at worst), so no pairwise np.may_share_memory is needed."""

    __slots__ = ("_owners",)

    def __init__(self, args: tuple, *held: Any) -> None:
        """`args`: the call's positional arguments; `held`: anything else the caller holds."""
        owners: dict[int, Any] = {}
        self._owners = owners
        # The per-call cost counts for small programs: an argument that owns its memory is its
        # own owner, without a frame.
        for a in args:
            if type(a) is _ndarray and a.base is None:
                owners[id(a)] = a
            elif a is not None and not isinstance(a, float):
                self.hold(a)
        for tree in held:
            if tree is not None:
                self.hold(tree)

    def hold(self, tree: Any) -> None:
        if isinstance(tree, _ndarray):
            owner = _memory_owner(tree)
            self._owners[id(owner)] = owner
        elif is_container(tree):
            for leaf in tree_flatten(tree)[0]:
                self.hold(leaf)

    def give(self, ct: Any) -> Any:
        if type(ct) is not _ndarray:
            return ct
        owner = ct if ct.base is None else _memory_owner(ct)
        if not ct.flags.writeable or id(owner) in self._owners:
            ct = ct.copy()
            owner = ct
        self._owners[id(owner)] = owner
        return ct


def _memory_owner(a: _ndarray) -> Any:
    base = a.base
    while isinstance(base, _ndarray):
        a, base = base, base.base
    return a if base is None else base

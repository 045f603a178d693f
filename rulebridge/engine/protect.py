"""The caller's arrays are the caller's: rules see them read-only.

Each traced ndarray argument is boxed as a read-only view of the caller's array, made once per
argument when it is boxed (nothing is paid per op). Every rule's forward and pullback reads
the argument through that view, and so does every view NumPy makes of it (a slice of a
read-only array is read-only), so a buggy or hostile rule that writes into one raises instead of
changing the caller's data; the engine turns NumPy's refusal into an error naming the rule.

The program itself may write into its argument (README, "Code that writes into arrays"): those
writes are recorded by rulebridge/writes, which asks `CallersArrays.writable_memory` for a
writable array over the same memory, so they happen exactly as NumPy would make them.

A plain (untraced) argument that shares memory with a traced one (`grad(f)(a, a)`,
`grad(f)(a, a[1:])`) is handed to the function read-only too (`CallersArrays.shield`): a write
through it would change the traced argument behind the tape's back, which no recorded history
can follow, so NumPy refuses it and `plain_write_refused` says why. Only calls with such an
argument pay for the check (one `np.shares_memory` per pair of arrays, once per call).

What a pullback reads is what the forward saw. A plain ndarray an op reads (a closure constant,
an index array, a mask, a plain argument, an array in a list or a keyword) is recorded as
`CallersArrays.constant` makes it: a read-only copy of it as it was when the op ran, since its
owner may write into it later through any name (inside the differentiated code too). Copies are
kept per array and reused while the array still holds the same bytes, so a loop that reads one
constant a thousand times keeps one copy. The traced arguments are not copied (the program's own
writes into them must reach the caller, as NumPy would make them); where a pullback outlives the
call (`vjp`), rulebridge/boundary.py seals them (`sealed`) and the pullback refuses to run on an
argument whose bytes changed since (`changed`), naming it.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np

from ..errors import MutationError
from ..rules.levels import Box
from .refusals import nested_box

_ndarray = np.ndarray
_SHARES_MEMORY_WORK = 10_000  # np.shares_memory's budget; undecided counts as shared

WROTE_INTO_INPUT = (
    "tried to write into one of its arguments, which it received read-only: rules must never "
    "modify their inputs (they are the caller's arrays, or values other ops still use). Report "
    "it to the adapter's authors, and use another source meanwhile (source=... or "
    "rulebridge.prefer(function, name))")


def read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of `array` (the array itself is untouched)."""
    view = array.view()
    view.flags.writeable = False
    return view


def is_read_only_write(exc: BaseException) -> bool:
    """Is `exc` NumPy's refusal to write into a read-only array?"""
    return type(exc) is ValueError and "read-only" in str(exc)


class CallersArrays:
    """Per tape: the read-only view each traced argument is boxed as, and the caller's array;
    the copies of the plain arrays its ops read."""

    __slots__ = ("views", "shielded", "copies")

    def __init__(self) -> None:
        self.views: dict[int, tuple] = {}  # id(view) -> (view, the caller's array)
        self.shielded: list[str] = []  # the plain arguments `shield` made read-only, named
        # id(array) -> (weak reference to array, its read-only copy, (bytes, shape) when
        # small); a copy maps to None in place of itself. Weak: a temporary the program drops
        # (a slice of a large array, a closure's array in cyclic garbage) is freed as NumPy
        # frees it, its copy once no op holds it; its entry goes with it, so an id is never
        # read as another array's.
        self.copies: _Copies = _Copies()

    def constant(self, array: np.ndarray) -> np.ndarray:
        """What an op records in place of the plain ndarray `array` it reads: a read-only copy
        of it as it is now, made once and reused while `array` holds the same bytes (and has
        the same shape and dtype: `x.shape = ...` changes them in place)."""
        pair = self.copies.get(id(array))
        if pair is not None and pair[0]() is array:
            copy = pair[1]
            if copy is None:  # array is a copy itself
                return array
            small = pair[2]  # (bytes, shape) of a small array: one tobytes() per check
            if small is not None:
                if (array.tobytes() == small[0] and array.shape == small[1]
                        and array.dtype is copy.dtype):
                    return copy
            elif same(array, copy):
                return copy
        copy = self._same_region(array) if array.base is not None else None
        if copy is None:
            copy = frozen_copy(array)
        small = (copy.tobytes(), copy.shape) if copy.nbytes <= _SMALL_BYTES else None
        copies = self.copies
        copies[id(array)] = (copies.reference(array), copy, small)
        copies[id(copy)] = (copies.reference(copy), None, None)
        return copy

    def _same_region(self, array: np.ndarray) -> np.ndarray | None:
        """The copy made for an earlier view of the same memory (`C[:n]` in a loop is a new
        array each time) while it holds the same bytes: one copy, not one per iteration.
        Only large views are remembered, weakly (a copy no op holds is freed)."""
        if array.nbytes < _REGION_BYTES:
            return None
        region = (array.__array_interface__["data"][0], array.shape, array.strides,
                  array.dtype.str)
        regions = self.copies.regions
        reference = regions.get(region)
        copy = None if reference is None else reference()
        if copy is not None and same(array, copy):
            return copy
        copy = frozen_copy(array)
        regions[region] = weakref.ref(copy)
        return copy

    def constants_in(self, value: Any, depth: int = 0) -> Any:
        """`value` (an argument or keyword of an op) with each plain ndarray in it, also inside
        tuples and lists (an index, a list of arrays), replaced by `constant`'s copy; a list is
        always a new one (its owner may change it, `x[idx]` with `idx` a list).

        The tape unboxes a traced argument and the traced items of a list or tuple argument; a
        box a list deeper (`np.block([[a, b], [c, d]])`) or in a dict would reach the op's
        forward still boxed, which hands the call back to the tape without end: `nested_box`
        refuses it."""
        if type(value) is _ndarray:
            return self.constant(value)
        if type(value) is list:
            return [self.constants_in(item, depth + 1) for item in value]
        if type(value) is tuple and value:
            items = [self.constants_in(item, depth + 1) for item in value]
            if any(a is not b for a, b in zip(items, value)):
                return tuple(items)
        elif type(value) is dict:  # the tape unboxes no dict: a box anywhere in one is refused
            for item in value.values():
                self.constants_in(item, 2)
        elif depth > 1 and isinstance(value, Box):
            raise nested_box(value)
        return value

    def constant_keywords(self, kwargs: dict) -> dict:
        """`kwargs` with `constants_in` applied to each value (the same dict when none holds an
        array)."""
        for name, value in kwargs.items():
            if type(value) is _ndarray or type(value) is tuple or type(value) is list:
                return {k: self.constants_in(v) for k, v in kwargs.items()}
        return kwargs

    def shield(self, array: np.ndarray, name: str) -> np.ndarray:
        """`array`, a plain argument (or a leaf of one) of the differentiated function, as the
        function receives it: read-only when it shares memory with a traced argument."""
        if self.views and array.flags.writeable and self._shares_memory(array):
            self.shielded.append(name)
            return read_only(array)
        return array

    def _shares_memory(self, array: np.ndarray) -> bool:
        for view, original in self.views.values():
            if view is array or not np.may_share_memory(array, original):
                continue
            try:
                if np.shares_memory(array, original, max_work=_SHARES_MEMORY_WORK):
                    return True
            except np.exceptions.TooHardError:
                return True  # undecided: read-only is the safe side (a clear error)
        return False

    def plain_write_refused(self, exc: BaseException, function: str) -> None:
        """Raise MutationError when `exc`, raised by the differentiated `function`, is NumPy's
        refusal to write into an argument `shield` made read-only; return otherwise."""
        if not self.shielded or not is_read_only_write(exc):
            return
        raise MutationError(
            f"{function} wrote into a read-only array; its {', '.join(self.shielded)} shares "
            "memory with an argument being differentiated (the same array passed twice, or a "
            "view of it), so rulebridge passed it read-only: a write through it would change the "
            "differentiated argument behind the tape's back and give a wrong gradient. Pass a "
            "copy (f(x, x.copy())), write through the differentiated argument itself, or "
            "differentiate both (argnums=(0, 1)). (If the write was into another read-only "
            "array, NumPy's own error is printed above.)") from exc

    def protect(self, array: np.ndarray) -> np.ndarray:
        """The read-only view of the caller's `array` that the box holds and rules see."""
        view = read_only(array)
        self.views[id(view)] = (view, array)
        return view

    def unprotected(self, value: Any) -> Any:
        """The caller's own array for its view (the program returned its argument); else
        `value` itself."""
        pair = self.views.get(id(value))
        return pair[1] if pair is not None and pair[0] is value else value

    def writable_memory(self, array: np.ndarray) -> np.ndarray | None:
        """A writable array over the memory of `array` when `array` is, or was made by views
        from, the view of a writable caller's array; None otherwise. (Which views the program
        may write through is the caller's decision: rulebridge/writes/write.py.)"""
        pair = self.views.get(id(array))
        if pair is not None and pair[0] is array:
            return pair[1] if pair[1].flags.writeable else None
        for view, original in self.views.values():
            if (original.flags.writeable and array.base is not None
                    and array.base is _owner(original)
                    and (array.size == 0 or np.may_share_memory(array, view))):
                # A zero-size view shares no memory with anything (np.may_share_memory says
                # False), so only its base tells it is the argument's; writing it writes nothing.
                return np.asarray(_Memory(array, original))
        return None


class _Copies(dict):
    """`CallersArrays.copies`: entries that leave when their array is freed; `regions`, the
    copies of large views by the memory they were made from."""

    __slots__ = ("__weakref__", "regions")

    def __init__(self) -> None:
        super().__init__()
        self.regions: dict = {}  # (address, shape, strides, dtype) -> weak reference to a copy

    def reference(self, array: np.ndarray) -> weakref.ref:
        return weakref.ref(array, functools.partial(_forget, weakref.ref(self), id(array)))


def _forget(copies_ref, key: int, reference) -> None:
    copies = copies_ref()
    if copies is not None:
        pair = copies.get(key)
        if pair is not None and pair[0] is reference:
            del copies[key]


class _Memory:
    """The memory of a read-only view, offered writable (NumPy reads `__array_interface__`);
    `base` keeps the caller's array alive, and is where an owner search walks to."""

    def __init__(self, array: np.ndarray, base: np.ndarray) -> None:
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface
        self.base = base


def frozen_copy(array: np.ndarray) -> np.ndarray:
    """A read-only copy of `array` in its own layout (NumPy's results, to the bit, do not
    depend on which copy a function reads). A broadcast array (a zero stride) is copied as the
    one element per broadcast axis it holds, and broadcast again."""
    if 0 in array.strides and array.size > 1:
        compact = array[_compact_index(array)]
        copy = np.broadcast_to(compact.copy(order="K"), array.shape)  # read-only
    else:
        copy = array.copy(order="K")
        copy.setflags(write=False)
    return copy


def _compact_index(array: np.ndarray) -> tuple:
    return tuple(slice(0, 1) if stride == 0 else slice(None) for stride in array.strides)


_SMALL_BYTES = 4096
_REGION_BYTES = 1 << 16  # shedding.py's LARGE_BYTES: below it a copy per view costs little


def same(array: np.ndarray, copy: np.ndarray) -> bool:
    """Does `array` hold exactly the bytes of `copy` (`frozen_copy` of it, or an earlier copy of
    an array of its shape and dtype)? Byte for byte, so NaN equals itself and -0.0 is not 0.0."""
    if array.shape != copy.shape or array.dtype != copy.dtype:
        return False
    if 0 in copy.strides and copy.size > 1:
        index = _compact_index(copy)
        array, copy = array[index], copy[index]
    if array.nbytes <= _SMALL_BYTES or array.dtype.kind not in "biufc":
        return array.tobytes() == copy.tobytes()
    size = array.dtype.itemsize
    word = np.uint64 if size % 8 == 0 else np.uint32 if size % 4 == 0 else \
        np.uint16 if size % 2 == 0 else np.uint8
    order = "K" if array.strides == copy.strides else "C"  # one element order for both
    return bool(np.array_equal(np.ravel(array, order).view(word), np.ravel(copy, order).view(word)))


def _owner(array):
    """The object that owns `array`'s memory: what NumPy sets as the `base` of its views."""
    while isinstance(array.base, _ndarray):
        array = array.base
    return array if array.base is None else array.base

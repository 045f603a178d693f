"""Aliasing: keeping the tape in agreement with NumPy when arrays share memory.

A box is *stale* when its memory was overwritten, after its variable was made, through another
array (a view of it, or its base): NumPy's read would see the new values, which its variable's
recorded history lacks. Each write logs `(variable created, region written)` under the memory's
owner (the base array); variables are numbered in creation order, so a box is stale exactly when
a logged write newer than its variable overlaps its memory. Only tapes that have written pay for
this check (see rulebridge/writes/write.py).

A stale box is brought up to date instead of refused when its history allows it, for views made
by the functions in `VIEWS` (basic indexing, reshape, transpose; the op that made a view is found
by a binary search over the tape, so nothing is kept per op):

- A write through a view `v = u[idx]` is also recorded on the parent as `u' = setitem(u, idx,
  v')`, without a second physical write (`u' = reshape(v', u.shape)` for a reshape view); `u`'s
  variable is *superseded* by `u'`.
- Every box resolves superseded variables when it is read, so the parent box picks `u'` up.
- A view read after its parent was written is taken again from the parent (`getitem(u', idx)`),
  recorded with the source's rule, when the parent itself is up to date.

Anything else (a view made by another function, a write overlapping memory the tape cannot
relate) raises MutationError naming the reading operation and the write.
"""

from __future__ import annotations

import bisect
import operator
import weakref

import numpy as np

from ..engine.hooks import Effect
from ..engine.shedding import shed_parent
from ..engine.tape import Tape
from ..errors import MutationError
from ..rules.levels import Box
from ..rules.rule import function_name
from ..rules.signature import format_spec, spec_of

_ndarray = np.ndarray
_byte_bounds = getattr(getattr(np.lib, "array_utils", np), "byte_bounds")  # NumPy 2 / 1.26
BASIC_INDEX = frozenset({int, slice, type(None), type(Ellipsis), np.intp, np.int64})


class Aliases:
    """Per tape: the write log per memory owner, and which variables supersede which."""

    tape = property(lambda self: self._tape())

    def __init__(self, tape: Tape, box_type: type) -> None:
        self._tape = weakref.ref(tape)  # owned by the tape (via its MutationState): no cycle
        self.box_type = box_type
        self.log: dict[int, list] = {}  # id(owner) -> [(variable created, region, description)]
        # id(owner) -> what keeps that id unique: a weak reference whose callback forgets the
        # owner's log when it is freed (a loop's buffers are freed as NumPy frees them), or the
        # owner itself when it cannot be referenced weakly
        self.owners: dict = {}
        self.clean: dict[int, int] = {}  # variable -> newest write it was checked against
        self.superseded: dict[int, int] = {}  # variable -> a newer variable of the same array
        # A parent rebuilt from its written view (reshape(v', u.shape)) -> the parent's variable
        # before: its origin is that variable's, not the view it was computed from.
        self.rebuilt: dict[int, int] = {}

    def check(self, box, reader, overwritten=None) -> None:
        """Bring `box` up to date (rebinding it to its newest variable), or raise MutationError.
        Writes inside `overwritten`, a region the caller is about to overwrite whole, do not
        count: that is how Python runs `x[i] += v` for a non-getitem view."""
        var = self.latest(box._var)
        what = self.stale(box._value, var, overwritten)
        if what is not None:
            var = self.rederive(var, box._value)
            if var is None:
                raise _stale(box, reader, what)
        box._var = var

    def latest(self, var: int) -> int:
        superseded = self.superseded
        if var not in superseded:
            return var
        newest = var
        while newest in superseded:
            newest = superseded[newest]
        superseded[var] = newest
        return newest

    def stale(self, array, var: int, overwritten=None):
        """The newest write that overwrote part of `array` after `var` was made, or None."""
        entries = self.log.get(id(owner_of(array)))
        if entries is None:
            return None
        since = self.clean.get(var, var)
        if entries[-1][0] <= since:
            return None
        for written_var, region, what in reversed(entries):
            if written_var <= since:
                break
            if _overlaps(array, region) and not _within(region, overwritten):
                return what
        self.clean[var] = entries[-1][0]
        return None

    def logged(self, target, region, out_var: int, what) -> None:
        owner = owner_of(target)
        key = id(owner)
        entries = self.log.get(key)
        if entries is None:
            entries = self.log[key] = []
            self.owners[key] = _keep(owner, self.log, self.owners, key)
        if type(self.owners[key]) is weakref.ref:
            region = Region(region, owner)  # the region must not keep the owner alive
        entries.append((out_var, region, what))

    # -- views ---------------------------------------------------------------------------------

    def origin(self, var: int, array):
        """`(parent variable, parent array, view op)` when `array` (of variable `var`) is a view
        of a traced parent made by one of the VIEWS ops, else None."""
        ops = self.tape.ops
        while True:
            i = bisect.bisect_left(ops, var, key=_last_output)
            if i == len(ops) or var not in ops[i].outputs:
                return None  # an input, or a box from before this tape
            op = ops[i]
            if isinstance(op.residuals, Effect):  # a write: the array before it
                var = op.inputs[0]
                continue
            if var in self.rebuilt:
                var = self.rebuilt[var]
                continue
            view = VIEWS.get(op.rule.function)
            parent = shed_parent(self.tape, i, op.args[0])  # (a stand-in once it was shed)
            if (view is None or type(op.inputs[0]) is not int or type(parent) is not _ndarray
                    or not view.accepts(op) or not _shares(array, parent)):
                return None
            return op.inputs[0], parent, op

    def current(self, var: int, array):
        """The newest variable of `array`, re-derived when needed; None when it cannot be."""
        var = self.latest(var)
        if self.stale(array, var) is None:
            return var
        return self.rederive(var, array)

    def rederive(self, var: int, array):
        """A stale view, recorded again from its parent's newest variable."""
        origin = self.origin(var, array)
        if origin is None:
            return None
        parent_var, parent, op = origin
        parent_var = self.current(parent_var, parent)
        if parent_var is None:
            return None
        fresh = VIEWS[op.rule.function].derive(self.tape, op, self.box(parent, parent_var))
        self.superseded[var] = fresh._var
        return fresh._var

    def box(self, array, var: int):
        return self.box_type(array, var, self.tape)


class View:
    """A NumPy function that returns a view: how to take it again from a newer parent, and (for
    views covering the whole parent) how to rebuild the parent from a written view. Both are
    recorded with the sources' rules for these functions."""

    def __init__(self, accepts, derive, rebuild=None):
        self.accepts = accepts  # op -> bool: this call made a view rulebridge can follow
        self.derive = derive  # (tape, op, parent box) -> view box
        self.rebuild = rebuild  # (tape, op, view box, parent array) -> parent box; None: partial


def _basic_index(op) -> bool:
    index = op.args[1]
    return all(type(i) in BASIC_INDEX for i in (index if type(index) is tuple else (index,)))


def _inverse_axes(axes):
    return None if axes is None else tuple(int(a) for a in np.argsort(axes))


VIEWS = {
    operator.getitem: View(
        _basic_index, lambda tape, op, parent: tape.record(
            operator.getitem, (parent, op.args[1]), {}, guarded=False)),
    np.reshape: View(
        lambda op: len(op.args) == 2 and not op.kwargs,
        lambda tape, op, parent: tape.record(np.reshape, (parent, op.args[1]), {}, guarded=False),
        lambda tape, op, view, parent: tape.record(np.reshape, (view, parent.shape), {}, guarded=False)),
    np.transpose: View(
        lambda op: len(op.args) <= 2 and not op.kwargs,
        lambda tape, op, parent: tape.record(np.transpose, (parent,) + op.args[1:], {},
                                                guarded=False),
        lambda tape, op, view, parent: tape.record(
            np.transpose, (view, _inverse_axes(op.args[1] if len(op.args) == 2 else None)), {},
            guarded=False)),
}


def _last_output(op) -> int:
    last = op.outputs[-1]  # outputs are numbered in order; a multi-output op may end in None
    return last if last is not None else max(v for v in op.outputs if v is not None)


def owner_of(a):
    """The object that owns `a`'s memory (NumPy keeps a view's `base` pointing at it); a box
    of a lower level, whose memory is that level's business, is its own (levels.py)."""
    if isinstance(a, Box):
        return a
    base = getattr(a, "base", None)
    while base is not None:
        a = base
        base = getattr(a, "base", None)
    return a


def _shares(view, parent) -> bool:
    """Can `view` be a view of `parent`? A zero-size array shares no memory with anything
    (np.may_share_memory says False), so the op that made it is what says so: it is followed
    like any view, and writing into it writes nothing."""
    return (type(view) is _ndarray and view.size == 0) or np.may_share_memory(view, parent)


def _keep(owner, log: dict, owners: dict, key: int):
    """What `Aliases.owners` holds for `owner`: a weak reference that forgets `key`'s log when
    the owner is freed (before its id can be reused), for an ndarray that owns its memory."""
    if type(owner) is not _ndarray or owner.base is not None:
        return owner

    def forget(_, log=log, owners=owners, key=key):
        log.pop(key, None)
        owners.pop(key, None)

    return weakref.ref(owner, forget)


class Region:
    """A logged region of a weakly held owner: its place in the owner's memory, not a view of
    it (a view would keep the owner alive). `array()` is the view again, while the owner lives
    (the log is forgotten when it dies)."""

    __slots__ = ("owner", "offset", "shape", "strides", "dtype")

    def __init__(self, region, owner) -> None:
        self.owner = weakref.ref(owner)
        self.offset = region.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        self.shape, self.strides, self.dtype = region.shape, region.strides, region.dtype

    def array(self) -> np.ndarray:
        return np.ndarray(self.shape, self.dtype, buffer=self.owner(), offset=self.offset,
                          strides=self.strides)


def _overlaps(value, region) -> bool:
    if type(region) is Region:
        region = region.array()
    if type(value) is not _ndarray or not np.may_share_memory(value, region):
        return False
    try:
        return np.shares_memory(value, region, max_work=10_000)
    except np.exceptions.TooHardError:
        return True  # undecided: assume they overlap (a clear error, never a wrong gradient)


def _within(region, outer) -> bool:
    """Is every element of `region` inside `outer`? Exact for the same view, and for any region
    of a contiguous `outer`; otherwise it answers False (the caller then refuses)."""
    if outer is None:
        return False
    if type(region) is Region:
        region = region.array()
    inner = region.__array_interface__
    bounds = outer.__array_interface__
    if (inner["data"][0], region.shape, region.strides) == (bounds["data"][0], outer.shape,
                                                             outer.strides):
        return True
    if not (outer.flags.c_contiguous or outer.flags.f_contiguous):
        return False
    low, high = _byte_bounds(region)
    outer_low, outer_high = _byte_bounds(outer)
    return outer_low <= low and high <= outer_high


def _stale(box, reader, what) -> MutationError:
    name = reader if isinstance(reader, str) else function_name(reader)
    return MutationError(
        f"{name} reads a traced array ({describe(box._value)}) whose memory was overwritten "
        f"later through another array sharing it (a view of it, or its base): {what}. With "
        "NumPy's aliasing the read sees the new values, which are not part of this array's "
        "recorded history, so its gradient would be wrong (rulebridge follows views made by "
        "basic indexing, reshape and transpose). Write through the array itself, or copy "
        "before writing (v = np.diagonal(x).copy()).")


def describe(x) -> str:
    return f"{format_spec(spec_of(x))} of shape {np.shape(x)}"

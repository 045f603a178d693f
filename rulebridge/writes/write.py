"""In-place writes on the tape: `x[i] = v`, `x += y`, `np.exp(x, out=x)`, `x.fill(v)`.

The discipline is Mooncake's. The primal program runs exactly as NumPy runs it: a write really
writes into the array (a caller's argument included), so every value, and every alias through a
view, is NumPy's own. A write is one tape op, `x' = setitem(x, index, v)`, that first saves what it
overwrites (a copy of `x[index]`, so its cost is proportional to what it writes) and rebinds the
box to the new variable `x'`. Its pullback *swaps* the saved values back in before anything else.
Because the sweep runs pullbacks in reverse order, every earlier op's pullback then sees the
primal state its forward saw: the arrays an op keeps as residuals (autograd's `(out, args,
kwargs)`) are restored in place rather than copied on every write, which is what makes restoring
exact and cheap. (Copy-on-write of the box's primal would be the alternative: it costs the whole
array at every write to an array some op still references, which is every write in a loop that
also reads, and it breaks NumPy's aliasing, since views of the old array would not see the
write.) After the sweep, `MutationState.sweep` swaps every restored write forward again,
so the caller sees NumPy's final result and a `vjp` pullback can run any number of times.

Cotangents of a write are pure data movement: `v` gets `g[index]` (broadcast values go through an
imported `np.add` rule, whose unbroadcast is the source's maths), `x` gets `g` with `g[index]`
zeroed. The zeroing happens in place when `g` is the buffer this module handed to that variable
itself (nobody else can hold it), so a loop of single-element writes costs O(1) per write in both
directions after one copy.

Aliasing (a box whose memory was overwritten through a view or its base) is
rulebridge/writes/views.py: it is checked only on tapes that have written (the first write makes
`MutationState.guard` the tape's guard), so code that never writes pays nothing.
"""

from __future__ import annotations

import operator
import weakref
from typing import Any

import numpy as np

from .views import VIEWS, Aliases, describe
from ..rules.conform import conform_cotangent
from ..engine.constants import depends, shares_exported
from ..engine.detached import is_free
from ..engine.hooks import Effect, Effects
from ..engine.shedding import LARGE_BYTES, before_write, stand_in
from ..engine.tape import Op, Tape
from ..errors import MutationError
from ..rules.rule import Rule
from ..rules.signature import signature_of
from .functional import _functional_write
from .indices import covers_all, format_index, has_repeats

_ndarray = np.ndarray


class WriteOp(Op):
    """A recorded write; the sweep restores what it overwrote even when it gets no cotangent."""

    __slots__ = ()


class Write(Effect):
    """What one write needs in reverse: where it wrote, and the values it replaced. As an
    `Effect`, the sweep undoes it when it gets no cotangent; its pullback undoes it otherwise."""

    __slots__ = ("_target", "index", "saved", "restored", "full", "in_var", "out_var", "value",
                 "state", "written", "shape", "dtype")

    def __init__(self, target, index, saved, full, in_var, out_var, value, state):
        # An array that owns its memory is held weakly: once nothing else holds it (a loop's
        # buffer, garbage in a cycle), no pullback reads it, and restoring it would change
        # nothing anyone sees. A view is held (it keeps its base alive, which others may read).
        self._target = weakref.ref(target) if target.base is None else target
        self.shape, self.dtype = target.shape, target.dtype
        self.index = index
        self.saved = saved  # the overwritten values (after a restore: the written ones)
        self.restored = False
        self.full = full  # the write covers the whole target
        self.in_var = in_var
        self.out_var = out_var
        self.value = value  # the primal of the written value (for its cotangent's shape, dtype)
        self.state = state
        # what a write into a traced argument's memory left there, for the check that nothing
        # else wrote that memory (`MutationState.undo_checking`); None for other writes
        self.written = None

    @property
    def target(self):
        """The written array; None once it was freed (it was held weakly)."""
        target = self._target
        return target() if type(target) is weakref.ref else target

    def swap(self) -> None:
        """Put the saved values back and keep the current ones: restores, and then redoes."""
        target = self.target
        if target is not None:
            current = target[self.index]
            if type(current) is _ndarray and np.may_share_memory(current, target):
                current = current.copy()
            target[self.index] = self.saved
            self.saved = current
        self.restored = not self.restored

    undo = swap

    def redo(self) -> None:
        if self.restored:
            self.swap()

    def pushforward(self, tangents, argnums):
        """The write's tangent, a write of tangents: the target's (zeros when it is constant)
        with the value's (zeros when it is constant) written at the index."""
        out = np.zeros(self.shape, self.dtype) if argnums[0] != 0 else \
            np.array(tangents[0], dtype=self.dtype, copy=True)
        out[self.index] = tangents[-1] if argnums[-1] == 2 else 0
        return out

    def pullback(self, g, argnums):
        """`argnums` is (0,) or (0, 2): the target is always traced, the value may be."""
        self.swap()
        if g is None:
            return (None,) * len(argnums)
        with_value = len(argnums) == 2
        if self.full:  # nothing of the old target survives; the value gets all of g
            return (None, conform_cotangent(g, self.value)) if with_value else (None,)
        handed = self.state.handed
        mine = handed.pop(self.out_var, None)  # then no one else holds g: zero in place
        ours = mine is not None and mine() is g
        value_ct = None
        if with_value:
            value_ct = g[self.index]
            if ours and type(value_ct) is _ndarray and np.may_share_memory(value_ct, g):
                value_ct = value_ct.copy()
            value_ct = conform_cotangent(value_ct, self.value)
        target_ct = g if ours else np.array(g, copy=True)
        target_ct[self.index] = 0
        # weakly: a variable no write made (a buffer's allocation) never takes its entry back
        handed[self.in_var] = weakref.ref(target_ct)
        return (target_ct, value_ct) if with_value else (target_ct,)


class Propagated(Write):
    """A view's write seen from its parent: the memory was written (and is restored) by the
    view's own write, so swapping moves nothing."""

    __slots__ = ()

    def swap(self) -> None:
        self.restored = not self.restored

    undo = swap  # not Write.swap, which `undo = swap` in Write names


def _write_pullback(residuals, g, argnums):
    return residuals.pullback(g, argnums)


def _write_jvp(residuals, tangents, argnums):
    return residuals.pushforward(tangents, argnums)


class MutationState(Effects):
    """Per tape, created by its first write (`Tape.effects`): the writes in order, the aliases,
    and the cotangent buffers this module owns during a sweep."""

    def __init__(self, tape: Tape, box_type: type) -> None:
        # A weak reference: the tape owns this state (tape.effects), and a strong one back would
        # make a cycle that keeps the tape and its residuals alive until the cyclic collector runs.
        self._tape = weakref.ref(tape)
        self.box_type = box_type
        self.writes: list[WriteOp] = []
        self.aliases = Aliases(tape, box_type)
        self.handed: dict[int, Any] = {}  # variable -> weakref to a cotangent buffer it owns
        tape.set_effects(self)  # from now on, reads check for stale aliases

    @property
    def tape(self) -> Tape:
        return self._tape()

    # -- recording -----------------------------------------------------------------------------

    def guard(self, function, args) -> None:
        """Before each recorded op: every box read is brought up to date, or refused."""
        box_type, tape = self.box_type, self.tape
        for a in args:  # (a lower level's box is that tape's: rulebridge/rules/levels.py)
            if type(a) is box_type:
                if a._tape is tape:
                    self.aliases.check(a, function)
            elif type(a) is list or type(a) is tuple:
                for item in a:
                    if type(item) is box_type and item._tape is tape:
                        self.aliases.check(item, function)

    def check_result(self, result) -> None:
        """The function's return value is read too: a stale box there would seed a wrong
        variable."""
        if type(result) is self.box_type:
            self.aliases.check(result, "the returned value")
        elif isinstance(result, (tuple, list)):
            for item in result:
                self.check_result(item)

    def record(self, kind, target, index, saved, in_var, value_var, value) -> int:
        """Append one write op; returns the variable it defines (and supersedes `in_var` by)."""
        tape = self.tape
        out_var = tape.new_var()
        record = kind(target, index, saved, covers_all(index), in_var, out_var, value, self)
        if tape.sheds_as_recorded and target.nbytes >= LARGE_BYTES:
            target = stand_in(target)  # the sweep reads its shape and dtype; the record, all
        args = (target, index, value)
        op = WriteOp(_write_rule(signature_of(args)), args, {}, (in_var, None, value_var),
                     (out_var,), None, record)
        tape.entries.append(op)
        self.writes.append(op)
        self.aliases.superseded[in_var] = out_var
        return out_var

    def propagate(self, view_var: int, new_var: int, view) -> None:
        """A write into a view is a write into its parent too: `u' = setitem(u, idx, v')` for
        `v = u[idx]` (NumPy already wrote the memory), `u' = reshape(v', u.shape)` for a reshape
        view, and so on up the views."""
        aliases = self.aliases
        origin = aliases.origin(view_var, view)
        while origin is not None:
            parent_var, parent, op = origin
            parent_var = aliases.current(parent_var, parent)
            if parent_var is None:
                return  # the parent is stale anyway: reading it will raise
            rebuild = VIEWS[op.rule.function].rebuild
            if rebuild is None:
                out_var = self.record(Propagated, parent, op.args[1], None, parent_var, new_var,
                                      view)
            else:
                out_var = rebuild(self.tape, op, aliases.box(view, new_var), parent)._var
                aliases.superseded[parent_var] = out_var
                aliases.rebuilt[out_var] = parent_var
            origin = aliases.origin(parent_var, parent)
            new_var, view = out_var, parent

    # -- the reverse sweep ---------------------------------------------------------------------

    def begin_sweep(self, seeds: dict) -> dict:
        """The sweep restores each write as it passes it. A seed may share memory with a written
        array (pullback(y) with y the written buffer itself), which restoring would change under
        the sweep: seeds are copied."""
        self.handed = {}
        return {var: np.array(s, copy=True) if type(s) is _ndarray else s
                for var, s in seeds.items()}

    def begin_forward(self) -> None:
        self.handed = {}
        for op in reversed(self.writes):
            if not op.residuals.restored:
                op.residuals.swap()

    def undo_checking(self):
        """`begin_forward`'s undo, checking on the way that each write into a traced argument's
        memory still finds there what it left (later recorded writes undone first): the memory
        something else wrote since, else None. `end_sweep` redoes them."""
        self.handed = {}
        overwritten = None
        for op in reversed(self.writes):
            record = op.residuals
            if not record.restored:
                written, target = record.written, record.target
                if written is not None and overwritten is None and target is not None and \
                        np.asarray(target[record.index]).tobytes() != written.tobytes():
                    overwritten = target
                record.swap()
        return overwritten

    def end_sweep(self) -> None:
        """Redo the restored writes in forward order (also after a pullback raised), so the
        caller sees NumPy's final result and a pullback can run again."""
        self.handed = {}
        for op in self.writes:
            if op.residuals.restored:
                op.residuals.swap()


# -- writing ------------------------------------------------------------------------------------


def setitem(box, index, value, what: str | None = None):
    """`box[index] = value`, recorded; rebinds `box` to a new variable and returns it. (Called
    through routes.py's `setitem`, which checks the index.)"""
    tape = box._tape
    tape.check_open(operator.setitem)
    if type(box._value) is type(box) or (type(value) is type(box) and (
            value._tape is not tape or type(value._value) is type(box))):
        _refuse_nested(what, index, box)  # routes.py hands nested writes to nested.py
    index = tape.protected.constants_in(index)  # the sweep restores where the write wrote
    state = tape.effects or MutationState(tape, type(box))
    target = box._value
    what = Described(what, index, target)
    old = target[index]
    view = type(old) is _ndarray and np.may_share_memory(old, target)
    aliases = state.aliases
    aliases.check(box, what, old if view else None)
    value_var, value_primal = None, value
    if type(value) is type(box) and is_free(value):
        value = value._value  # a buffer of an earlier call, set free: a constant here
    if type(value) is type(box):
        if value._tape is not tape:
            raise MutationError(f"{what}: the value comes from another differentiation")
        aliases.check(value, what)
        written = value._value
        value = _fit(value, old.shape if type(old) is _ndarray else (), what)
        value_var, value_primal = value._var, value._value
        if has_repeats(index, target.shape):
            raise MutationError(
                f"{what}: the index repeats a position, so NumPy keeps only one of the values "
                "written there and which one is unspecified.",
                fix="index = np.unique(index)  # write each position once; or accumulate: "
                    "x = x + np.bincount(index, values, minlength=len(x))")
    if value_var is not None and shares_exported(tape, target) and depends(tape, value_var):
        raise MutationError(
            f"{what}: a traced value written into a buffer whose memory was already handed to "
            "plain code (np.asarray, a library call, or a plain array's view of it): that plain "
            "array would not follow the write, and its later reads would drop the gradient. "
            "Write into a copy (buf = buf.copy()) made after handing it out, or hand it out "
            "after the traced writes.")
    saved = old.copy() if view else old
    before_write(tape)  # the ops before it are shed at the memory they read (shedding.py)
    memory = target if target.flags.writeable else _writable(state, box, target, what)
    memory[index] = value_primal if value_var is None else written  # NumPy's own write
    in_var = box._var
    out_var = state.record(Write, memory, index, saved, in_var, value_var, value_primal)
    if memory is not target:  # a traced argument's memory (`_writable`): checked at the end
        state.writes[-1].residuals.written = np.array(memory[index], copy=True)
    box._var = out_var
    if target.base is not None:  # a view, perhaps of a traced parent
        state.propagate(in_var, out_var, target)  # before logging: the parent is current so far
    aliases.logged(target, old if view else target, out_var, what)
    return box


def _refuse_nested(what, index, box):
    """A value of an inner differentiation written into an array of an enclosing one: it
    would escape the inner differentiation, so it is refused before anything is written."""
    what = what or f"x[{format_index(index)}] = v"
    raise MutationError(
        f"{what}: a value of an inner differentiation written into an array of an enclosing "
        "one (a gradient step inside a loss writing into the loss's buffer): the inner value "
        "would outlive its differentiation. Write into an array made at the inner level, and "
        "return it.", fix="buf = np.zeros_like(v)  # inside the inner function; buf[i] = v")


def _writable(state: MutationState, box, target, what) -> np.ndarray:
    """Where the program's own write into a read-only `target` goes. Rules see the caller's
    arrays read-only (rulebridge/engine/protect.py), the program does not: a traced argument, and a view of it
    that the tape follows, are written as NumPy would write them. Anything else read-only
    (np.broadcast_to, np.diagonal, a caller's read-only array) is written by NumPy, which refuses
    as the plain program does."""
    tape = state.tape
    var, root = box._var, target
    origin = state.aliases.origin(var, root)
    while origin is not None:  # up the followed views, to the array they were made from
        var, root, _ = origin
        origin = state.aliases.origin(var, root)
    if tape.protected.unprotected(root) is not root:
        memory = tape.protected.writable_memory(target)
        if memory is not None:
            return memory
    elif tape.protected.writable_memory(target) is not None:
        raise MutationError(
            f"{what}: this view of a traced argument was made by a function whose writes the "
            "tape does not follow (views made by basic indexing, reshape, transpose and .T are "
            "followed). Write into the argument itself (x[...] = ...), or into a copy.")
    return target


class Described:
    """Names a write in error messages; formatted only when an error is raised."""

    __slots__ = ("what", "index", "target", "shape", "dtype")

    def __init__(self, what, index, target):
        # (weakly: the alias log keeps it, and must not keep the written array alive)
        self.what, self.index, self.target = what, index, weakref.ref(target)
        self.shape, self.dtype = target.shape, target.dtype

    def __str__(self) -> str:
        what = self.what or f"setitem {format_index(self.index)} = ..."
        target = self.target()
        if target is None:
            target = np.broadcast_to(np.zeros((), self.dtype), self.shape)
        return f"{what} on {describe(target)}"


def _fit(value, shape, what):
    """The traced value shaped like the region it is written to, through recorded ops so that
    the source's rules (reshape, np.add's unbroadcast) carry its cotangent."""
    vshape = getattr(value._value, "shape", ())
    if vshape == shape:
        return value
    extra = len(vshape) - len(shape)
    if extra > 0:  # NumPy drops leading length-1 axes of the value
        if any(n != 1 for n in vshape[:extra]):
            raise ValueError(f"could not broadcast input array from shape {vshape} into shape "
                             f"{shape} ({what})")
        value = np.reshape(value, vshape[extra:])
    np.broadcast_shapes(np.shape(value._value), shape)  # NumPy's error when it cannot
    # Only the gradient goes through this op; the write itself stores NumPy's broadcast of the
    # original value (v + 0.0 would turn -0.0 into +0.0).
    return np.add(value, np.zeros(shape, dtype=np.result_type(value._value)))


_RULES: dict = {}


def _write_rule(signature) -> Rule:
    rule = _RULES.get(signature)
    if rule is None:
        rule = _RULES[signature] = Rule(operator.setitem, signature, _functional_write,
                                        _write_pullback, source="rulebridge", notes="engine",
                                        jvp=_write_jvp)
    return rule

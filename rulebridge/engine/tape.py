"""The tape: append-only ops with several outputs, never renumbered.

An op's id is its index in `Tape.ops`. Variables are integers handed out by `Tape.new_var`; an op
names the variables it reads (`inputs`, aligned with its positional arguments) and the ones it
defines (`outputs`). Replacing an op (`Tape.replace`) writes one slot and touches nothing else.

The tape stores each op as a plain tuple in `Op`'s field order (`Tape.entries`; why, and the
`UNARY` form of `y = f(x)`: rulebridge/engine/op.py). `Tape.ops` names them: its items are `Op`s.
Every op is recorded by `Tape.record`, the one record path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from ..errors import NestedDifferentiationError, RuleContractError
from ..rules.keys import Configuration, call_shape, keyed, spelling
from ..rules.levels import holds_box, new_level, primals
from ..rules.registry import REGISTRY, Registry
from ..rules.selection import rule_for
from ..rules.rule import CallForward, function_name
from ..rules.signature import INEXACT_KINDS, is_differentiable
from .box import FLAT_SCALARS, NO_KWARGS, Traced, described_key, flat_key
from .decisions import Decision
from .hooks import NO_WRITES, Effects, Writes
from .forwards import call_forward
from .listing import format_dot, format_tape
from .op import UNARY, Op, OpsView
from .protect import CallersArrays
from .replay import replay
from .shedding import LARGE_BYTES, large_output, shed_large_values

_ndarray = np.ndarray
_new = object.__new__
_MAX_CACHED = 50_000  # rules and call shapes per cache: a loop over new settings stops adding


class Tape:
    """Records ops while a function runs on `Traced` boxes; `print(tape)` shows them."""

    def __init__(self, source: str | None = None, registry: Registry = REGISTRY,
                 writes: Writes = NO_WRITES) -> None:
        self.entries: list[tuple] = []  # the ops as stored: see the module's docstring
        self.source = source
        self.registry = registry
        self.writes = writes  # what writing into a box does (rulebridge/engine/hooks.py)
        self.rules: dict = registry.cache(source)
        # The same rules under a flat key that is cheaper to build and hash than a signature
        # (see `record`), kept in the same dict: a flat key never equals a (function, signature)
        # pair, the registry's invalidation clears both at once, and a new tape finds the
        # rules earlier tapes used (a small program's gradient paid ~3 us per op for the misses).
        self._rules_by_key: dict = self.rules
        # The same dict again, for `record`'s tuned branch (`ufunc(x)`): `set_guard` empties it,
        # so on a guarded tape every op takes the general branch, where the guard runs.
        self.inline_rules: dict = self.rules
        # The tape's mode, explicit: recording (no guard), recording with every read checked
        # (a tape that wrote: its effects' guard), or finished (a guard that refuses).
        self.guard: Callable[[Callable, tuple], None] | None = None
        self.finished = False
        self.n_vars = 0
        # The outputs of the op recorded last (any (var,) tuple before the first): a one-argument
        # op on that output shares the tuple as its inputs, one tuple fewer per op on a chain.
        self.last_outputs: tuple = (None,)
        self.inputs: list[int] = []  # variables of the traced arguments, in order
        self.protected = CallersArrays()  # what the traced arguments are boxed as (protect.py)
        self.outputs: Any = None  # set by trace(): the result as rulebridge/engine/result.py says
        self.arguments: list | None = None  # set by trace(): its arguments, as result.py says
        self.values: dict[int, Any] = {}  # primal of each input variable (for printing, replay)
        # Set by the first in-place write (rulebridge.writes), which also sets the guard.
        self.effects: Effects | None = None
        self.holds_large = False  # an input or an op's output of LARGE_BYTES or more
        self.sheds_as_recorded, self.shed_from = False, 0  # shedding.py's `large_output`
        # What the program decided on traced values, in order: a replay's guards (decisions.py)
        self.decisions: list[Decision] = []
        self.keeps_decisions = True  # False: never replayed (grad's and vjp's: Run), or finished
        self.arithmetic: dict[int, Callable] = {}  # var -> operator it holds the value of (box.py)
        # Above every trace made before this one (rulebridge/rules/levels.py): an op goes to
        # the highest-level tape among its arguments' boxes; a lower level's box is a constant.
        self.level = new_level()
        # Set where a lower level's box comes in (an input, a constant): sweep.py reads it.
        self.nested = False

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def ops(self) -> Sequence[Op]:
        """The recorded ops in order, each an `Op` (read-only; an op's index is its id)."""
        return OpsView(self.entries)

    def decided(self, var: Any, kind: str, outcome: Any, call: Any = None) -> Any:
        """The program got `outcome` asking `kind` of variable `var`, or from the op `call`
        (decisions.py); returned."""
        if self.keeps_decisions:
            self.decisions.append(Decision(len(self.entries), var, kind, outcome, call))
        return outcome

    def new_var(self) -> int:
        var = self.n_vars
        self.n_vars = var + 1
        return var

    def new_input(self, value: Any):
        if type(value) is _ndarray:
            value = self.protected.protect(value)
        elif type(value) is Traced:  # an enclosing differentiation's box (rules/levels.py)
            self.nested = True
        var = self.new_var()
        self.inputs.append(var)
        self.values[var] = value
        if getattr(value, "nbytes", 0) >= LARGE_BYTES:
            self.holds_large = True
        return Traced(value, var, self)

    # -- recording (the hot path) -------------------------------------------------------------

    def record(self, function: Callable, args: tuple | Traced, kwargs, guarded: bool = True):
        """Run `function(*args, **kwargs)` where some args are boxes of this tape; record it.
        `args` may also be one box of this tape alone, for the call `function(box)` of a
        one-input ufunc (Traced.__array_ufunc__). `guarded=False` skips the mode's guard: for ops
        the guard itself records."""
        # The tuned branch: `ufunc(x)`, the commonest op, which Traced.__array_ufunc__ hands
        # over as the box itself, so one test (about 170 instructions) enters it. A one-input
        # ufunc's output of x's dtype is inexact and as large as x, measured when x was recorded,
        # so the general branch's checks of the output are not needed; the op is stored in the
        # `UNARY` form (engine/op.py). Its figures per op on the chain: docs/performance.md.
        if (type(args) is Traced and type(value := args._value) is _ndarray
                and (rule := self.inline_rules.get((function, dtype := value.dtype, value.ndim)))
                is not None and type(forward := rule.forward) is CallForward):
            out = forward.function(value)
            values = (value,)
            inputs = self.last_outputs
            if inputs[0] != args._var:
                inputs = (args._var,)
            if type(out) is not _ndarray or out.dtype is not dtype:
                return self.record_output(rule, values, NO_KWARGS, inputs, out,
                                          (out, values, None))  # CallResiduals' fields
            kwargs, structure, residuals = NO_KWARGS, UNARY, out
        else:
            if type(args) is Traced:
                args = (args,)
            if guarded and self.guard is not None:
                top = top_tape(self, args)
                if top is not self:  # a box of a higher level: the op is that tape's
                    return top.record(function, args, kwargs, guarded)
                self.guard(function, args)
            # Unbox, and spell the signature as a flat key for this tape's own rule cache: an exact
            # ndarray adds (dtype, ndim), a Python scalar its type. Anything else (a sequence of
            # boxes, an index, a subclass) leaves `key` None and takes the registry's spelling.
            if len(args) == 1 and type(args[0]) is Traced:  # x = f(x): most ops
                box = args[0]
                if box._tape is not self:  # (only through a write's own records)
                    return top_tape(box._tape, args).record(function, args, kwargs, guarded)
                value = box._value
                values = (value,)
                inputs = self.last_outputs  # the previous op's (var,) tuple when it made x
                if inputs[0] != box._var:
                    inputs = (box._var,)
                if type(value) is _ndarray:
                    key = (function, value.dtype, value.ndim)
                else:  # a scalar by its type, an enclosing level's box by its primal's
                    key = flat_key((function,), value, kwargs)
            else:
                values = []
                inputs = []
                key = (function,)
                for a in args:
                    if type(a) is Traced:
                        if getattr(a._tape, "plain", False):  # set free (detached.py)
                            inputs.append(None)
                            a = a._value
                        elif a._tape is not self:  # another level's box (rules/levels.py)
                            top = top_tape(self, args)
                            if top is not self:
                                return top.record(function, args, kwargs, guarded)
                            inputs.append(None)  # a lower level's box: a constant here
                            self.nested = True
                            values.append(a)
                            key = None if key is None else flat_key(key, a, kwargs)
                            continue
                        else:
                            inputs.append(a._var)
                            a = a._value
                    elif (type(a) is list or type(a) is tuple) and a and any(
                            type(item) is Traced for item in a):
                        items, item_vars = self._unbox_sequence(function, a)
                        if items is None:  # it holds a box of a higher level
                            return top_tape(self, args).record(function, args, kwargs, guarded)
                        a = self.protected.constants_in(type(a)(items))
                        inputs.append(item_vars)
                    else:
                        inputs.append(None)
                        if type(a) is _ndarray:  # what the forward saw: protect.py
                            a = self.protected.constant(a)
                        elif type(a) is tuple or type(a) is list:
                            a = self.protected.constants_in(a)
                    values.append(a)
                    if key is not None:
                        if type(a) is _ndarray:
                            key += (a.dtype, a.ndim)
                        elif type(a) in FLAT_SCALARS:
                            key += (type(a),)
                        else:  # the value of our box may be an enclosing level's box
                            key = flat_key(key, a, kwargs)
                values = tuple(values)
                inputs = tuple(inputs)
            rule = self._rules_by_key.get(key) if not kwargs else None  # keywords: see _rule_for
            if rule is None:
                rule, values, kwargs, inputs = self._rule_for(function, values, kwargs, inputs, key)
            forward = rule.forward
            structure = None
            if type(forward) is CallForward:  # CallForward.__call__, inline
                if kwargs:
                    out = forward.function(*values, **kwargs)
                    residuals = (out, values, kwargs)  # CallResiduals' fields
                else:
                    out = forward.function(*values)
                    kwargs = NO_KWARGS  # one shared empty mapping, not a dict per op
                    if (len(inputs) == 1 and type(inputs[0]) is int
                            and type(values[0]) is _ndarray):
                        structure, residuals = UNARY, out
                    else:
                        residuals = (out, values, None)  # CallResiduals' fields
            else:
                if not kwargs:
                    kwargs = NO_KWARGS
                out, residuals = call_forward(rule, values, kwargs, inputs)
            if type(out) is not _ndarray and not isinstance(out, np.generic):
                if structure is UNARY:
                    residuals = (out, values, None)  # CallResiduals' fields
                return self.record_output(rule, values, kwargs, inputs, out, residuals)
            if out.dtype.kind not in INEXACT_KINDS:
                return self.decided(inputs, "value", out, (rule, values, kwargs))
            if out.nbytes >= LARGE_BYTES:
                large_output(self)  # see shed_large_values
        var = self.n_vars
        self.n_vars = var + 1
        outputs = self.last_outputs = (var,)
        self.entries.append((rule, values, kwargs, inputs, outputs, structure, residuals))
        box = _new(Traced)  # Traced(...) as slot stores: a Python __init__ is a frame
        box._value, box._var, box._tape = out, var, self
        return box

    def _rule_for(self, function: Callable, values: tuple, kwargs, inputs: tuple, key) -> tuple:
        """`(rule, args, kwargs, inputs)` for a call not seen under `key`, in the one spelling its
        key was checked in (rulebridge/rules/keys.py); kept under `key` without configuration,
        and per call shape with one or with a static argument (an index: `described_key`)."""
        nested = (key is None or not kwargs) and holds_box(values)  # a lower level's boxes
        described = described_key(function, values) if key is None else None  # p[:3]
        shape = (call_shape(function, described or key, values, kwargs)
                 if described is not None or (key is not None and not nested) else None)
        known = self.rules.get(shape)  # a Spelling (never stored under None)
        if kwargs:  # an array passed by keyword is a constant the forward saw: protect.py
            kwargs = self.protected.constant_keywords(kwargs)
        if known is not None:
            args, kwargs = known.apply(values, kwargs)
            return known.rule, args, kwargs, inputs + (None,) * len(known.moved)
        rule = None
        if nested:  # keyed by their primals
            args, normalised, signature, config, cached = keyed(function, primals(values), kwargs)
            args = values + args[len(values):]  # (only keywords move; a box never comes by one)
            rule = self.writes.nested_rule(function, signature)  # keyed apart (flat_key)
        else:
            args, normalised, signature, config, cached = keyed(function, values, kwargs)
        if rule is None:
            rule = self.rules.get(cached) or self._lookup(function, signature, config)
        if shape is not None and (config or described) and len(self.rules) < _MAX_CACHED:
            self.rules[shape] = spelling(function, values, kwargs, args, normalised, rule)
        if len(args) > len(values):
            inputs += (None,) * (len(args) - len(values))  # moved from keywords: static
        elif key is not None and not config:
            self._rules_by_key[key] = rule
        return rule, args, normalised, inputs

    def _lookup(self, function: Callable, signature, config: Configuration = ()) -> Any:
        """A rule the cache did not have, as rulebridge/rules/selection.py chooses it: the
        engine's own (buffer allocation, the write: `Writes.engine_rule`) before the adapters'."""
        return rule_for(self.registry, function, signature, self.source, config, self.writes)

    def record_output(self, rule, values, kwargs, inputs, out, residuals):
        """Record an op whose output `record` leaves: several outputs, one that carries
        no gradient (an integer array, a shape, a count), or one of another dtype than a
        one-input ufunc's argument (np.absolute of a complex array, np.isnan)."""
        if isinstance(out, (tuple, list)):
            structure, items = type(out), out
        elif isinstance(out, (_ndarray, np.generic, Traced)) and out.dtype.kind in INEXACT_KINDS:
            structure, items = None, (out,)  # (a Traced: the forward ran on a lower level's box)
        elif type(out) is float or type(out) is complex:  # np.real(1.5) is NumPy's 1.5 too
            structure, items = None, (out,)
        elif not is_differentiable(out):  # a shape, a count, a bool: nothing to differentiate,
            return self.decided(inputs, "value", out, (rule, values, kwargs))  # but a decision
        else:
            raise RuleContractError(
                f"the {rule.source} rule for {rule.describe()} returned a {type(out).__name__} "
                f"from its forward; expected an ndarray, a NumPy scalar, or a tuple of them")
        outputs, boxed = [], []
        for item in items:
            if is_differentiable(item):
                if getattr(item, "nbytes", 0) >= LARGE_BYTES:
                    large_output(self)
                var = self.new_var()
                outputs.append(var)
                boxed.append(Traced(item, var, self))
            else:
                outputs.append(None)
                boxed.append(item)
        if any(v is not None for v in outputs):
            self.entries.append((rule, values, kwargs, inputs, tuple(outputs), structure,
                                 residuals))
        else:  # none carries a gradient (np.nonzero's indices): a decision (decisions.py)
            self.decided(inputs, "value", out, (rule, values, kwargs))
        return boxed[0] if structure is None else _rebuild(structure, boxed)

    def _unbox_sequence(self, function, seq):
        items, item_vars = [], []
        for item in seq:
            if type(item) is Traced:
                if item._tape is not self:
                    if getattr(item._tape, "plain", False):  # set free (detached.py)
                        items.append(item._value)
                        continue
                    if item._tape.level > self.level:
                        return None, None  # the op is that level's (`record` sends it there)
                    items.append(item)  # a lower level's box: a constant here
                    item_vars.append(None)
                    self.nested = True
                    continue
                items.append(item._value)
                item_vars.append(item._var)
            else:
                items.append(item)
                item_vars.append(None)
        return items, tuple(item_vars)

    def set_guard(self, guard: Callable[[Callable, tuple], None]) -> None:
        """Call `guard(function, args)` before every op from now on. `inline_rules` is emptied
        (never filled), so every op takes `record`'s general branch: unguarded, no check."""
        self.guard = guard
        self.inline_rules = {}

    def set_effects(self, effects: Effects) -> None:
        """The first write: from now on `effects` guards every read and brackets the sweep
        (write.py sheds the ops before each write, the first included)."""
        self.effects = effects
        if not self.finished:
            self.set_guard(effects.guard)

    def check_open(self, function: Callable) -> None:
        """Raise if this tape is finished (a box escaped the differentiated function)."""
        if self.finished:
            _record_escaped(function, ())

    def close(self) -> None:
        """The differentiated function has returned (or raised): from now on a box of this tape
        can only be one that escaped it, so refuse it instead of recording onto a finished tape."""
        self.finished, self.keeps_decisions = True, False
        self.set_guard(_record_escaped)

    def shed_large_values(self) -> None:
        """Before a sweep: keep a large array alive only where a pullback needs it (shedding.py)."""
        shed_large_values(self)

    # -- editing -------------------------------------------------------------------------------

    def replace(self, index: int, op: Op) -> None:
        """Put `op` in slot `index`: O(1). Its outputs may be more than the old op's: outputs keep
        their variables and new ones get fresh variables; no other op is renumbered."""
        self.entries[index] = op

    # -- replay --------------------------------------------------------------------------------

    def replay(self, *args: Any) -> Any:
        """Recompute the recorded path on new values of the traced arguments: the positional
        arguments `trace` had, containers of the same structure and constants, or one value per
        traced input (rulebridge/engine/result.py). Raises ReplayError when the new values would
        decide differently than the recorded ones (a branch, a length, a shape: decisions.py)."""
        return replay(self, args)

    # -- printing ------------------------------------------------------------------------------

    def __str__(self) -> str:
        return format_tape(self)

    def to_dot(self) -> str:
        """The tape as Graphviz DOT text: a node per input and per op (its function, its rule's
        source, whether that rule is verified), an edge per variable read. Render it with
        ``dot -Tsvg tape.dot -o tape.svg``."""
        return format_dot(self)

    __repr__ = __str__


def top_tape(tape: Tape, args) -> Tape:
    """The highest-level tape among `tape` and the tapes of the boxes in `args` (a tuple of
    arguments; lists and tuples in it are searched too)."""
    for a in args:
        if type(a) is Traced:
            if a._tape.level > tape.level:
                tape = a._tape
        elif (type(a) is list or type(a) is tuple) and a:
            tape = top_tape(tape, a)
    return tape


def _rebuild(structure, items):
    if structure is tuple or structure is list:
        return structure(items)
    return structure(*items)  # a namedtuple such as EighResult


def _record_escaped(function, args):
    raise NestedDifferentiationError(
        f"{function_name(function)} received a traced value that escaped a finished "
        "differentiation (kept in a global, a closure or a cache after grad/vjp/trace returned). "
        "Its gradient can no longer be recorded; return plain results from differentiated "
        "functions, or compute this inside the differentiated function.")


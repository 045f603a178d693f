"""The hooks through which in-place writes reach the engine.

The engine records pure ops; it knows nothing of how a write is recorded or how views alias.
Three small interfaces let another package (rulebridge.writes) add that:

- `Writes`, given to a `Tape` when it is made: what a box does when the user's code writes into
  it (`x[i] = v`, `x += y`, `out=`, `x.fill(v)`) and the engine's own rules for allocating and
  writing functions. The default here refuses every write.
- `Effect`, the residuals of an op whose forward changed memory in place. The sweep calls
  `undo()` on it when the op receives no cotangent (its pullback undoes it otherwise), so every
  earlier pullback, run in reverse order, sees the memory its forward saw.
- `Effects`, one per tape that wrote (`Tape.effects`): it checks each recorded read (`guard`)
  and the function's result, and brackets every sweep (`begin_sweep`, `end_sweep`: copy seeds
  that share memory with written arrays, redo what the sweep undid).
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable

from ..errors import MutationError
from ..rules.signature import Signature


class Effect:
    """Residuals of an op that wrote into memory in place (see the module's docstring)."""

    __slots__ = ()

    def undo(self) -> None:
        raise NotImplementedError

    def redo(self) -> None:
        """Write again what `undo` restored (forward mode passes the op in program order)."""
        raise NotImplementedError


class Effects:
    """Per-tape state of the writes recorded on it (see the module's docstring)."""

    def guard(self, function: Callable, args: tuple) -> None:
        """Called before every recorded op of a tape that wrote: raise, or bring stale boxes
        among `args` up to date."""

    def check_result(self, result: Any) -> None:
        """The differentiated function's result, read like an op's arguments."""

    def begin_sweep(self, seeds: dict) -> dict:
        return seeds

    def end_sweep(self) -> None:
        """Redo every write the sweep undid, also after a pullback raised."""

    def undo_checking(self) -> Any:
        """Undo every write as `begin_forward` does; the memory a write into a traced argument
        no longer finds as it left it (something the tape never saw wrote it), else None."""
        self.begin_forward()
        return None

    def begin_forward(self) -> None:
        """Before a forward sweep (rulebridge/forward): undo every write, last first, so that
        each op's pushforward sees the memory its forward saw; the forward sweep redoes each
        write as it passes it, and `end_sweep` whatever an error left undone."""


class Writes:
    """What writing into a box does. This default refuses: a tape made without
    rulebridge.writes records pure programs only."""

    plain_buffer_fix = "compute the result without writing into an array"

    def _refuse(self, what: str):
        raise MutationError(f"{what} on a traced value: this tape was made without in-place "
                            "write support (rulebridge.writes); use rulebridge.grad/vjp/trace, "
                            "which record writes")

    def setitem(self, box, index, value) -> None:
        self._refuse("x[index] = value")

    def fill(self, box, value) -> None:
        self._refuse("x.fill(value)")

    def augmented(self, function: Callable, box, other):
        self._refuse("an in-place operator")

    def ufunc_out(self, box, ufunc, inputs: tuple, kwargs: dict):
        self._refuse("out=")

    def function_out(self, box, func, types, args: tuple, kwargs: dict):
        self._refuse("out=")

    def refuse_ufunc_at(self, ufunc) -> None:
        self._refuse(f"{getattr(ufunc, '__name__', ufunc)}.at")

    def engine_rule(self, function: Callable, signature: Signature):
        """The rule of an allocating or writing function, or None (the adapters' turn)."""
        return None

    def nested_pullback(self, function: Callable):
        """`cotangents(args, kwargs, g, argnums)` computing an op's cotangents on an enclosing
        differentiation's boxes, for a function whose source's pullback could not run on them;
        or None (rulebridge/engine/fallback.py)."""
        return None

    def nested_rule(self, function: Callable, signature: Signature):
        """The engine's own rule for a call of `function` whose arguments hold an enclosing
        differentiation's boxes, where every source's pullback would raise on them (an index
        read's scatters into a buffer); or None, the sources' rule then (Tape._rule_for)."""
        return None

    def building_rules(self) -> Any:
        """A context around the registry's lookup of a rule the tape had not cached: what the
        adapters' code must see while it builds one (rulebridge/writes/follow.py)."""
        return contextlib.nullcontext()

    def follows_views(self, function: Callable) -> bool:
        """Does a write through the output of `function` find its parent in the op's first
        argument (rulebridge/writes/views.py)? Shedding then keeps that argument as it is."""
        return False

    def independent(self, rule) -> bool:
        """Is `rule` an allocation, whose output depends on no argument's value but a fill
        value's (`np.zeros_like(x)`)? See rulebridge/engine/constants.py."""
        return False


NO_WRITES = Writes()

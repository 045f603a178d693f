"""A rule whose pullback raises during the sweep, at a key where it was trusted.

A rule is used at a key because a status verified it there (the shipped matrix, or its check at
an earlier call's inputs); its source's VJP can still raise at other inputs of that key (a value
or a cotangent it does not handle: autograd's det at a singular matrix). That must never reach
the user as a crash inside a source. Nor does it say the rule is wrong where it works: a pullback
that raises never returns a wrong number, so the verdict at the key stands (one awkward input
does not demote a source for the process), and:

- with `source=None`, the op's cotangents come from the next source's rule at that key, in
  preference order, run on the op's own arguments: its forward, then its pullback. That is sound
  because the sweep has put every argument back to its value at the forward (it undoes writes as
  it passes them), and that rule is verified at the key or checked at these arguments before it
  is used. An `AdapterWarning` says what happened.
- with a named source, where no other source has a rule, or where the op's arguments are gone
  (large arrays the tape shed before the sweep: rulebridge/engine/shedding.py), a
  `RuleContractError` names the function, the key, the source, the exception and the sources to
  name instead.

A rule that wrote into its read-only input broke the contract: that is reported as such, never
retried.

Under nesting, a pullback that is not NumPy code raises on the enclosing level's boxes it is
handed. A rule that declares so (`Rule.pullback_takes_boxes=False`) is not called on them: the
sweep comes here at once (`declines_boxes`, with no exception), which is the same route without
the failed call.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from ..errors import (AdapterWarning, NestedDifferentiationError, NoDerivativeError,
                      RulebridgeError, RuleContractError)
from ..rules.levels import holds_box
from ..rules.keys import configuration, format_key
from ..rules.selection import fallbacks
from .protect import WROTE_INTO_INPUT, is_read_only_write
from .shedding import is_stand_in
from .again import pullback_again
from .op import as_op
from .tape import Tape


def declines_boxes(rule, residuals: Any, args: tuple, g: Any) -> bool:
    """Would this op's pullback be handed an enclosing level's boxes, which the rule that made
    `residuals` declares it cannot take (`Rule.pullback_takes_boxes`)? Asked only by the sweep
    of a tape that holds such boxes (`Tape.nested`)."""
    if rule.chosen(residuals)[0].pullback_takes_boxes:
        return False
    return holds_box(args) or holds_box(g if type(g) is tuple else (g,))


def pullback_raised(tape: Tape, entry: tuple, exc: Exception | None, g: Any,
                    argnums: tuple) -> tuple:
    """The cotangents of the op `entry`'s traced arguments after its rule's pullback raised
    `exc` (None: it was not called on an enclosing level's boxes, which it declines:
    `declines_boxes`): from the next source's rule at the op's key, or raise the error that
    explains it."""
    op = as_op(entry)
    rule = op.rule.used(op.residuals)
    config = configuration(rule.function, op.args, op.kwargs)
    key = key_text(rule.signature, config)
    if isinstance(exc, NoDerivativeError):
        raise exc  # the program's, not the rule's: no source has a derivative to give
    if exc is not None and is_read_only_write(exc):
        raise RuleContractError(f"the pullback of the {rule.source} rule for {rule.name}{key} "
                                f"{WROTE_INTO_INPUT} ({exc})") from exc
    registry = tape.registry
    nested = exc is None or holds_box(op.args) or holds_box(g if type(g) is tuple else (g,))
    refusal = ""
    if nested:  # its pullback ran on an enclosing differentiation's boxes
        cotangents = tape.writes.nested_pullback(rule.function)
        if cotangents is not None:  # the engine's own, functional (writes/untake.py)
            return cotangents(op.args, op.kwargs, g, argnums)
        chosen, residuals = op.rule.chosen(op.residuals)
        again = pullback_again(chosen, residuals, g, argnums, key)  # engine/again.py
        if type(again) is not str:
            return again
        refusal = again
    what = _what(rule, key, exc)  # (here: under nesting most ops end above, and return)
    other = None
    if tape.source is None and not _shed(tape, op):
        other = next(fallbacks(registry, rule, config), None)
    if other is None:
        if nested:
            raise NestedDifferentiationError(_not_again(what, rule, registry, config, refusal)) \
                from exc
        raise RuleContractError(_explained(what, rule, registry, config, tape)) from exc
    try:
        _, residuals = other.forward(op.args, op.kwargs)
        cts = other.pullback(residuals, g, argnums)
    except RulebridgeError:
        raise
    except Exception as second:
        if nested:  # neither source's pullback is NumPy code the enclosing level records
            raise NestedDifferentiationError(_not_again(what, rule, registry, config, refusal)) \
                from exc
        raise RuleContractError(f"{what}; the {other.source} rule used instead raised "
                                f"{type(second).__name__}: {second}") from exc
    if not nested:  # (nested: the first source's pullback is compiled code, not at fault)
        warnings.warn(f"{what}, at a key where it was trusted. This op's gradient was computed "
                      f"with the {other.source} rule instead; {rule.source}'s stays in use at "
                      f"the key where it works (report the failure to {rule.source}'s authors).",
                      AdapterWarning, stacklevel=2)
    return cts


def key_text(signature: tuple, config: tuple) -> str:
    """`format_key(signature, config)`, made once per signature where there is no
    configuration: under nesting every op whose pullback goes to its pullback rule spells its
    key (about 12 us of dtype names and spec formatting). A configuration's text is made each
    time: 0.0 and -0.0 are one dict key but two settings."""
    return format_key(signature, config) if config else _signature_text(signature)


def _what(rule, key: str, exc: Exception | None) -> str:
    return (f"the pullback of the {rule.source} rule for {rule.name}{key} " + (
        "is declared unable to take an enclosing differentiation's boxes "
        "(pullback_takes_boxes=False)" if exc is None else
        f"raised {type(exc).__name__}: {exc}"))


@functools.lru_cache(maxsize=4096)
def _signature_text(signature: tuple) -> str:
    return format_key(signature)


def _not_again(what: str, rule, registry, config, refusal: str = "") -> str:
    """A pullback that could not run on an enclosing differentiation's boxes: it is not NumPy
    code (a compiled function), and its rule offers no verified rule for it (`refusal`: why),
    so its own derivative cannot be recorded. The rule is not at fault, and no status
    changes."""
    others = [found.source for found in fallbacks(registry, rule, config)]
    fix = (f"Differentiate the inner level with a source whose pullback here is NumPy code, "
           f"if one of the others with a rule here is "
           f"({', '.join(f'source={name!r}' for name in others)})" if others else
           "No other installed source has a rule here")
    return (f"{rule.name}{format_key(rule.signature, config)} cannot be differentiated twice with "
            f"the {rule.source} rule: its pullback is handed values of an enclosing "
            f"differentiation (grad of grad, a gradient inside a loss) and is not NumPy code "
            f"that rulebridge can record" + (f", and {refusal}" if refusal else "") + ". "
            f"{fix}; or compute the inner derivative in closed form. (Details: {what}.)")


def _shed(tape: Tape, op) -> bool:
    """Were some of the op's traced arguments replaced by stand-ins (rulebridge/engine/
    shedding.py: large arguments, while the function ran or before the sweep)?"""
    return any(type(var) is int and is_stand_in(value) for value, var in zip(op.args, op.inputs))


def _explained(what: str, rule, registry, config, tape: Tape) -> str:
    others = [found.source for found in fallbacks(registry, rule, config)]
    if others:
        say = ", ".join(f"source={name!r}" for name in others)
        fix = (f"Name another source that has a rule here ({say}, or "
               f"rulebridge.prefer({rule.name}, {others[0]!r}) for this function alone); with "
               "source=None an op whose pullback raises gets its gradient from one")
        if tape.source is None:  # its arguments were shed: this call cannot be run again
            registry.record_check(rule.function, rule.source, format_key(rule.signature, config),
                                  "error")
            fix += (f". The arguments of this op were too large to keep, so {rule.source} is "
                    "passed over at this key for the rest of the process: the next call uses "
                    "another source")
    else:
        fix = ("No other installed source has a rule here: install one, or write the "
               "computation with functions whose rules work at these inputs")
    return (f"{what}, at a key where it was trusted. {fix}. Report the failure to "
            f"{rule.source}'s authors.")

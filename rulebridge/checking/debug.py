"""Debug mode: every rule boundary checked in full.

The cheap checks are always on (the cotangent count, shape and dtype, in the sweep). Debug mode
adds what costs a copy or a second evaluation per op: that a forward returns `(output,
residuals)` whose output equals NumPy's own result, that neither forward nor pullback mutates
its arguments, residuals or the cotangent it receives (and that, with writes on the tape, every
pullback sees its forward's arguments again), that no cotangent aliases an argument or a
residual, and that cotangents are finite where the arguments and the incoming cotangent are.

Switch it on with `rulebridge.debug(True)`, for a block with `with rulebridge.debug():`, or for
the process with the environment variable RULEBRIDGE_DEBUG=1. The switch is read once when a
tape is created (the tape then looks its rules up through `CheckingRegistry`), so the per-op
path of a normal run is unchanged.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from ..errors import RuleContractError
from ..rules.levels import Box, holds_box, primal, primals
from ..rules.rule import Rule
from ..rules.signature import INEXACT_KINDS, format_signature
from .wrapping import Policy, wrap

ENVIRONMENT_VARIABLE = "RULEBRIDGE_DEBUG"
_enabled = os.environ.get(ENVIRONMENT_VARIABLE, "") not in ("", "0")


def enabled() -> bool:
    """Whether debug mode is on (`rulebridge.debug`).

    Returns
    -------
    bool
    """
    return _enabled


class debug:
    """`rulebridge.debug(True)` switches debug mode on for the whole process (all threads),
    `rulebridge.debug(False)` off; `with rulebridge.debug():` switches it on for a block and
    restores the previous setting after it."""

    def __init__(self, on: bool = True) -> None:
        global _enabled
        self._previous = _enabled
        _enabled = bool(on)

    def __enter__(self) -> "debug":
        return self

    def __exit__(self, *exc_info) -> None:
        global _enabled
        _enabled = self._previous


class CheckingRegistry:
    """What a tape made in debug mode looks its rules up in: the registry's rules, each wrapped
    once per tape in a checking rule. Everything else is the registry's."""

    def __init__(self, registry) -> None:
        self._registry = registry
        self._rules: dict = {}  # the tape's (function, signature) -> checking rule cache

    def cache(self, source: str | None) -> dict:
        return self._rules

    def lookup(self, function: Callable, signature, source: str | None = None,
               config: tuple = ()) -> Rule:
        rule = self._registry.lookup(function, signature, source, config)
        if not rule.missing:
            rule = checking(rule)
        self._rules[(function, signature, config) if config else (function, signature)] = rule
        return rule

    def __getattr__(self, name: str) -> Any:
        return getattr(self._registry, name)


def checking(rule: Rule) -> Rule:
    """`rule` with its forward and pullback checked in full (see the module's docstring)."""
    return wrap(rule, FullChecks(rule))


class FullChecks(Policy):
    """Debug mode's policy: every forward and pullback of `rule` checked against the contract.
    Residuals are paired with the arguments and their snapshot, so the pullback can check that
    it sees its forward's arguments again."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule

    def select(self, wrapped, args, kwargs, traced=None) -> Rule:
        return self.rule

    def forward(self, rule, args, kwargs, traced=None):
        before = _snapshot(args)
        result = Policy.forward(self, rule, args, kwargs, traced)
        if type(result) is not tuple or len(result) != 2:
            raise _broken(rule, f"its forward returned {_describe(result)}; a forward returns "
                                "the pair (output, residuals)")
        out, residuals = result
        _unchanged(rule, "forward", "an argument", before)
        _same_as_numpy(rule, out, args, kwargs)
        return out, (residuals, args, before)

    def chosen_residuals(self, packed):
        return packed[0]

    def pullback(self, rule, packed, g, argnums):
        residuals, args, args_at_forward = packed
        _unchanged(rule, "pullback", "an argument (its value differs from the forward's: an "
                   "in-place write was not undone before this pullback, or a rule mutated it)",
                   args_at_forward)
        before = _snapshot((residuals, g))
        cts = rule.pullback(residuals, g, argnums)
        _unchanged(rule, "pullback", "an argument", args_at_forward)
        _unchanged(rule, "pullback", "its residuals or the cotangent it received", before)
        if type(cts) is tuple or type(cts) is list:
            _check_cotangents(rule, cts, args, residuals, g)
        return cts


# -- the checks --------------------------------------------------------------------------------

def _same_as_numpy(rule, out, args, kwargs) -> None:
    if holds_box(args):  # nested (rules/levels.py): the plain values underneath are compared
        args = primals(args)
        out = primal(out) if isinstance(out, Box) else (
            type(out)(primals(tuple(out))) if type(out) in (tuple, list) else out)
    try:
        expected = rule.function(*args, **kwargs)
    except Exception as exc:
        raise _broken(rule, f"its forward returned a result where NumPy's own "
                            f"{rule.name} raises {type(exc).__name__}: {exc}") from exc
    problem = _difference(out, expected)
    if problem:
        raise _broken(rule, f"its forward's output differs from NumPy's: {problem}")


def _difference(out, expected) -> str:
    if isinstance(expected, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(expected):
            return f"{_describe(out)} where NumPy returns {len(expected)} outputs"
        for k, (a, b) in enumerate(zip(out, expected)):
            problem = _difference(a, b)
            if problem:
                return f"output {k}: {problem}"
        return ""
    if not isinstance(expected, (np.ndarray, np.generic, int, float, complex)):
        # Not numbers (`np.result_type(x)` gives a dtype): NumPy's equality decides.
        try:
            same = type(out) is type(expected) and bool(out == expected)
        except (TypeError, ValueError):  # an equality that is not one answer
            same = False
        if same:
            return ""
        return f"{_describe(out)} where NumPy returns {_describe(expected)}"
    if np.shape(out) != np.shape(expected) or np.result_type(out) != np.result_type(expected):
        return f"{_describe(out)} where NumPy returns {_describe(expected)}"
    if isinstance(expected, np.ndarray) != isinstance(out, np.ndarray):
        return f"{_describe(out)} where NumPy returns {_describe(expected)}"
    if not np.array_equal(out, expected, equal_nan=np.result_type(out).kind in INEXACT_KINDS):
        return "different values"
    return ""


def _check_cotangents(rule, cts, args, residuals, g) -> None:
    held = [a for a in _arrays((args, residuals))]
    finite_in = all(np.all(np.isfinite(a)) for a in _arrays((args, g))
                    if a.dtype.kind in INEXACT_KINDS)
    for ct in _arrays(cts):
        for a in held:
            if np.shares_memory(ct, a):
                raise _broken(rule, "its pullback returned a cotangent that shares memory with "
                                    "one of its arguments or residuals; return a new array")
        if finite_in and ct.dtype.kind in INEXACT_KINDS and not np.all(np.isfinite(ct)):
            raise _broken(rule, "its pullback returned a non-finite cotangent for finite "
                                "arguments and a finite incoming cotangent (if the derivative is "
                                "truly infinite here, e.g. sqrt at 0, switch debug mode off)")


def _snapshot(tree) -> list:
    return [(a, a.copy()) for a in _arrays(tree)]


def _unchanged(rule, where: str, what: str, snapshot: list) -> None:
    for array, copy in snapshot:
        if array.shape != copy.shape or not np.array_equal(
                array, copy, equal_nan=array.dtype.kind in INEXACT_KINDS):
            raise _broken(rule, f"after its {where}, {what} was modified in place")


def _arrays(tree):
    """The ndarrays in nested tuples, lists and dicts (NumPy scalars are immutable)."""
    if isinstance(tree, np.ndarray):
        yield tree
    elif isinstance(tree, (tuple, list)):
        for item in tree:
            yield from _arrays(item)
    elif isinstance(tree, dict):
        for item in tree.values():
            yield from _arrays(item)


def _describe(x) -> str:
    dtype = getattr(x, "dtype", None)
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of {len(x)}"
    return f"a {type(x).__name__}" + (f" {dtype} shape {np.shape(x)}" if dtype is not None else "")


def _broken(rule: Rule, problem: str) -> RuleContractError:
    return RuleContractError(
        f"debug mode: the {rule.source or 'engine'} rule for {rule.name}"
        f"{format_signature(rule.signature)} broke the rule contract: {problem} "
        "(docs/adapter-contract.md).")

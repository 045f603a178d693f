"""The matrix's columns beside the dtypes': a rule's other modes, at each float64 case.

- **jvp**: the rule's pushforward (forward mode) checked against central differences along
  random tangents (`check_pushforward`), keyed as forward mode looks it up: the case's key
  followed by " jvp" (rulebridge/rules/selection.py `key_text`).
- **gradgrad**: the pullback of the pullback (PyTorch OpInfo's `gradgrad`): the nested
  differentiation of the source's pullback checked against central differences of the pullback
  itself, keyed as the engine looks a pullback offered as a rule up: the case's key followed by
  " gradgrad" (rulebridge/checking/gradgrad.py). Its check differentiates through
  `rulebridge.vjp`, a layer above this one, so the matrix is handed it (`Plan.second_order`,
  as `Plan.importers`: the `rulebridge` command passes `rulebridge.higher.check_gradgrad`), and
  it runs at each function's first float64 case only, outside `SECOND_ORDER_SKIPPED`'s modules:
  JAX traces the VJP of its pullback for it, and for scipy.stats's distributions (compositions
  of special functions) that took 1-5 s a row, half the run's added time (a user's second
  derivative there is checked at its first call, as any key the matrix has no verdict for).
"""

from __future__ import annotations

from typing import Callable

from ..rules.keys import normalise
from ..rules.registry import REGISTRY
from ..rules.signature import signature_of
from .pushforward import check_pushforward

JVP = "jvp"
GRADGRAD = "gradgrad"
MODES = (JVP, GRADGRAD)  # in the order of their columns
NO_GRADIENT = "no gradient"  # a passing cell where nothing differentiable flows (argmax, all, <)

# `second_order(function, args, kwargs, argnums, source, seed) -> CheckResult | None`
SecondOrder = Callable[..., object]
SECOND_ORDER_SKIPPED = ("scipy.stats.",)  # rows without a gradgrad column (see above)


def has_second_order(name: str) -> bool:
    """Does the row `name` get a gradgrad column?"""
    return not name.startswith(SECOND_ORDER_SKIPPED)


def pushforward_verdict(function, source, args, kwargs, argnums, seed) -> tuple[str, str]:
    """`(status, reason)` of `source`'s pushforward at one float64 case."""
    try:
        rule = REGISTRY.candidate(function, signature_of(args), source,
                                  normalise(function, args, kwargs)[2])
        rule = getattr(rule, "original", None) or rule
        if rule.jvp is None:
            return "not offered", "no pushforward: forward mode transposes its pullback"
        result = check_pushforward(rule, args, kwargs, argnums, seed=seed)
    except Exception as exc:
        return "error", f"{type(exc).__name__}: {exc}"
    return _status(result)


def gradgrad_verdict(second_order: SecondOrder, function, source, args, kwargs, argnums,
                     seed) -> tuple[str, str] | None:
    """`(status, reason)` of `source`'s second order at one float64 case; None where the case
    has nothing to check at second order (a traced sequence, no differentiable output)."""
    try:
        result = second_order(function, args, kwargs, argnums, source, seed)
    except Exception as exc:
        return "error", f"{type(exc).__name__}: {exc}"
    return None if result is None else _status(result)


def _status(result) -> tuple[str, str]:
    if result.status == "pass":
        return (NO_GRADIENT if result.max_rel_error is None else "pass"), ""
    return result.status, result.reason

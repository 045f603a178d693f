"""The check of a pullback offered as a rule: the pullback of the pullback, as PyTorch's OpInfo
calls it `gradgrad`.

A rule whose pullback is not NumPy code may offer it as a function with a rule of its own
(`Rule.pullback_rule`: for JAX, the VJP of the jitted pullback). Before the engine records such a
call (rulebridge/engine/again.py) its rule is checked as first-order rules are, with the
pullback itself in NumPy's place: the dot-product test of the second-order rule's pullback
against central differences of the pullback, in the arguments the call traces (the first
order's arguments and its cotangent), at the call's own values (`check_call`). The shipped
matrix's gradgrad column (keys ending in " gradgrad", bound to the adapter's distribution like
every verdict) settles a key without a check; a check's conclusive verdict is kept for the
process, per first-order key and traced arguments. A rule that fails, raises or breaks the
contract is never used there; one finite differences cannot decide is not used this time.
`rulebridge.trust()` uses them unchecked.
"""

from __future__ import annotations

import threading

from ..rules.levels import primals
from ..rules.pullback_rules import set_verifier
from ..rules.registry import REGISTRY
from ..rules.rule import PullbackCall, Rule
from .check import check_call

MODE = " gradgrad"
# (function name, source, key text, traced arguments of the call, its signature) -> verdict
VERDICTS: dict[tuple, tuple[str, str]] = {}
_lock = threading.Lock()
_MAX_VERDICTS = 50_000


def verify(rule: Rule, key: str, call: PullbackCall, traced: tuple) -> tuple[str, str]:
    """`(status, reason)` of the rule `call` offers for `rule`'s pullback at first-order `key`."""
    if REGISTRY.trusting:
        return "pass", ""
    shipped = REGISTRY.shipped_status(rule.name, rule.source, key + MODE,
                                      imported=rule.notes.startswith("imported"))
    if shipped in ("pass", "fail", "error"):
        return shipped, "" if shipped == "pass" else "in the shipped compatibility matrix"
    # the second-order function's own signature too: which outputs' cotangents it takes
    memo = (rule.name, rule.source, key, traced, call.rule.signature)
    found = VERDICTS.get(memo)
    if found is not None:
        return found
    with _lock:
        result = check_call(call.rule, primals(tuple(call.args)), {}, argnums=traced)
        found = (result.status, result.reason)
        if result.status in ("pass", "fail", "error") and len(VERDICTS) < _MAX_VERDICTS:
            VERDICTS[memo] = found
    return found


def forget() -> None:
    """Drop every verdict of this process (tests)."""
    with _lock:
        VERDICTS.clear()


def install() -> None:
    set_verifier(verify)

"""Which pushforward an op uses: the rule's own `jvp` once it is checked at its key, else none
(the sweep then transposes the rule's pullback: transpose.py).

A pushforward is trusted at a key only once it passed: where the shipped status (the matrix's
jvp column, bound to the adapter's distribution like the pullbacks' verdicts) has no verdict for
the key (function, signature, configuration, traced arguments; its text ends in " jvp"), the
first time forward mode meets the rule there `check_pushforward` compares its `J xdot` with
central differences of NumPy's own function at the op's own inputs. The verdict is kept for the
process (`VERDICTS`, by function name, source and key text). A pushforward that
fails or raises is never used at that key; one that finite differences cannot decide at these
inputs is not used this time, and checked again at the next inputs. The engine's own rules
(source "rulebridge": writes, allocations, copies) are data movement whose pushforwards are exact
by construction, and `rulebridge.trust()` uses every pushforward unchecked, as for pullbacks.
"""

from __future__ import annotations

import threading
from typing import Callable

from ..checking.arguments import traced_argnums, with_traced
from ..checking.pushforward import check_pushforward
from ..rules.keys import configuration, format_key
from ..rules.levels import primals
from ..rules.registry import REGISTRY
from ..rules.rule import Rule

ENGINE = "rulebridge"
# (function name, source, key text) -> "pass" | "fail" | "error"
VERDICTS: dict[tuple[str, str, str], str] = {}
_decided: dict = {}  # (rule, configuration, argnums) -> (jvp or None, why not)
_lock = threading.Lock()
_MAX_DECIDED = 50_000  # as the tape's rule cache: a loop over new settings stops adding


def pushforward(rule: Rule, args: tuple, kwargs, argnums: tuple) -> tuple[Callable | None, str]:
    """`(jvp, why)`: the pushforward to use for this call of `rule`, or None and why not."""
    jvp = rule.jvp
    if jvp is None:
        return None, f"the {rule.source} rule has none"
    if rule.source == ENGINE or REGISTRY.trusting:
        return jvp, ""
    try:
        config = configuration(rule.function, args, kwargs)
        memo = (rule, config, argnums)
        hash(memo)
    except Exception:
        config, memo = (), None
    found = _decided.get(memo) if memo is not None else None
    if found is not None:
        return found
    with _lock:
        key = with_traced(format_key(rule.signature, config), traced_argnums(args, argnums)) \
            + " jvp"
        status = VERDICTS.get((rule.name, rule.source, key)) or REGISTRY.shipped_status(
            rule.name, rule.source, key, imported=rule.notes.startswith("imported"))
        reason = ""
        if status == "no gradient":
            status = "pass"
        if status not in ("pass", "fail", "error"):
            # at the innermost primals: under nesting the op's arguments are an enclosing
            # level's boxes (reverse over forward), which the check reads as plain values
            result = check_pushforward(rule, primals(args), dict(kwargs or {}), argnums)
            status, reason = result.status, result.reason
            if status != "inconclusive":
                VERDICTS[(rule.name, rule.source, key)] = status
        decided = (jvp, "") if status == "pass" else \
            (None, f"the {rule.source} pushforward at {key}: {status}"
                   + (f" ({reason})" if reason else ""))
        if memo is not None and status != "inconclusive" and len(_decided) < _MAX_DECIDED:
            _decided[memo] = decided
        return decided


def verdicts() -> dict[tuple[str, str, str], str]:
    """The pushforward verdicts of this process, as `VERDICTS` keeps them."""
    return dict(VERDICTS)


def forget() -> None:
    """Drop every verdict (tests)."""
    with _lock:
        VERDICTS.clear()
        _decided.clear()

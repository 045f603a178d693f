"""Who checks a pullback offered as a rule (`Rule.pullback_rule`) before the engine trusts it.

The engine records a pullback that is not NumPy code as one op of the enclosing level, whose
rule is the pullback's own (rulebridge/engine/again.py); that second-order rule is used only
where it passed a check against central differences of the pullback itself. The check lives in
rulebridge/checking/gradgrad.py, which the engine may not import, so the checks install it here
(`set_verifier`), as they install the first-use chooser in the registry. With no verifier
installed (the engine alone), nothing is trusted: every such call is refused.
"""

from __future__ import annotations

from typing import Callable

from .rule import PullbackCall, Rule

# verify(rule, key, call, argnums) -> (status, reason): `rule` is the first-order rule, `key`
# the text of its key, `call` what its `pullback_rule` offered and `argnums` the positions of
# `call.args` that carry a derivative at the enclosing level.
Verifier = Callable[[Rule, str, PullbackCall, tuple], "tuple[str, str]"]
_verifier: list[Verifier | None] = [None]


def set_verifier(verify: Verifier | None) -> None:
    """Install the check of second-order rules (rulebridge/checking/gradgrad.py)."""
    _verifier[0] = verify


def verify(rule: Rule, key: str, call: PullbackCall, argnums: tuple) -> tuple[str, str]:
    """`(status, reason)` for the rule `call` offers for `rule`'s pullback: "pass" to use it."""
    verifier = _verifier[0]
    if verifier is None:
        return "unchecked", "no check of second-order rules is installed"
    return verifier(rule, key, call, argnums)

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
process (rules/selection.py keeps it), per first-order key and traced arguments. A rule that fails, raises or breaks the
contract is never used there; one finite differences cannot decide is not used this time.
`rulebridge.trust()` uses them unchecked.
"""

from __future__ import annotations

from ..rules.levels import primals
from ..rules.rule import PullbackCall
from ..rules.selection import GRADGRAD, forget as _forget, install_check
from .check import check_call

def check(call: PullbackCall, traced: tuple) -> tuple[str, str]:
    """`(status, reason)` of the rule `call` offers for a pullback, checked at the call's own
    values in the arguments `traced` (rules/selection.py asks, where no status settles it)."""
    result = check_call(call.rule, primals(tuple(call.args)), {}, argnums=traced)
    return result.status, result.reason


def forget() -> None:
    """Drop every second-order verdict of this process (tests)."""
    _forget(GRADGRAD)


def install() -> None:
    install_check(GRADGRAD, check)

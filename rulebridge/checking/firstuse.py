"""Check an unverified rule at the user's own inputs the first time it runs.

`rulebridge.check_on_first_use(True)` (or the environment variable
RULEBRIDGE_CHECK_ON_FIRST_USE=1) wraps every rule the compatibility matrix has not verified for
that signature: its first forward runs `check_rule` at the inputs it receives (in the function's
domain by construction: the user's program computes there) and raises RuleCheckError if the rule
fails or breaks the contract. Later calls go straight to the rule.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, fields

from ..rules.registry import REGISTRY
from ..rules.rule import Rule
from .check import check_call
from .result import RuleCheckError

ENVIRONMENT_VARIABLE = "RULEBRIDGE_CHECK_ON_FIRST_USE"


class UncheckedRuleWarning(UserWarning):
    """Finite differences could not decide a rule at the user's inputs (a kink, a tie)."""


@dataclass(eq=False, repr=False)
class FirstUseRule(Rule):
    """An unverified rule whose first forward checks it; `original` is the rule itself."""

    original: Rule | None = None
    checked: bool = False


def _wrap(rule: Rule) -> Rule:
    if rule.missing or rule.status == "pass" or isinstance(rule, FirstUseRule):
        return rule
    wrapper = FirstUseRule(**{f.name: getattr(rule, f.name) for f in fields(Rule)},
                           original=rule)

    def forward(args, kwargs):
        if not wrapper.checked:
            result = check_call(rule, args, kwargs)
            wrapper.checked = True
            wrapper.status = result.status
            if result.status in ("fail", "error"):
                raise RuleCheckError(result, hint=(
                    "rulebridge.check_on_first_use checked this rule at your inputs and it is "
                    "wrong there. Use another source (source=... or rulebridge.prefer(function, "
                    "name)), or report it to the adapter's authors."))
            if result.status == "inconclusive":
                warnings.warn(f"{rule.describe()} could not be checked at these inputs: "
                              f"{result.reason}", UncheckedRuleWarning, stacklevel=2)
        return rule.forward(args, kwargs)

    wrapper.forward = forward
    return wrapper


def check_on_first_use(enabled: bool = True) -> None:
    """Check every unverified rule at the first inputs it is used at, before trusting it.

    The same switch as the environment variable ``RULEBRIDGE_CHECK_ON_FIRST_USE=1``. A rule the
    compatibility matrix verified at the signature is used without a new check; the first call
    of any other raises `RuleCheckError` if the rule fails there.

    Parameters
    ----------
    enabled : bool, optional
        True switches the check on for the whole process, False off.
    """
    if enabled:
        REGISTRY.add_resolve_hook(_wrap)
    else:
        REGISTRY.remove_resolve_hook(_wrap)


def enable_from_environment() -> None:
    if os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on"):
        check_on_first_use(True)

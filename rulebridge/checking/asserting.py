"""`assert_rule`: `check_rule` that raises unless the rule passes (check.py has the check)."""

from __future__ import annotations

from typing import Any, Callable

from ..rules.rule import Rule
from .check import check_rule
from .result import CheckResult, RuleCheckError


def assert_rule(func: Callable | Rule, *example_args: Any, **options: Any) -> CheckResult:
    """`check_rule`, raising unless the rule passes: the one line for a test of your own rule.

    Parameters
    ----------
    func : callable or Rule
        As for `check_rule`.
    *example_args
        As for `check_rule`.
    **options
        `check_rule`'s options and the call's keyword arguments.

    Returns
    -------
    CheckResult
        The passing result.

    Raises
    ------
    RuleCheckError
        When the rule fails, raises, or finite differences cannot decide.
    """
    result = check_rule(func, *example_args, **options)
    if not result.passed:
        raise RuleCheckError(result, "rulebridge.prefer(function, 'OTHER')  # a source whose "
                                     "rule passes; fix or report this one")
    return result

"""Checking rules against finite differences of NumPy's own functions, and the compatibility
matrix built from those checks."""

from .asserting import assert_rule
from .check import TOLERANCES, check_rule
from .firstuse import UncheckedRuleWarning, check_on_first_use, trust
from .result import CheckResult, RuleCheckError

__all__ = ["CheckResult", "RuleCheckError", "TOLERANCES", "UncheckedRuleWarning", "assert_rule",
           "check_on_first_use", "check_rule", "trust"]

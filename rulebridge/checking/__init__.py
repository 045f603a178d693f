"""Checking rules against finite differences of NumPy's own functions, and the compatibility
matrix built from those checks."""

from .check import TOLERANCES, check_rule
from .result import CheckResult, RuleCheckError

__all__ = ["CheckResult", "RuleCheckError", "TOLERANCES", "check_rule"]

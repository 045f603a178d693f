"""Every error rulebridge raises. Each says what happened, to which function, and what to do."""

from __future__ import annotations


class RulebridgeError(Exception):
    """Base class of rulebridge's own errors."""


class NoRuleError(RulebridgeError, TypeError):
    """No adapter offers a rule for this function at this concrete signature."""


class Declined(RulebridgeError):
    """Raised by an adapter's `build_rule` for a function or signature it will not cover."""


class TracingError(RulebridgeError, TypeError):
    """The differentiated code did something that would silently cut the gradient."""


class RuleContractError(RulebridgeError):
    """A rule broke the contract (cotangent count, shape or dtype, exception in its pullback)."""


class AdapterError(RulebridgeError):
    """An adapter could not be loaded or misbehaved as a whole."""


class NestedDifferentiationError(RulebridgeError):
    """Differentiating a function that itself differentiates is not supported."""


class MutationError(RulebridgeError):
    """An in-place write the tape cannot represent exactly."""


class ImportRuleError(RulebridgeError, ValueError):
    """`import_rule` could not import a rule, or the imported rule disagrees with its function."""


class AdapterWarning(UserWarning):
    """An adapter misbehaved and was skipped while other adapters were asked for a rule."""

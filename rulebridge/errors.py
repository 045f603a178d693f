"""Every error rulebridge raises. Each says what happened, to which function, and what to do."""

from __future__ import annotations


class RulebridgeError(Exception):
    """Base class of rulebridge's own errors."""


class NoRuleError(RulebridgeError, TypeError):
    """No adapter offers a rule for this function at this concrete signature."""


class UnverifiedRuleError(NoRuleError):
    """No source's rule passed its check at a key no status verifies: each source's rule was
    checked at the call's inputs before use and failed or raised. `.results` holds each
    source's CheckResult."""

    def __init__(self, message: str, results: list = ()) -> None:
        super().__init__(message)
        self.results = list(results)


class Declined(RulebridgeError):
    """Raised by an adapter's `build_rule` for a function or signature it will not cover."""


class TracingError(RulebridgeError, TypeError):
    """The differentiated code did something that would silently cut the gradient."""


class RuleContractError(RulebridgeError):
    """A rule broke the contract (cotangent count, shape or dtype, exception in its pullback)."""


class AdapterError(RulebridgeError):
    """An adapter could not be loaded or misbehaved as a whole."""


class NestedDifferentiationError(RulebridgeError):
    """A traced value escaped its differentiation, or a nested one (grad of grad) met a
    pullback that is not NumPy code and so cannot be differentiated again."""


class NoDerivativeError(RulebridgeError, ValueError):
    """The differentiated program has no derivative at these inputs: its value depends on a
    choice NumPy or SciPy makes as it likes (a complex eigenvector's phase)."""


class ReplayError(RulebridgeError, ValueError):
    """`tape.replay` was given inputs on which the program would decide differently (a branch, a
    length, a shape) than it did when it was traced."""


class MutationError(RulebridgeError):
    """An in-place write the tape cannot represent exactly."""


class ImportRuleError(RulebridgeError, ValueError):
    """`import_rule` could not import a rule, or the imported rule disagrees with its function."""


class AdapterWarning(UserWarning):
    """An adapter misbehaved and was skipped while other adapters were asked for a rule."""


class GradientCheckError(RulebridgeError, AssertionError):
    """`check_grads` found a gradient that disagrees with finite differences of the function,
    or finite differences could not decide. `.max_rel_error` is the worst relative error seen
    (None when undecided), `.tolerance` the bound it was held to."""

    def __init__(self, message: str, max_rel_error: float | None, tolerance: float) -> None:
        super().__init__(message)
        self.max_rel_error, self.tolerance = max_rel_error, tolerance

"""Calling a rule's forward that the engine does not run inline (not a `CallForward`): the
rule's own errors told apart from NumPy's, and a `traced_forward` told what is traced."""

from __future__ import annotations

from ..errors import RuleContractError
from .protect import WROTE_INTO_INPUT, is_read_only_write


def call_forward(rule, values: tuple, kwargs, inputs: tuple) -> tuple:
    """`(output, residuals)` from a forward that is not a CallForward (debug mode's, a
    first-use check's, another adapter's), under the contract: a write into an argument, or a
    result that is not a pair, is the rule's error. A `traced_forward` is told which arguments
    are traced (those with input variables in `inputs`)."""
    try:
        if rule.traced_forward is None:
            result = rule.forward(values, kwargs)
        else:
            result = rule.traced_forward(values, kwargs, tuple(
                i for i, v in enumerate(inputs) if v is not None))
    except ValueError as exc:
        if not is_read_only_write(exc):
            raise  # NumPy's own error for these inputs, as the plain program raises it
        raise RuleContractError(f"the forward of the {rule.source} rule for {rule.describe()} "
                                f"{WROTE_INTO_INPUT} ({exc})") from exc
    try:
        out, residuals = result
    except (TypeError, ValueError):  # not a pair: the rule, not NumPy, is at fault
        raise _malformed_forward(rule, result) from None
    return out, residuals


def _malformed_forward(rule, result) -> Exception:
    return RuleContractError(
        f"the {rule.source} rule for {rule.describe()} returned a {type(result).__name__} from "
        "its forward; a forward returns the pair (output, residuals) (docs/adapter-contract.md)")

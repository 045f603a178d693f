"""The rule the registry caches where no adapter has one (or none may be used): its forward
returns outputs that cannot carry a gradient (comparisons, argmax, shapes) and raises the
NoRuleError, with every source's reason, for anything that could."""

from __future__ import annotations

from typing import Callable

from ..errors import NoRuleError
from ..tree import tree_leaves
from .rule import Rule
from .signature import Signature, is_differentiable


def missing_rule(function: Callable, signature: Signature, message: str) -> Rule:
    def forward(args, kwargs):
        out = function(*args, **kwargs)
        # every leaf: a float inside a dict (or a nested tuple) the function returned counts
        if any(_can_carry_gradient(item) for item in tree_leaves(out)):
            raise NoRuleError(message)
        return out, None

    def pullback(residuals, cotangent, argnums):
        raise NoRuleError(message)

    return Rule(function, signature, forward, pullback, source="", notes=message, status="missing")


def _can_carry_gradient(x) -> bool:
    # An object array may hold the traced floats: never drop it.
    return is_differentiable(x) or getattr(getattr(x, "dtype", None), "kind", None) == "O"

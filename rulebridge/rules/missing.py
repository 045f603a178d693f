"""The rule the registry caches where no adapter has one (or none may be used): its forward
returns outputs that cannot carry a gradient (comparisons, argmax, shapes) and raises the
NoRuleError, with every source's reason, for anything that could."""

from __future__ import annotations

from typing import Callable

from ..errors import NoRuleError
from ..tree import tree_leaves
from .rule import Rule, function_name
from .signature import Signature, format_signature, is_differentiable

NO_ADAPTER_HINT = (
    "rulebridge takes its rules from adapters: distributions of their own that register an "
    "entry point in the group 'rulebridge.adapters' (docs/adapter-contract.md). A checkout of "
    "rulebridge bundles them under adapters/: `pip install -e adapters/NAME` installs one, "
    "`pip install -r requirements-dev.txt` (from the checkout's root) all of them")


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


def no_rule_message(function: Callable, signature: Signature, names, refusals: list[str],
                    loaded: dict, key: str | None = None) -> str:
    """The NoRuleError's text: each source's refusal, the signatures that exist, what to do."""
    name = function_name(function)
    lines = [f"rulebridge has no rule for {name}{key or format_signature(signature)}."]
    if not names:
        lines.append(f"  No rulebridge adapter is installed. {NO_ADAPTER_HINT}.")
        return "\n".join(lines)
    for refusal in refusals:
        lines.append(f"  {refusal}")
    families = []
    for adapter_name in names:
        adapter = loaded.get(adapter_name)
        if adapter is not None:
            families += [f"{s}  [{adapter_name}]" for s in adapter.signatures(function)]
    if families:
        lines.append(f"  Signatures that exist for {name}:")
        lines += [f"    {name}{s}" for s in families]
    lines.append(
        "  What to do: pass float32/float64/complex128 ndarrays (e.g. x.astype(np.float64); "
        "np.asarray(m) for an np.matrix, m.filled() for a masked array), use a function an "
        "adapter covers, or add a rule with rulebridge.import_rule or your own adapter "
        "(docs/adapter-contract.md).")
    return "\n".join(lines)

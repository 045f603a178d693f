"""The rule the registry caches where no adapter has one (or none may be used): its forward
returns outputs that cannot carry a gradient (comparisons, argmax, shapes) and raises the
NoRuleError, with every source's reason, for anything that could."""

from __future__ import annotations

import threading
from typing import Callable

from ..errors import NoRuleError, RulebridgeError, compose
from ..tree import tree_leaves
from .keys import Configuration
from .rule import Rule, function_name
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


NO_ADAPTER_HINT = (
    "rulebridge takes its rules from adapters: distributions of their own that register an "
    "entry point in the group 'rulebridge.adapters' (docs/adapter-contract.md). A checkout of "
    "rulebridge bundles them under adapters/: `pip install -e adapters/NAME` installs one, "
    "`pip install -r requirements-dev.txt` (from the checkout's root) all of them")
_ASKING = threading.local()  # asking the other sources, inside a NoRuleError being written


def no_rule_message(registry, function: Callable, signature: Signature, names, refusals,
                    key: str, config: Configuration | None = None) -> str:
    """The NoRuleError's text: what is missing, the fix (the installed sources that have a rule
    when the call named one that has not: `config` is given then), each source's reason."""
    name = function_name(function)
    what = f"rulebridge has no rule for {name}{key}."
    if not names:
        return compose(what, "pip install -r requirements-dev.txt  # or pip install -e "
                             "adapters/NAME", f"No rulebridge adapter is installed. "
                                              f"{NO_ADAPTER_HINT}.")
    others = _others_with_a_rule(registry, function, signature, names, config)
    if others:
        say = " or ".join(f"source={other!r}" for other in others)
        fix = (f"{say}  # {', '.join(others)} {'has' if len(others) == 1 else 'have'} a rule "
               f"here: rulebridge.grad(f, {say.split(' or ')[0]})")
    elif any("dtype" in refusal for refusal in refusals):
        fix = ("x = x.astype(np.float64)  # float32, float64, complex128 ndarrays have rules; "
               "np.asarray(m) for an np.matrix, m.filled() for a masked array")
    else:
        fix = ("f = rulebridge.import_rule(f, source=..., equivalent=...)  # a rule for a "
               "function no adapter covers (or an adapter of your own: "
               "docs/adapter-contract.md)")
    lines = [f"  {refusal}" for refusal in refusals]
    families = []
    for adapter_name in names:
        adapter = registry._loaded.get(adapter_name)
        if adapter is not None:
            families += [f"{s}  [{adapter_name}]" for s in adapter.signatures(function)]
    if families:
        lines.append(f"  Signatures that exist for {name}:")
        lines += [f"    {name}{s}" for s in families]
    return compose(what, fix, "\n".join(lines))


def _others_with_a_rule(registry, function, signature, names, config) -> list[str]:
    """The installed sources not in `names` that have a rule at the key (only when the call
    named its source: `config` is not None), without asking them recursively."""
    if config is None or getattr(_ASKING, "active", False):
        return []
    found = []
    _ASKING.active = True
    try:
        for other in registry.order(function):
            if other in names:
                continue
            try:
                if not registry.lookup(function, signature, other, config).missing:
                    found.append(str(other))
            except RulebridgeError:
                continue
    finally:
        _ASKING.active = False
    return found

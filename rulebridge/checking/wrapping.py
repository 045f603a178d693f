"""The one way rulebridge wraps a rule: `wrap(rule, policy)`.

A wrapped rule stands for another (or, before a choice, for one of several) and runs a `Policy`
around its forward and pullback. Three policies exist, each data beside the rule it wraps:

- debug mode's full contract checks (`rulebridge/checking/debug.py`), which pair residuals with
  snapshots and check the pullback against them;
- check-on-first-use (`rulebridge/checking/firstuse.py`), which picks one of several candidates
  by checking them at the first inputs a key is used at;
- `import_rule`'s verification (`rulebridge/import_rule.py`), which compares and checks the rule
  once per signature and static keywords, and otherwise leaves the rule as it is.

A policy that keeps the rule's own residuals and pullback (`passes_through`) keeps its
`sparse_pullback` too; any other hides it, so the sweep always calls the policy's pullback. Either
hides `unary_vjp`, which the sweep calls only beside a `CallForward` forward. Since a wrapped forward is not a `CallForward`, the engine never runs the
wrapped rule's function inline past the policy.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from ..rules.rule import Rule


class Policy:
    """What a wrapped rule does around the rule it stands for. This base does nothing."""

    # True when `forward` returns the chosen rule's own residuals and the rule's pullback can
    # take them: the wrapped rule then keeps that pullback and its fast forms.
    passes_through = False
    # True when `forward` returns `(chosen, the chosen rule's residuals)` and `pullback` is the
    # chosen rule's own on them: the engine may then compact them as the chosen rule would.
    compacts = False

    def select(self, wrapped: "Wrapped", args: tuple, kwargs,
               traced: tuple | None = None) -> Rule:
        """The rule that runs this call (a choice among candidates, or the one wrapped);
        `traced`: the positions of the call's traced arguments (None: not known, every one)."""
        raise NotImplementedError

    def forward(self, rule: Rule, args: tuple, kwargs,
                traced: tuple | None = None) -> tuple[Any, Any]:
        if traced is None or rule.traced_forward is None:
            return rule.forward(args, kwargs)
        return rule.traced_forward(args, kwargs, traced)

    def pullback(self, rule: Rule, residuals: Any, g: Any, argnums: tuple) -> Any:
        return rule.pullback(residuals, g, argnums)

    def chosen_residuals(self, residuals: Any) -> Any:
        """The chosen rule's own residuals within what this policy's `forward` returned (the
        same here; forward mode hands them to that rule's pushforward)."""
        return residuals


@dataclass(eq=False, repr=False)
class Wrapped(Rule):
    """A rule whose forward and pullback run `policy` (see the module's docstring). Its other
    fields are those of the rule it stands for, so errors, listings and the status read as
    that rule's."""

    policy: Policy | None = None

    def used(self, residuals: Any) -> Rule:
        """The rule whose pullback runs on `residuals`: the policy's choice, which `forward`
        paired them with (and what that rule used in turn)."""
        if self.policy is None or self.policy.passes_through:
            return self
        chosen, inner = residuals
        return chosen.used(self.policy.chosen_residuals(inner))

    def chosen(self, residuals: Any) -> tuple[Rule, Any]:
        if self.policy is None or self.policy.passes_through:
            return self, residuals
        chosen, inner = residuals
        return chosen.chosen(self.policy.chosen_residuals(inner))

    def call_residuals(self, residuals: Any) -> Any:
        chosen = self._compacting(residuals)
        return None if chosen is None else chosen.call_residuals(residuals[1])

    def compacted(self, residuals: Any, argnums: tuple) -> Any:
        chosen = self._compacting(residuals)
        inner = None if chosen is None else chosen.compacted(residuals[1], argnums)
        return None if inner is None else (chosen, inner)

    def rebased(self, residuals: Any, args: tuple) -> Any:
        chosen = self._compacting(residuals)
        inner = None if chosen is None else chosen.rebased(residuals[1], args)
        return None if inner is None else (chosen, inner)

    def _compacting(self, residuals: Any) -> Rule | None:
        """The chosen rule, when the engine may compact its residuals inside `residuals`."""
        if self.policy is None or not self.policy.compacts:
            return None
        chosen = residuals[0]
        return chosen if chosen.traced_forward is None else None


def wrap(rule: Rule, policy: Policy, **changes: Any) -> Wrapped:
    """`rule` behind `policy`: a `Wrapped` with `rule`'s fields (or `changes` to them).

    Parameters
    ----------
    rule : Rule
        The rule wrapped; with a policy that chooses among candidates, the preferred one.
    policy : Policy
        What runs around each forward and pullback.
    **changes
        Fields of the wrapped rule that differ from `rule`'s (``notes=...``).

    Returns
    -------
    Wrapped
    """
    values = {f.name: getattr(rule, f.name) for f in fields(Rule)}
    values.update(changes)
    wrapped = Wrapped(**values, policy=policy)
    # `traced_forward` too: the engine tells it which arguments are traced (Rule.traced_forward)
    if policy.passes_through:
        def forward(args, kwargs, traced=None):
            chosen = policy.select(wrapped, args, kwargs, traced)
            return policy.forward(chosen, args, kwargs, traced)

        wrapped.forward = wrapped.traced_forward = forward
        wrapped.unary_vjp = None  # the sweep calls it only beside a CallForward forward
        return wrapped

    def forward(args, kwargs, traced=None):
        chosen = policy.select(wrapped, args, kwargs, traced)
        out, residuals = policy.forward(chosen, args, kwargs, traced)
        return out, (chosen, residuals)

    def pullback(residuals, g, argnums):
        chosen, inner = residuals
        return policy.pullback(chosen, inner, g, argnums)

    wrapped.forward = wrapped.traced_forward = forward
    wrapped.pullback = pullback
    wrapped.sparse_pullback = wrapped.unary_vjp = None  # the sweep calls the policy's pullback
    return wrapped

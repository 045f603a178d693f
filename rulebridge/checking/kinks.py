"""Kinks of NumPy's functions where a source's rule answers NaN though a subgradient exists.

`numpy.linalg.norm` at a zero vector (or a zero slice, with `axis=`): every source's VJP is
`g * x / norm(x)`, 0 / 0, so `norm(v - v) + sum(v)`, a smooth program (its value is `sum(v)`),
had a NaN gradient everywhere, as under JAX. Every norm is convex and 0 lies in its
subdifferential at 0 (the dual norm's unit ball), so rulebridge takes the subgradient 0 there,
as PyTorch does (docs/architecture.md, "Kinks"): where a norm's pullback gives NaN in a slice
whose norm is 0 while the cotangent of that slice is finite, the slice's cotangent is 0. A NaN
the cotangent brought (from later in the program), or one at a nonzero slice, is left as it is.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..rules.registry import REGISTRY, Registry
from ..rules.rule import Rule
from .wrapping import Policy, wrap

_NORM = inspect.signature(np.linalg.norm)


class ZeroNormSubgradient(Policy):
    """Run a norm's rule keeping its output, and give zero slices the subgradient 0."""

    def __init__(self, rule: Rule) -> None:
        self.rule = rule

    def select(self, wrapped, args, kwargs, traced=None) -> Rule:
        return self.rule

    def forward(self, rule, args, kwargs, traced=None):
        out, residuals = super().forward(rule, args, kwargs, traced)
        return out, (out, args, kwargs, residuals)

    def pullback(self, rule, residuals, g, argnums):
        out, args, kwargs, inner = residuals
        cts = rule.pullback(inner, g, argnums)
        if 0 not in argnums:
            return cts
        k = argnums.index(0)
        ct = cts[k]
        if not isinstance(ct, np.ndarray) or not np.isnan(ct).any():
            return cts
        bound = _NORM.bind(*args, **kwargs)
        x = np.asarray(bound.arguments["x"])
        axis, keepdims = bound.arguments.get("axis"), bound.arguments.get("keepdims", False)
        axes = tuple(range(x.ndim)) if axis is None else (
            (axis,) if np.ndim(axis) == 0 else tuple(axis))
        at_input = _per_slice(x, axes, keepdims)
        zero = at_input(np.asarray(out) == 0) & np.isfinite(at_input(np.asarray(g)))
        fixed = np.where(zero & np.isnan(ct), np.zeros((), ct.dtype), ct)
        return tuple(fixed if i == k else c for i, c in enumerate(cts))

    def chosen_residuals(self, residuals):
        return residuals[3]


def _per_slice(x: np.ndarray, axes: tuple, keepdims: bool):
    """Broadcast a value of the norm's output shape to `x`'s shape, slice by slice."""
    axes = tuple(a % x.ndim for a in axes) if x.ndim else ()

    def at_input(value: np.ndarray) -> np.ndarray:
        if not keepdims:
            value = np.expand_dims(value, axes) if axes and value.ndim < x.ndim else value
        return np.broadcast_to(value.reshape(value.shape + (1,) * (x.ndim - value.ndim))
                               if value.ndim < x.ndim else value, x.shape)
    return at_input


def zero_norm_subgradient(rule: Rule) -> Rule:
    """The resolve hook: `rule` behind `ZeroNormSubgradient` for `numpy.linalg.norm`."""
    if rule.missing or rule.function is not np.linalg.norm:
        return rule
    return wrap(rule, ZeroNormSubgradient(rule))


def install(registry: Registry = REGISTRY) -> None:
    # on each rule built: the check at first use and the matrix check the rule as it is used
    registry.add_resolve_hook(zero_norm_subgradient, built=True)

"""NumPy's complex eigenvectors (`numpy.linalg.eigh`, `numpy.linalg.eig`), fixed only up to a
phase each: one policy with the `rulebridge.scipy` drop-ins (rulebridge/scipy/gauge.py).

LAPACK picks each phase as it likes (zheevd: the first row real; zgeev: the largest entry
real), and the sources' rules differentiate other choices, so a program whose value moves with
a phase got a gradient 10-90% off, unflagged. Each rule of those functions is wrapped here
(a resolve hook: every source, every key), and its pullback refuses a cotangent that moves with
the phases (`rules.phases.refuse_phase_dependence`: NoDerivativeError). Phase-invariant
programs (eigenvalues, `abs(v) ** 2`, projectors `v @ v.conj().T`) get the rule's own pullback.
"""

from __future__ import annotations

from typing import Any

from ..rules.phases import NUMPY_VECTORS, refuse_phase_dependence
from ..rules.registry import REGISTRY, Registry
from ..rules.rule import Rule
from .wrapping import Policy, wrap


class RefusingPhases(Policy):
    """Run `rule`, keeping its outputs beside its residuals, and refuse in the pullback a
    cotangent that moves with the phases of its complex vectors."""

    def __init__(self, rule: Rule) -> None:
        self.rule, self.phases = rule, NUMPY_VECTORS[rule.function]

    def select(self, wrapped, args, kwargs, traced=None) -> Rule:
        return self.rule

    def forward(self, rule, args, kwargs, traced=None):
        out, residuals = super().forward(rule, args, kwargs, traced)
        return out, (out, residuals)

    def pullback(self, rule, residuals, g, argnums):
        out, inner = residuals
        if isinstance(g, tuple):
            refuse_phase_dependence(rule.function, g, out, self.phases.aligned(out))
        return rule.pullback(inner, g, argnums)

    def chosen_residuals(self, residuals: Any) -> Any:
        return residuals[1]


def refusing_phases(rule: Rule) -> Rule:
    """The resolve hook: `rule` behind `RefusingPhases` for NumPy's eigenvector functions."""
    if rule.missing or rule.function not in NUMPY_VECTORS:
        return rule
    return wrap(rule, RefusingPhases(rule))


def install(registry: Registry = REGISTRY) -> None:
    registry.add_resolve_hook(refusing_phases)

"""Functions whose rule is right in one regime of their input's value only.

A key holds what is static in a call; a few functions also change meaning with the value of a
traced input. `np.linalg.pinv(a, rcond)` and `np.linalg.lstsq(a, b, rcond)` drop the singular
values of `a` below `rcond` times the largest: where one is dropped, the pseudo-inverse is that
of a matrix of lower rank, whose derivative is not the full-rank formula the sources implement
(JAX's pinv rule there is a few percent off, silently, at a key verified on full-rank
matrices). The catalogue checks these functions where nothing is cut, so the verdict at a key
holds in that regime: `REGIMES` names, per function, how many singular values a call cuts, and
a call that cuts some is checked at its own inputs, once per count and traced arguments, before
the key's rule is used there (refused when it fails; checked again when the check cannot
decide). The regime costs one `svd(a, compute_uv=False)` per call of these functions.
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from ..errors import UnverifiedRuleError
from ..rules.registry import Registry
from ..rules.rule import Rule
from ..rules.arguments import traced_argnums, with_traced
from .check import check_call
from .wrapping import Policy, Wrapped, wrap


def _cut(a, rcond) -> int:
    """How many singular values of `a` (each matrix of a stack) are at most `rcond` times the
    largest: the ones NumPy's pinv and lstsq drop."""
    a = np.asarray(a)
    if a.ndim < 2 or a.size == 0:
        return 0
    s = np.linalg.svd(a, compute_uv=False)
    if rcond is None:
        rcond = max(a.shape[-2:]) * np.finfo(s.dtype).eps
    return int(np.sum(s <= np.asarray(rcond)[..., None] * np.max(s, axis=-1, keepdims=True)))


def _pinv(args: tuple, kwargs) -> int:
    rcond = args[1] if len(args) > 1 else kwargs.get("rcond")
    if rcond is None:
        rcond = kwargs.get("rtol")
    return _cut(args[0], rcond)


def _lstsq(args: tuple, kwargs) -> int:
    return _cut(args[0], args[2] if len(args) > 2 else kwargs.get("rcond"))


REGIMES: dict[Callable, tuple[Callable, str]] = {
    np.linalg.pinv: (_pinv, "singular value(s) cut by rcond"),
    np.linalg.lstsq: (_lstsq, "singular value(s) cut by rcond (a rank-deficient system)"),
}


class InRegime(Policy):
    """The key's rule, used as it is where the call cuts nothing; where it cuts some, the
    key's candidates (each source's rule, the one a first-use check would choose among) are
    checked at the call's inputs, once per count cut and traced arguments, and the first that
    passes is used (none: the call is refused). A verdict there is never recorded for the key."""

    def __init__(self, rule: Rule, regime: Callable, what: str, registry: Registry) -> None:
        self.rule, self.regime, self.what, self.registry = rule, regime, what, registry
        self.candidates = getattr(rule.policy, "candidates", (rule,)) if isinstance(
            rule, Wrapped) else (rule,)
        self.verdicts: dict = {}  # (count cut, traced arguments) -> the rule or the error
        self.lock = threading.Lock()

    def select(self, wrapped, args, kwargs, traced=None) -> Rule:
        if self.registry.trusting:
            return self.rule
        with np.errstate(all="ignore"):
            try:
                cut = self.regime(args, kwargs)
            except (np.linalg.LinAlgError, ValueError, TypeError):
                return self.rule  # NumPy's own function says what is wrong with the call
        if not cut:
            return self.rule
        mask = traced_argnums(args, traced)
        with self.lock:
            verdict = self.verdicts.get((cut, mask))
            if verdict is None:
                verdict = self._check(args, kwargs, cut, mask)
        if isinstance(verdict, Exception):
            raise verdict
        return verdict

    def _check(self, args: tuple, kwargs, cut: int, mask):
        results = []
        for rule in self.candidates:
            result = check_call(rule, args, kwargs, argnums=mask)
            results.append(result)
            if result.passed:
                self.verdicts[(cut, mask)] = rule
                return rule
        refusal = UnverifiedRuleError(self._refusal(cut, mask, results), results)
        if all(r.settled for r in results):
            self.verdicts[(cut, mask)] = refusal
        return refusal

    def _refusal(self, cut: int, mask, results: list) -> str:
        lines = [f"{self.rule.name}'s rules are verified where no singular value is cut, and "
                 f"this call has {cut} {self.what}{with_traced('', mask)}; checked at these "
                 "inputs, none passes, so none is used (a wrong gradient is never returned):"]
        lines += [f"  {r.source}: {r.status}: {r.reason}" for r in results]
        lines.append("  What to do: choose rcond so that nothing is cut (or drop the small "
                     "singular values yourself with np.linalg.svd, whose rules are verified).")
        return "\n".join(lines)


def hook(registry: Registry) -> Callable[[Rule], Rule]:
    """The registry's resolve hook: each rule of a function in `REGIMES`, in its regimes."""
    def in_regime(rule: Rule) -> Rule:
        entry = None if rule.missing else REGIMES.get(rule.function)
        if entry is None:
            return rule
        return wrap(rule, InRegime(rule, *entry, registry))

    return in_regime


def install(registry: Registry) -> None:
    registry.add_resolve_hook(hook(registry))

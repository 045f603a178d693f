"""An unverified key is checked before it is trusted.

When a call arrives at a key (function, signature, configuration: rulebridge/rules/keys.py) at
which no status verifies any source's rule, the registry hands its candidates, in preference
order, to `choose`. The rule it returns checks them at the call's own inputs the first time it
runs (`check_call`: the dot-product test against finite differences of NumPy's function, in its
domain by construction, since the user's program computes there), before any pullback is used.
The check differentiates the arguments the call traces, the others being constants at their
values (the engine tells `Rule.traced_forward` which): a verdict with every differentiable
argument traced holds for the key; one with fewer holds for those traced arguments only:
the first candidate that passes is used, and the verdicts are recorded in the registry, so
every later call at that key in this process goes straight to the chosen rule. A candidate
that fails, raises or breaks the contract is never used. When none passes, the call raises
`UnverifiedRuleError` naming the function, the key, each source's result and what to do.

Where finite differences cannot decide at the inputs (a kink, a tie, a non-finite value) the
first such candidate is used with an `UncheckedRuleWarning`, and the key is checked again at the
next call's inputs, up to `ATTEMPTS` times.

`trust()` turns this off: unverified rules are used unchecked, as the user asked.
"""

from __future__ import annotations

import threading
import warnings

from ..errors import UnverifiedRuleError
from ..rules.registry import REGISTRY, Registry
from ..rules.rule import Rule
from .arguments import traced_argnums, with_traced
from .check import NUMPY_RAISED, check_call
from .result import CheckResult
from .wrapping import Policy, Wrapped, wrap

ATTEMPTS = 3  # checks of a key that finite differences cannot decide before it is settled


class UncheckedRuleWarning(UserWarning):
    """Finite differences could not decide a rule at the user's inputs (a kink, a tie)."""


class FirstUse(Policy):
    """The policy of a rule standing for `candidates` at `key` until a check at the first inputs
    picks one, for each set of traced arguments it is called with (`np.dot(x, w)`
    differentiated in `x` alone is checked in `x` alone: `w` is a constant there). Each op it
    records keeps the rule it chose, so its pullback is that rule's."""

    def __init__(self, candidates: list[Rule], key: str, registry: Registry) -> None:
        self.candidates = tuple(candidates)
        self.key = key
        self.registry = registry
        # by traced arguments (`traced_argnums`; None: every differentiable one): the rule
        # chosen, and how often finite differences could not decide
        self.chosen: dict = {}
        self.attempts: dict = {}
        self.lock = threading.Lock()

    @property
    def original(self) -> Rule:
        """The rule in use: the one chosen with every argument traced (else the last one
        chosen), or before a check the preferred candidate."""
        if None in self.chosen:
            return self.chosen[None]
        return next(reversed(self.chosen.values()), self.candidates[0])

    def select(self, wrapped: Wrapped, args: tuple, kwargs, traced=None) -> Rule:
        mask = traced_argnums(args, traced)
        rule = self.chosen.get(mask)
        if rule is None or self.attempts.get(mask):
            with self.lock:
                rule = self._pick(wrapped, args, kwargs, mask)
        return rule

    def _pick(self, wrapped: Wrapped, args: tuple, kwargs, mask) -> Rule:
        if self.chosen.get(mask) is not None and not self.attempts.get(mask):
            return self.chosen[mask]  # another thread decided while this one waited
        key = with_traced(self.key, mask)
        earlier = self.registry.checked(wrapped.name, key)  # a wrapper made again after a reset
        results: list[CheckResult] = []
        undecided = None
        for rule in self.candidates:
            if earlier.get(rule.source) == "pass":
                return self._chose(wrapped, mask, rule, "pass")
            if earlier.get(rule.source) in ("fail", "error"):
                results.append(CheckResult(rule.name, rule.source, key, earlier[rule.source],
                                           None, 0.0, 0, 0, f"{earlier[rule.source]} at an "
                                           "earlier call's inputs in this process"))
                continue
            result = check_call(rule, args, kwargs, argnums=mask)
            if result.status == "error" and result.reason.startswith(NUMPY_RAISED):
                rule.function(*args, **kwargs)  # the user's own error, as NumPy words it
            results.append(result)
            if result.status == "pass":
                self.registry.record_check(rule.function, rule.source, key, "pass")
                return self._chose(wrapped, mask, rule, "pass")
            if result.status in ("fail", "error"):
                self.registry.record_check(rule.function, rule.source, key, result.status)
            elif undecided is None:
                undecided = (rule, result)
        if undecided is None:
            raise UnverifiedRuleError(_no_rule_passed(wrapped.name, key, results), results)
        rule, result = undecided
        attempts = self.attempts.get(mask, 0) + 1
        settled = attempts >= ATTEMPTS
        self._chose(wrapped, mask, rule, "inconclusive")
        self.attempts[mask] = 0 if settled else attempts
        warnings.warn(f"{rule.name}{key} from {rule.source} could not be checked at these "
                      f"inputs: {result.reason}. It is used unverified"
                      + (" from now on." if settled else "; the next call's inputs are checked."),
                      UncheckedRuleWarning, stacklevel=5)
        return rule

    def _chose(self, wrapped: Wrapped, mask, rule: Rule, status: str) -> Rule:
        self.chosen[mask], wrapped.status = rule, status
        self.attempts.pop(mask, None)
        return rule


def choose(candidates: list[Rule], key: str, registry: Registry = REGISTRY) -> Rule:
    """The registry's chooser (see the module docstring)."""
    return wrap(candidates[0], FirstUse(candidates, key, registry))


def _no_rule_passed(name: str, key: str, results: list[CheckResult]) -> str:
    lines = [f"no rule for {name}{key} passed its check at these inputs, so "
             "none is used (a wrong gradient is never returned):"]
    lines += [f"  {r.source}: {r.status}: {r.reason}" for r in results]
    sources = [r.source for r in results]
    lines.append(
        "  The check compares each source's pullback with central differences of NumPy's own "
        "function at your inputs, at this exact configuration (keywords and static "
        "arguments). What to do: call the function with a configuration a source supports "
        "(compat_matrix.md lists what passes), install or prefer another source "
        f"(source='NAME', or rulebridge.prefer({name}, 'NAME'); tried: "
        f"{', '.join(sources)}), or report the failure to the source's authors. "
        "rulebridge.trust() uses unverified rules unchecked, at your own risk.")
    return "\n".join(lines)


class trust:
    """`rulebridge.trust()`: use rules that no status verifies at a key without checking them
    first (the behaviour before checks at first use were the default). As a context manager,
    only inside the block: `with rulebridge.trust(): ...`. `trust(False)` restores checking.

    Parameters
    ----------
    enabled : bool
        True to trust unverified rules, False to check them at first use (the default).
    """

    def __init__(self, enabled: bool = True) -> None:
        self._before = REGISTRY.trusting
        REGISTRY.trust(enabled)

    def __enter__(self) -> "trust":
        return self

    def __exit__(self, *exc_info) -> None:
        REGISTRY.trust(self._before)


def check_on_first_use(enabled: bool = True) -> None:
    """Check every unverified rule at the first inputs it is used at, before trusting it.

    Kept for older code: this is the default now. ``check_on_first_use(False)`` is
    ``rulebridge.trust()``.

    Parameters
    ----------
    enabled : bool, optional
        True checks unverified keys at first use (the default), False trusts them unchecked.
    """
    REGISTRY.trust(not enabled)


def install(registry: Registry = REGISTRY) -> None:
    registry.set_chooser(lambda candidates, key: choose(candidates, key, registry))

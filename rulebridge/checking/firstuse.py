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

Only a conclusive verdict (`CheckResult.settled`: a pass, a disagreement with finite
differences, a broken contract) is recorded for the key. Where finite differences cannot decide
at the inputs (a kink, a tie, a value that is not finite, a derivative that does not exist there)
or a rule raised at them (a shape or value it does not handle), that candidate is passed over
for this call only: when no candidate passes, the call is refused with `UnverifiedRuleError`,
and the next call's inputs are checked again. One awkward input never decides the key.

Inputs that hold NaN or inf are no verdict either, and never a reason to use a rule unverified:
the candidate is checked again at finite stand-ins of the traced inputs (each NaN or inf entry
replaced by the median of its argument's finite entries: refine.py `finite_stand_in`), where a
pass or a fail is the key's verdict as at any finite inputs. A rule that passed there is used at
the real inputs; an output whose value is NaN there has no derivative, and its gradient is NaN
wherever it reads an input (seeds.py `undefined_where_nan`); otherwise the call is refused.
Finite inputs where NumPy's value is not finite (log at 0) have no derivative: refused, as at a
kink.

`trust()` turns this off: unverified rules are used unchecked, as the user asked.
"""

from __future__ import annotations

import threading

from ..errors import (ImportRuleError, UncheckedRuleWarning, UnverifiedRuleError, compose,
                      warn_at_user)
from ..rules.levels import holds_box, primals
from ..rules.registry import REGISTRY, Registry
from ..rules.rule import Rule
from ..rules.arguments import differentiable_argnums, traced_argnums, with_traced
from .check import NUMPY_RAISED, check_call
from .refine import finite_stand_in
from .result import NOT_FINITE_INPUTS, RAISED, REFUSED_HERE, CheckResult
from .wrapping import Policy, Wrapped, wrap

ATTEMPTS = 3  # checks of a key that finite differences cannot decide before it is settled


class FirstUse(Policy):
    """The policy of a rule standing for `candidates` at `key` until a check at the first inputs
    picks one, for each set of traced arguments it is called with (`np.dot(x, w)`
    differentiated in `x` alone is checked in `x` alone: `w` is a constant there). Each op it
    records keeps the rule it chose, so its pullback is that rule's."""

    compacts = True  # the base policy's forward and pullback: the chosen rule's own

    def __init__(self, candidates: list[Rule], key: str, registry: Registry) -> None:
        self.candidates = tuple(candidates)
        self.key = key
        self.registry = registry
        # by traced arguments (`traced_argnums`; None: every differentiable one): the rule chosen
        self.chosen: dict = {}
        self.attempts: dict = {}  # by traced arguments: undecided checks so far
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
        if holds_box(args):  # nested: checked at the plain values under the boxes (levels.py)
            args = primals(args)
        # a wrapper made again after a reset, or per call: verdicts are kept under the function
        # (an imported one's: the function itself, not its name; Registry.subject)
        earlier = self.registry.checked(self.candidates[0].function, key)
        results: list[CheckResult] = []
        refused: list[ImportRuleError] = []  # imports' own verifications that refused them
        undecided = None  # the first rule finite differences could not decide at these inputs
        for rule in self.candidates:
            if earlier.get(rule.source) == "pass":
                return self._chose(wrapped, mask, rule)
            if earlier.get(rule.source) in ("fail", "error"):
                results.append(CheckResult(rule.name, rule.source, key, earlier[rule.source],
                                           None, 0.0, 0, 0, f"{earlier[rule.source]} at an "
                                           "earlier call's inputs in this process"))
                continue
            try:
                result = check_call(rule, args, kwargs, argnums=mask)
                if result.status == "inconclusive" and result.reason == NOT_FINITE_INPUTS:
                    result = _at_finite_stand_ins(rule, args, kwargs, mask, result)
            except ImportRuleError as exc:  # an import's own verification refused it here
                refused.append(exc)
                result = CheckResult(rule.name, rule.source, key, "error", None, 0.0, 0, 0,
                                     f"{RAISED % 'import'} ImportRuleError: {exc}")
            if result.status == "error" and result.reason.startswith(NUMPY_RAISED):
                rule.function(*args, **kwargs)  # the user's own error, as NumPy words it
            results.append(result)
            if result.status == "pass":
                self.registry.record_check(rule.function, rule.source, key, "pass")
                return self._chose(wrapped, mask, rule)
            if result.settled:  # a conclusive verdict about the key, not these inputs
                self.registry.record_check(rule.function, rule.source, key, result.status)
            elif (result.status == "inconclusive" and result.reason not in REFUSED_HERE
                  and result.reason != NOT_FINITE_INPUTS
                  and undecided is None):  # finite differences undecided, not a kink or edge
                undecided = (rule, result)
        if undecided is not None:  # used unverified here; the next inputs are checked again
            return self._unverified(wrapped, mask, key, *undecided)
        if refused and len(results) == 1:
            raise refused[0]  # the one import there is: its own words say what is wrong
        untried = [str(s) for s in self.registry.order(self.candidates[0].function)
                   if s not in {r.source for r in results}]
        raise UnverifiedRuleError(_no_rule_passed(wrapped.name, key, results, untried), results)

    def _chose(self, wrapped: Wrapped, mask, rule: Rule) -> Rule:
        self.chosen[mask], wrapped.status = rule, "pass"
        self.attempts.pop(mask, None)
        return rule

    def _unverified(self, wrapped: Wrapped, mask, key: str, rule: Rule, result) -> Rule:
        """`rule` used at finite inputs where finite differences cannot decide (steps that
        disagree): nothing is recorded about the key; after `ATTEMPTS` such calls it is used
        unverified from then on. (Inputs that are not finite never come here.)"""
        attempts = self.attempts.get(mask, 0) + 1
        settled = attempts >= ATTEMPTS
        self.chosen[mask], wrapped.status = rule, "inconclusive"
        self.attempts[mask] = 0 if settled else attempts
        warn_at_user(compose(
            f"{rule.name}{key} from {rule.source} could not be checked at these inputs: "
            f"{result.reason}. It is used unverified"
            + (" from now on." if settled else "; the next call's inputs are checked."),
            fix="warnings.simplefilter('error', rulebridge.UncheckedRuleWarning)  # to refuse "
                "such calls instead",
            details="Or call it first at inputs where the function is finite and smooth, which "
                    "checks the rule there."), UncheckedRuleWarning)
        return rule


def _at_finite_stand_ins(rule: Rule, args: tuple, kwargs, mask, result: CheckResult):
    """The check of `rule` where the traced inputs held NaN or inf (`result`, no verdict), made
    again at finite stand-ins of them (refine.py `finite_stand_in`): a pass or a fail there is a
    verdict about the key, as a check at any finite inputs is; otherwise `result` stands and the
    call is refused. A rule is never used unverified because its inputs were not finite."""
    argnums = mask if mask is not None else differentiable_argnums(args)
    stand_in = finite_stand_in(args, argnums)
    if stand_in is None:  # only constants are not finite: nothing to stand in for
        return result
    again = check_call(rule, stand_in, kwargs, argnums=mask)
    return again if again.settled else result


def choose(candidates: list[Rule], key: str, registry: Registry = REGISTRY) -> Rule:
    """The registry's chooser (see the module docstring)."""
    return wrap(candidates[0], FirstUse(candidates, key, registry))


def _no_rule_passed(name: str, key: str, results: list[CheckResult],
                    untried: list[str] = ()) -> str:
    if not any(r.settled for r in results):
        details = [f"{r.source}: {r.status}: {r.reason}" for r in results]
        details.append(
            "At these inputs finite differences cannot decide (a kink, a tie, a value that is "
            "not finite, a derivative that does not exist), or a rule raised. Call the gradient "
            "at inputs inside the function's smooth domain (away from 0 for a square root or a "
            f"norm), name a source whose rule handles them (source='NAME', or "
            f"rulebridge.prefer({name}, 'NAME')), or rulebridge.trust() to use the rule "
            "unchecked, at your own risk.")
        return compose(f"the rules for {name}{key} could not be checked at these inputs, so none "
                       "is used for this call (a wrong gradient is never returned); nothing is "
                       "decided about the key: the next call's inputs are checked again.",
                       f"source={untried[0]!r}  # not tried here: rulebridge.grad(f, "
                       f"source={untried[0]!r})" if untried else
                       "rulebridge.grad(f)(x)  # at an x where the function is smooth",
                       "\n".join(details))
    sources = [r.source for r in results]
    details = [f"{r.source}: {r.status}: {r.reason}" for r in results]
    details.append(
        "The check compares each source's pullback with central differences of NumPy's own "
        "function at your inputs, at this exact configuration (keywords and static arguments). "
        "Or: call the function in a configuration a source supports (`rulebridge lookup` and "
        f"compat_matrix.md say which pass), install another source (tried: {', '.join(sources)}),"
        " or report the failure to the source's authors. rulebridge.trust() uses unverified "
        "rules unchecked, at your own risk.")
    return compose(f"no rule for {name}{key} passed its check at these inputs, so none is used "
                   "(a wrong gradient is never returned).",
                   f"source={untried[0]!r}  # not tried here: rulebridge.grad(f, "
                   f"source={untried[0]!r})" if untried else
                   f"print(rulebridge.lookup({name}, *args, **kwargs))  # the configurations "
                   "that pass", "\n".join(details))


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

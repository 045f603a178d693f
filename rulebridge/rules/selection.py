"""How a rule is chosen for a call, in one place, read top to bottom:

    key -> candidates -> status -> rank -> check at first use -> fallback

for each **mode**: `VJP` (the pullback an op's reverse sweep runs), `JVP` (the pushforward forward
mode runs) and `GRADGRAD` (a pullback that is not NumPy code, offered as a function with a rule
of its own: `Rule.pullback_rule`, second order).

1. **Key.** A call's key is its function, the specs of its positional arguments and its static
   configuration (rules/keys.py `keyed`; the text `key_text` spells a verdict under: the traced
   arguments where they are not the default's, and the mode after it: " jvp", " gradgrad").
2. **Candidates.** The engine's own rules come first (allocation, the write, copies: the tape
   hands them over as `own`, rulebridge/engine/hooks.py `Writes.engine_rule`); else every
   installed source asked in preference order (`source=` names one), each building its rule
   or declining (`build`).
3. **Status.** Each candidate's status at the key: decided in this process (a check at a
   user's inputs, `check_rule`, the matrix), else shipped (compat_matrix.json, bound to the
   adapter's distribution), else the rule's own ("unverified").
4. **Rank.** Verified, then unverified, then rules that raised in their check; failed rules
   never; within a tier the sources `prefer(function, ...)` names, then the faster measured
   pullback (`ranking`). The first verified rule in preference order ends the search.
5. **Check at first use.** A key no status verifies is checked at the call's own inputs, against
   central differences of NumPy's function, before any derivative is used. The checks live in
   rulebridge/checking, which this layer may not import (rules/ is below engine/ and checking/,
   which are siblings), so they are *installed* here at import (rulebridge/__init__.py), one
   hook a mode: VJP's is the registry's chooser (`Registry.set_chooser`: it returns the rule
   the cache keeps, so it is per registry), JVP's and GRADGRAD's `install_check`. With no hook
   (the engine alone) nothing unverified is used. `rulebridge.trust()` skips the checks.
6. **Fallback.** VJP: a trusted pullback that raises during the sweep gets its cotangents from
   the next source's rule at the key (`fallbacks`, in preference order; engine/fallback.py runs
   them). JVP: no pushforward, or one not verified, is replaced by the op's pullback transposed
   (forward/transpose.py). GRADGRAD: none verified is refused by name, or with source=None the
   next source's first-order rule is tried (engine/fallback.py).

Only step 1's cache hit is on the hot path (the tape's own dict, engine/tape.py `record`);
everything below runs once per new key.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, Callable, Iterator

from ..errors import AdapterError, AdapterWarning, Declined, NoRuleError, RulebridgeError
from .arguments import traced_argnums, with_traced
from .keys import NO_CONFIGURATION, Configuration, configuration, format_key
from .missing import missing_rule, no_rule_message
from .rule import PullbackCall, Rule, function_name
from .signature import Signature, format_signature

# rules/registry.py's Registry, whose state the steps read (that module imports this one)
Registry = Any

VJP, JVP, GRADGRAD = "vjp", "jvp", "gradgrad"
ENGINE = "rulebridge"  # the source of the engine's own rules (exact data movement)
SETTLED = ("pass", "fail", "error")
_MAX_CACHED = 50_000  # as the tape's rule cache: a loop over new settings stops adding


# -- 1. the key ------------------------------------------------------------------------------

def key_text(signature: Signature, config: Configuration = NO_CONFIGURATION,
             traced: tuple | None = None, mode: str = VJP) -> str:
    """The text a verdict at this key is kept (and shipped) under, in `mode`."""
    text = with_traced(format_key(signature, config), traced)
    return text if mode == VJP else f"{text} {mode}"


# -- the VJP rule for a call: steps 2-5 ------------------------------------------------------

def rule_for(registry: Registry, function: Callable, signature: Signature,
             source: str | None = None, config: Configuration = NO_CONFIGURATION,
             own: Any = None) -> Rule:
    """The rule to use at the key, cached in `registry.cache(source)`: the engine's own (`own`,
    a tape's `Writes`) before the sources'. When no source has one, a *missing rule*: its
    forward returns outputs that cannot carry a gradient (comparisons, argmax, shapes) and
    raises the NoRuleError for anything that could."""
    if own is not None:  # a tape's lookup (registry.lookup: the registry's front, its cache)
        rule = own.engine_rule(function, signature)
        if rule is not None:
            registry.cache(source)[(function, signature)] = rule
            return rule
        with own.building_rules():
            return registry.lookup(function, signature, source, config)
    cache = registry.cache(source)
    key = (function, signature, config) if config else (function, signature)
    rule = cache.get(key)
    if rule is not None:
        return rule
    try:
        rule = resolve(registry, function, signature, source, config)
    except NoRuleError as exc:
        rule = missing_rule(function, signature, exc.message)
    for hook in registry._resolve_hooks:
        rule = hook(rule)
    # Threads that raced to resolve the same key all get the first rule stored.
    return cache.setdefault(key, rule)


def resolve(registry: Registry, function: Callable, signature: Signature,
            source: str | None, config: Configuration = NO_CONFIGURATION,
            trusting: bool | None = None) -> Rule:
    """Steps 2-5, uncached: the rule to use at the key, or NoRuleError saying why none."""
    prepare = getattr(function, "__rulebridge_prepare__", None)
    if prepare is not None:  # a drop-in imports its sources' rules, as its first traced call
        prepare()  # does: `check_rule` or `rule_for` may come first, with no adapter asked yet
    trusting = registry.trusting if trusting is None else trusting
    text = format_key(signature, config)
    if registry._status_loaders:
        registry._load_status()
    names = (source,) if source is not None else registry._only.get(function) or \
        registry.order(function)
    built: list[Rule] = []
    refusals: list[str] = []
    here: set[str] = set()  # sources whose status was decided in this process
    for name in names:  # 2. candidates, each with 3. its status
        rule, refusal, problem = build(registry, function, signature, name, text)
        if problem is not None:
            if source is not None:
                raise problem
            # asked among all adapters: report the broken one, keep the others working
            warnings.warn(f"{problem}", AdapterWarning, stacklevel=3)
        if rule is None:
            refusals.append(f"{name}: {refusal}")
            continue
        if registry._status.get((registry.subject(rule.function), rule.source, text)) is not None:
            here.add(name)
        if rule.status == "pass" and (rule.name, text) not in registry._seconds:
            return rule  # nothing ranks above the first verified rule in preference order
        built.append(rule)
    # Never a rule that fails at this key, or raised at a user's inputs in this process; one
    # that raised at the matrix's inputs is checked at the user's. Trusting: as it is.
    checked = registry._checked.get((registry.subject(built[0].function if built else function),
                                     text), {})
    if trusting:
        usable = [r for r in built if source is not None or r.status != "fail"]
    else:
        usable = [r for r in built
                  if r.status != "fail" and checked.get(r.source) not in ("fail", "error")]
    usable.sort(key=ranking(registry, function))  # 4.
    if usable:
        first = usable[0]
        if (first.status == "pass" or trusting or registry._chooser is None
                or (function, first.source) in registry._trusted):
            return first
        return registry._chooser(usable, text)  # 5. checked at the first inputs
    for rule in built:
        what = ("failed the finite-difference check against NumPy" if rule.status == "fail"
                else "raised or broke the rule contract in its check")
        where = ("at a call's inputs earlier in this process"
                 if rule.source in checked or rule.source in here
                 else "in the shipped compatibility matrix (compat_matrix.md)")
        refusals.append(f"{rule.source}: its rule {what} at this key, {where}; not used. "
                        "(source=... names another source; rulebridge.trust() uses "
                        "unverified rules unchecked, at your own risk)")
    raise NoRuleError(no_rule_message(registry, function, signature, names, refusals, text,
                                      config if source is not None else None))


def build(registry: Registry, function: Callable, signature: Signature, name: str,
          text: str) -> tuple[Rule | None, str, AdapterError | None]:
    """`(rule, refusal, problem)`: source `name`'s rule at the key with its status (decided in
    this process, else shipped, else its own), else why it has none, and the error of a broken
    adapter."""
    try:
        adapter = registry.adapter(name)
    except AdapterError as exc:
        return None, f"unavailable ({exc})", None
    builder = registry._imports.get(function, {}).get(name)
    try:
        with registry._lock:
            rule = (builder(signature) if builder is not None
                    else adapter.build_rule(function, signature))
    except Declined as exc:
        return None, f"{exc}", None
    except Exception as exc:
        problem = AdapterError(f"the rulebridge adapter {name!r} raised while building a "
                               f"rule for {function_name(function)}{text}: "
                               f"{type(exc).__name__}: {exc}")
        problem.__cause__ = exc
        return None, f"broken ({problem})", problem
    if not isinstance(rule, Rule):
        problem = AdapterError(f"the rulebridge adapter {name!r} returned "
                               f"{type(rule).__name__} for {function_name(function)}{text}, "
                               "not a rulebridge.Rule")
        return None, f"broken ({problem})", problem
    for hook in registry._build_hooks:
        rule = hook(rule)
    shipped = registry.shipped_status(rule.name, name, text, imported=builder is not None)
    decided = registry._status.get((registry.subject(rule.function), rule.source, text))
    rule.status = decided or shipped or rule.status
    return rule, "", None


def candidates(registry: Registry, function: Callable, signature: Signature,
               config: Configuration = NO_CONFIGURATION) -> list[tuple[str, Rule | None, str]]:
    """`(source, rule, refusal)` for every installed source at the key, in preference order:
    each source's rule with the status `resolve` goes by, or why it has none (what
    `rulebridge.lookup` reports)."""
    text = format_key(signature, config)
    if registry._status_loaders:
        registry._load_status()
    found = []
    for name in registry.order(function):
        rule, refusal, _ = build(registry, function, signature, name, text)
        found.append((str(name), rule, refusal))
    return found


def ranking(registry: Registry, function: Callable) -> Callable[[Rule], tuple]:
    """Step 4: verified, then unverified, then rules that raised in their check; within a tier
    the sources `prefer(function, ...)` names, then the faster measured pullback (unmeasured
    counts as slowest). Failed rules never get here."""
    pinned = registry._per_function.get(function, ())

    def rank(rule: Rule) -> tuple:
        tier = 0 if rule.status == "pass" else 2 if rule.status == "error" else 1
        pin = pinned.index(rule.source) if rule.source in pinned else len(pinned)
        seconds = registry._seconds.get((rule.name, format_signature(rule.signature)), {})
        return tier, pin, seconds.get(rule.source, float("inf"))

    return rank


# -- 6. VJP's fallback -----------------------------------------------------------------------

def fallbacks(registry: Registry, rule: Rule, config: Configuration) -> Iterator[Rule]:
    """The rules of the other sources at the op's key, in preference order (each chosen as
    `rule_for` chooses: verified, or checked at its first inputs)."""
    for name in map(str, registry.order(rule.function)):
        if name == rule.source:
            continue
        try:
            found = registry.lookup(rule.function, rule.signature, name, config)
        except RulebridgeError:
            continue
        if not found.missing:
            yield found


# -- the other modes: the op's rule is chosen (VJP); is its JVP, or its pullback's rule, used? --

# 5. `check(...) -> (status, reason)` per mode, installed by rulebridge/checking:
#   JVP: check(rule, args, kwargs, argnums) at the op's plain arguments (checking/pushforward.py)
#   GRADGRAD: check(call, traced) of the offered `PullbackCall` (checking/gradgrad.py)
_checks: dict[str, Callable[..., tuple[str, str]] | None] = {JVP: None, GRADGRAD: None}
# verdicts of first-use checks in this process, per mode (conclusive ones only)
#   JVP: (function name, source, key text) -> (status, reason)
#   GRADGRAD: (function name, source, key text, traced arguments, offered signature) -> ditto
VERDICTS: dict[str, dict] = {JVP: {}, GRADGRAD: {}}
_decided: dict = {}  # JVP: (rule, configuration, argnums) -> (jvp or None, why not)
_settled: dict = {}  # GRADGRAD: (registry, memo) -> a settled (status, reason), shipped or checked
_lock = threading.RLock()  # a check may ask for another mode's status


def install_check(mode: str, check: Callable[..., tuple[str, str]] | None) -> None:
    """Install the first-use check of `mode` (JVP or GRADGRAD): rulebridge/checking does."""
    _checks[mode] = check


def _status(registry: Registry, mode: str, rule: Rule, text: str, memo: tuple,
            run: Callable[[Callable], tuple[str, str]]) -> tuple[str, str]:
    """Steps 3 and 5 in `mode` for a chosen rule: decided in this process, else shipped at
    `text`, else `run(check)` with the installed check, whose conclusive verdict is kept."""
    if rule.source == ENGINE or registry.trusting:
        return "pass", ""
    found = VERDICTS[mode].get(memo)
    if found is not None:
        return found
    shipped = registry.shipped_status(rule.name, rule.source, text,
                                      imported=rule.notes.startswith("imported"))
    if shipped == "no gradient" and mode == JVP:
        return "pass", ""
    if shipped in SETTLED:
        return shipped, "" if shipped == "pass" else "in the shipped compatibility matrix"
    check = _checks[mode]
    if check is None:
        return "unchecked", f"no check of {mode} rules is installed"
    found = run(check)
    if found[0] in SETTLED and len(VERDICTS[mode]) < _MAX_CACHED:
        VERDICTS[mode][memo] = found
    return found


def pushforward(registry: Registry, rule: Rule, args: tuple, kwargs,
                argnums: tuple) -> tuple[Callable | None, str]:
    """JVP: `(jvp, why)`, the pushforward to use for this call of `rule` (the op's rule, chosen
    in VJP mode when it was recorded), or None and why not: its fallback is the pullback
    transposed (forward/transpose.py). Its key also names the traced arguments."""
    jvp = rule.jvp
    if jvp is None:
        return None, f"the {rule.source} rule has none"
    if rule.source == ENGINE or registry.trusting:
        return jvp, ""
    try:
        config = configuration(rule.function, args, kwargs)
        memo = (rule, config, argnums)
        hash(memo)
    except Exception:
        config, memo = (), None
    found = _decided.get(memo) if memo is not None else None
    if found is not None:
        return found
    with _lock:
        text = key_text(rule.signature, config, traced_argnums(args, argnums), JVP)
        status, reason = _status(registry, JVP, rule, text, (rule.name, rule.source, text),
                                 lambda check: check(rule, args, kwargs, argnums))
        decided = (jvp, "") if status == "pass" else \
            (None, f"the {rule.source} pushforward at {text}: {status}"
                   + (f" ({reason})" if reason else ""))
        if memo is not None and status != "inconclusive" and len(_decided) < _MAX_CACHED:
            _decided[memo] = decided
        return decided


def pullback_rule_status(registry: Registry, rule: Rule, key: str, call: PullbackCall,
                         traced: tuple) -> tuple[str, str]:
    """GRADGRAD: `(status, reason)` for the rule `call` offers for `rule`'s pullback at the
    first-order key text `key` ("pass" to record it: engine/again.py); `traced` are the
    positions of `call.args` that carry a derivative at the enclosing level."""
    if rule.source == ENGINE or registry.trusting:
        return "pass", ""
    memo = (rule.name, rule.source, key, traced, call.rule.signature)
    found = _settled.get((registry, memo))
    if found is not None:
        return found
    with _lock:
        found = _status(registry, GRADGRAD, rule, f"{key} {GRADGRAD}", memo,
                        lambda check: check(call, traced))
        if found[0] in SETTLED and len(_settled) < _MAX_CACHED:
            # Shipped verdicts too, which `_status` looks up in the matrix on every call: under
            # nesting every inner op whose pullback is compiled asks (9 per hvp of
            # benchmarks/hvp.py's network [jax], 4% of it under cProfile).
            _settled[(registry, memo)] = found
        return found


def verdicts(mode: str = JVP) -> dict:
    """The first-use verdicts of this process in `mode`: {memo: status}."""
    return {memo: found[0] for memo, found in VERDICTS[mode].items()}


def forget(mode: str | None = None) -> None:
    """Drop the first-use verdicts of `mode` (None: every mode; tests)."""
    with _lock:
        for name in (mode,) if mode is not None else tuple(VERDICTS):
            VERDICTS[name].clear()
        if mode in (None, JVP):
            _decided.clear()
        if mode in (None, GRADGRAD):
            _settled.clear()

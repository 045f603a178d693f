"""Which adapter answers for which function: discovery, preferences, and the rule cache.

One `Registry` per process (`REGISTRY`). The hot path reads only `Registry.cache(source)`, a plain
dict keyed by `(function, signature[, configuration])` (rules/keys.py); the rest runs once per new
key. A rule is used where a status verifies it, else as `set_chooser`'s chooser decides.
"""

from __future__ import annotations

import threading
import warnings
from typing import Callable, Iterable

from .adapter import Adapter, AdapterInfo, discover
from ..errors import AdapterError, AdapterWarning, Declined, NoRuleError
from .keys import NO_CONFIGURATION, Configuration, format_key
from .missing import NO_ADAPTER_HINT, missing_rule, no_rule_message
from .rule import Rule, function_name
from .imported import ImportedRules
from .shipped import ShippedStatus
from .signature import Signature, format_signature

class Registry(ShippedStatus, ImportedRules):
    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._infos: dict[str, AdapterInfo] | None = None
        self._loaded: dict[str, Adapter] = {}
        self._load_errors: dict[str, AdapterError] = {}
        self._order: tuple[str, ...] = ()  # set by prefer(); else the adapters' priorities
        self._per_function: dict[Callable, tuple[str, ...]] = {}
        self._caches: dict[str | None, dict] = {}
        self._status: dict[tuple[str, str, str], str] = {}  # (function, source, signature) -> status
        self._init_shipped()
        self._resolve_hooks: list[Callable[[Rule], Rule]] = []
        self._build_hooks: list[Callable[[Rule], Rule]] = []  # on each rule an adapter builds
        self._seconds: dict[tuple[str, str], dict[str, float]] = {}  # (function, signature) -> {source: s}
        self._imports: dict[Callable, dict[str, Callable[[Signature], Rule]]] = {}
        # Loaders of the shipped status, run before the first rule is resolved, not at import.
        self._status_loaders: list[Callable[["Registry"], object]] = []
        # Verdicts of checks at users' inputs in this process: (function, key) -> {source: status}
        self._checked: dict[tuple[str, str], dict[str, str]] = {}
        # `chooser(candidates, key) -> Rule`: how to use rules no status verifies at a key.
        self._chooser: Callable[[list[Rule], str], Rule] | None = None
        self.trusting = False  # True: use unverified rules unchecked (`rulebridge.trust`)
        self._trusted: set[tuple[Callable, str]] = set()  # (function, source) the user trusts
        self._only: dict[Callable, tuple[str, ...]] = {}  # function -> the sources source=None asks

    # -- adapters ------------------------------------------------------------------------------

    def infos(self) -> dict[str, AdapterInfo]:
        with self._lock:
            if self._infos is None:
                self._infos = discover()
            return self._infos

    def register(self, adapter: Adapter) -> None:
        """Add an adapter instance in-process (tests, notebooks); entry points are the usual way."""
        if not adapter.name:
            raise AdapterError(f"{type(adapter).__name__} has no `name`; set one before registering")
        with self._lock:
            self.infos()[adapter.name] = AdapterInfo(adapter.name, "", "")
            self._loaded[adapter.name] = adapter
            self._load_errors.pop(adapter.name, None)
            self._adapters_changed()

    def rediscover(self) -> None:
        """Read the entry points again, for an adapter installed (or taken off `sys.path`) while
        the process runs. Loaded adapters whose entry point is unchanged stay loaded; adapters
        registered in-process stay."""
        with self._lock:
            old = self.infos()
            found = discover()
            found.update({n: info for n, info in old.items() if not info.target})
            self._loaded = {n: a for n, a in self._loaded.items()
                            if n in found and found[n].target == old[n].target}
            self._infos = found
            self._load_errors.clear()
            self._adapters_changed()

    def unregister(self, name: str) -> None:
        with self._lock:
            self.infos().pop(name, None)
            self._loaded.pop(name, None)
            self._adapters_changed()

    def adapter(self, name: str) -> Adapter:
        """The loaded adapter `name`; imports it on first use."""
        adapter = self._loaded.get(name)
        if adapter is not None:
            return adapter
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            if name in self._load_errors:
                raise self._load_errors[name]
            info = self.infos().get(name)
            if info is None:
                known = ", ".join(sorted(self.infos())) or "none"
                raise AdapterError(f"no rulebridge adapter named {name!r} is installed (installed: "
                                   f"{known}).", fix="pip install -e adapters/NAME  # from a "
                                   "checkout; or name an installed source",
                                   details=f"{NO_ADAPTER_HINT}.")
            if not info.available:
                hint = info.install
                raise AdapterError(f"the rulebridge adapter {name!r} is unavailable: {info.reason}"
                                   + (f". Or: {hint}." if hint else "."))
            try:
                adapter = info.load()
            except AdapterError as exc:
                self._load_errors[name] = exc
                raise
            self._loaded[name] = adapter
            return adapter

    # -- preferences ---------------------------------------------------------------------------

    def prefer(self, *args) -> None:
        """`prefer("jax", "autograd")` sets the global order; `prefer(np.linalg.eigh, "jax")` sets
        the order for one function."""
        if args and callable(args[0]) and not isinstance(args[0], str):
            function, names = args[0], args[1:]
            if not names:
                raise TypeError("prefer(function, *sources) needs at least one source name")
            self._check_names(names)
            with self._lock:
                self._per_function[function] = tuple(names)
                self._invalidate()
            return
        if not args:
            installed = ", ".join(repr(str(n)) for n in self.order()) or "none installed"
            raise TypeError(f"prefer() needs source names, most preferred first (installed: "
                            f"{installed})")
        self._check_names(args)
        with self._lock:
            self._order = tuple(args)
            self._invalidate()

    def order(self, function: Callable | None = None) -> tuple[str, ...]:
        if function is not None and function in self._per_function:
            first = self._per_function[function]
            return first + tuple(n for n in self._global_order() if n not in first)
        return self._global_order()

    def _global_order(self) -> tuple[str, ...]:
        installed = self.infos()
        preferred = tuple(n for n in self._order if n in installed)
        rest = [info for n, info in installed.items() if n not in preferred]
        return preferred + tuple(sorted(rest, key=lambda info: (-info.priority, str(info))))

    def _check_names(self, names: Iterable[str]) -> None:
        for name in names:
            if not isinstance(name, str):
                raise TypeError(f"source names are strings, got {name!r}")

    # -- rules ---------------------------------------------------------------------------------

    def cache(self, source: str | None) -> dict:
        """The `(function, signature) -> Rule` dict for a source selection (None: all, in order)."""
        cache = self._caches.get(source)
        if cache is None:
            if source is not None:
                self.adapter(source)  # a clear error now, not at the first op
            with self._lock:
                cache = self._caches.setdefault(source, {})
        return cache

    def lookup(self, function: Callable, signature: Signature, source: str | None = None,
               config: Configuration = NO_CONFIGURATION) -> Rule:
        """The rule to use at the key (function, signature, configuration), cached. When no
        adapter has one, a *missing rule* (`rule.missing`): its forward returns outputs that
        cannot carry a gradient (comparisons, argmax, shapes) and raises the NoRuleError for
        anything that could."""
        cache = self.cache(source)
        key = (function, signature, config) if config else (function, signature)
        rule = cache.get(key)
        if rule is None:
            try:
                rule = self._resolve(function, signature, source, config)
            except NoRuleError as exc:
                rule = missing_rule(function, signature, exc.message)
            for hook in self._resolve_hooks:
                rule = hook(rule)
            # Threads that raced to resolve the same key all get the first rule stored.
            rule = cache.setdefault(key, rule)
        return rule

    def set_chooser(self, chooser: Callable[[list[Rule], str], Rule] | None) -> None:
        """`chooser(candidates, key text)`: the rule to use where no status verifies any of the
        candidates (in preference order), e.g. one that checks them at the first inputs."""
        with self._lock:
            self._chooser = chooser
            self._invalidate()

    def trust(self, trusting: bool) -> None:
        """True: use a rule no status verifies without checking it (the old behaviour)."""
        with self._lock:
            self.trusting = trusting
            self._invalidate()

    def record_check(self, function: Callable | str, source: str, key: str, status: str) -> None:
        """A check at a user's inputs decided `status` at `key`, for this process."""
        with self._lock:
            function = self.subject(function)
            self._checked.setdefault((function, key), {})[source] = status
            self._status[(function, source, key)] = status
            self._invalidate()

    def checked(self, function: Callable | str, key: str) -> dict[str, str]:
        return dict(self._checked.get((self.subject(function), key), {}))  # {source: status} at users' inputs

    def add_resolve_hook(self, hook: Callable[[Rule], Rule], built: bool = False) -> None:
        """Run `hook(rule) -> rule` on every rule resolved from now on (e.g.
        `rulebridge.check_on_first_use`), or with `built` on every rule an adapter builds,
        before it is checked or chosen; the rule caches are cleared."""
        with self._lock:
            hooks = self._build_hooks if built else self._resolve_hooks
            if hook not in hooks:
                hooks.append(hook)
            self._invalidate()

    def remove_resolve_hook(self, hook: Callable[[Rule], Rule]) -> None:
        with self._lock:
            if hook in self._resolve_hooks:
                self._resolve_hooks.remove(hook)
            self._invalidate()

    def require(self, function: Callable, signature: Signature, source: str | None = None,
                config: Configuration = NO_CONFIGURATION) -> Rule:
        """Like `lookup`, but raises NoRuleError when no adapter has a rule."""
        rule = self.lookup(function, signature, source, config)
        if rule.missing:
            raise NoRuleError(rule.notes)
        return rule

    def candidate(self, function: Callable, signature: Signature, source: str | None = None,
                  config: Configuration = NO_CONFIGURATION) -> Rule:
        """The rule trusting would use at the key, uncached and unchecked (what `check_rule`
        and the matrix check)."""
        return self._resolve(function, signature, source, config, trusting=True)

    def _resolve(self, function: Callable, signature: Signature, source: str | None,
                 config: Configuration = NO_CONFIGURATION, trusting: bool | None = None) -> Rule:
        trusting = self.trusting if trusting is None else trusting
        text = format_key(signature, config)
        if self._status_loaders:
            self._load_status()
        names = (source,) if source is not None else self._only.get(function) or self.order(
            function)
        built: list[Rule] = []
        refusals: list[str] = []
        here: set[str] = set()  # sources whose status was decided in this process
        for name in names:
            rule, refusal, problem = self._build(function, signature, name, text)
            if problem is not None:
                if source is not None:
                    raise problem
                # asked among all adapters: report the broken one, keep the others working
                warnings.warn(f"{problem}", AdapterWarning, stacklevel=2)
            if rule is None:
                refusals.append(f"{name}: {refusal}")
                continue
            if self._status.get((self.subject(rule.function), rule.source, text)) is not None:
                here.add(name)
            if rule.status == "pass" and (rule.name, text) not in self._seconds:
                return rule  # nothing ranks above the first verified rule in preference order
            built.append(rule)
        # Never a rule that fails at this key, or raised at a user's inputs in this process; one
        # that raised at the matrix's inputs is checked at the user's. Trusting: as it is.
        checked = self._checked.get((self.subject(built[0].function if built else function),
                                     text), {})
        if trusting:
            usable = [r for r in built if source is not None or r.status != "fail"]
        else:
            usable = [r for r in built
                      if r.status != "fail" and checked.get(r.source) not in ("fail", "error")]
        usable.sort(key=self._ranking(function))
        if usable:
            first = usable[0]
            if (first.status == "pass" or trusting or self._chooser is None
                    or (function, first.source) in self._trusted):
                return first
            return self._chooser(usable, text)
        for rule in built:
            what = ("failed the finite-difference check against NumPy" if rule.status == "fail"
                    else "raised or broke the rule contract in its check")
            where = ("at a call's inputs earlier in this process"
                     if rule.source in checked or rule.source in here
                     else "in the shipped compatibility matrix (compat_matrix.md)")
            refusals.append(f"{rule.source}: its rule {what} at this key, {where}; not used. "
                            "(source=... names another source; rulebridge.trust() uses "
                            "unverified rules unchecked, at your own risk)")
        raise NoRuleError(no_rule_message(self, function, signature, names, refusals, text,
                                          config if source is not None else None))

    def _build(self, function: Callable, signature: Signature, name: str,
               text: str) -> tuple[Rule | None, str, AdapterError | None]:
        """`(rule, refusal, problem)`: source `name`'s rule at the key with its status (shipped,
        or decided in this process), else why it has none, and the error of a broken adapter."""
        try:
            adapter = self.adapter(name)
        except AdapterError as exc:
            return None, f"unavailable ({exc})", None
        builder = self._imports.get(function, {}).get(name)
        try:
            with self._lock:
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
        for hook in self._build_hooks:
            rule = hook(rule)
        shipped = self.shipped_status(rule.name, name, text, imported=builder is not None)
        decided = self._status.get((self.subject(rule.function), rule.source, text))
        rule.status = decided or shipped or rule.status
        return rule, "", None

    def verdicts(self, function: Callable, signature: Signature,
                 config: Configuration = NO_CONFIGURATION) -> list[tuple[str, Rule | None, str]]:
        """`(source, rule, refusal)` for every installed source at the key, in preference order:
        each source's rule with the status `_resolve` goes by, or why it has none (what
        `rulebridge.lookup` reports)."""
        text = format_key(signature, config)
        if self._status_loaders:
            self._load_status()
        found = []
        for name in self.order(function):
            rule, refusal, _ = self._build(function, signature, name, text)
            found.append((str(name), rule, refusal))
        return found

    def _ranking(self, function: Callable) -> Callable[[Rule], tuple]:
        """Verified, then unverified, then rules that raised in their check; within a tier the
        sources `prefer(function, ...)` names, then the faster measured pullback (unmeasured
        counts as slowest). Failed rules never get here."""
        pinned = self._per_function.get(function, ())

        def rank(rule: Rule) -> tuple:
            tier = 0 if rule.status == "pass" else 2 if rule.status == "error" else 1
            pin = pinned.index(rule.source) if rule.source in pinned else len(pinned)
            seconds = self._seconds.get((rule.name, format_signature(rule.signature)), {})
            return tier, pin, seconds.get(rule.source, float("inf"))

        return rank

    def rules(self) -> list[Rule]:
        seen: dict[int, Rule] = {}
        for cache in list(self._caches.values()):
            for rule in list(cache.values()):
                if isinstance(rule, Rule) and not rule.missing:  # not a call's Spelling
                    seen.setdefault(id(rule), rule)
        return list(seen.values())

    def set_status(self, function: Callable | str, source: str, signature: str,
                   status: str) -> None:
        """Record a check result (`rulebridge matrix` or `check_rule`) used to choose rules."""
        with self._lock:
            self._status[(self.subject(function), source, signature)] = status
            self._invalidate()

    def set_seconds(self, function: str, source: str, signature: str, seconds: float) -> None:
        """Record a measured pullback time (`rulebridge.measure_rules`) used to choose rules."""
        with self._lock:
            self._seconds.setdefault((function, signature), {})[source] = seconds
            self._invalidate()

    def seconds(self, function: str, signature: str) -> dict[str, float]:
        """The measured pullback times for `function` at `signature`, by source."""
        return dict(self._seconds.get((function, signature), {}))

    def subject(self, function: Callable | str) -> Callable | str:
        """What verdicts are kept under: an imported function itself (two made by one factory
        share a name), any other (NumPy's, checked by the matrix under it) its name."""
        if isinstance(function, str) or function in self._imports:
            return function
        return function_name(function)

    def release(self) -> None:
        """Drop every cached rule and what the loaded adapters compiled (`Adapter.release`)."""
        with self._lock:
            self._invalidate()
            for adapter in list(self._loaded.values()):
                adapter.release()

    def _invalidate(self) -> None:
        for cache in self._caches.values():
            cache.clear()


REGISTRY = Registry()

"""Which adapter answers for which function: discovery, preferences, and the rule cache.

One `Registry` per process (`REGISTRY`). The hot path reads only `Registry.cache(source)`, a plain
dict keyed by `(function, signature[, configuration])` (rules/keys.py); the rest runs once per new
key. Which rule a key gets is rules/selection.py's, which reads the registry's state kept here.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable

from . import selection
from .adapter import Adapter, AdapterInfo, discover
from ..errors import AdapterError, NoRuleError
from .keys import NO_CONFIGURATION, Configuration
from .missing import NO_ADAPTER_HINT
from .rule import Rule, function_name
from .imported import ImportedRules
from .shipped import ShippedStatus
from .signature import Signature

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
        """The rule to use at the key (function, signature, configuration), cached, as
        rules/selection.py chooses it (`rule_for`); a *missing rule* (`rule.missing`) when no
        adapter has one."""
        return selection.rule_for(self, function, signature, source, config)

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
        return selection.resolve(self, function, signature, source, config, trusting=True)

    def verdicts(self, function: Callable, signature: Signature,
                 config: Configuration = NO_CONFIGURATION) -> list[tuple[str, Rule | None, str]]:
        """`(source, rule, refusal)` for every installed source at the key, in preference order
        (rules/selection.py `candidates`: what `rulebridge.lookup` reports)."""
        return selection.candidates(self, function, signature, config)

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

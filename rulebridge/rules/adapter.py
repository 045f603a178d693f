"""The adapter base class and entry-point discovery."""

from __future__ import annotations

import importlib
import re
import warnings
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from ..errors import AdapterError, AdapterWarning, Declined
from .rule import Rule, function_name
from .signature import Signature

#: The entry-point group an adapter's distribution declares itself in, ``rulebridge.adapters``:
#: ``[project.entry-points."rulebridge.adapters"]`` in its pyproject.toml.
ENTRY_POINT_GROUP = "rulebridge.adapters"


class Adapter:
    """A source of rules. Subclass it and register it under the entry-point group
    `rulebridge.adapters`; see docs/adapter-contract.md."""

    name: str = ""

    def version(self) -> str:
        return ""

    def functions(self) -> Iterable[Callable]:
        """The NumPy/SciPy callables this adapter can build rules for."""
        return ()

    def build_rule(self, function: Callable, signature: Signature) -> Rule:
        """A rule for `function` at `signature`, or raise `Declined(reason)`."""
        raise NotImplementedError

    def signatures(self, function: Callable) -> list[str]:
        """Human-readable signature families this adapter accepts for `function`."""
        return []

    def use_cache(self, folder: Path) -> None:
        """Keep under `folder` (this adapter's own) what does not change from one run to the
        next, such as compiled pullbacks, and reuse it; `rulebridge matrix` asks, so that a run
        does not compile again what an earlier one did. A cache must never change a result:
        key what it keeps by everything that result depends on. The default keeps nothing.

        Parameters
        ----------
        folder : pathlib.Path
            A folder for this adapter alone; it may not exist yet.
        """

    def release(self) -> None:
        """Drop what this adapter compiled or cached for the rules built so far (rules built
        later compile anew). `rulebridge matrix` calls it between rows, so that a long run's
        memory stays flat; nothing else does. The default keeps nothing to drop."""

    # -- imports (`rulebridge.import_rule`); optional ------------------------------------------

    # Where `counterpart` finds a NumPy/SciPy function by name: {"numpy": "jax.numpy", ...}.
    counterpart_namespaces: dict[str, str] = {}

    def counterpart(self, function: Callable) -> Callable:
        """This source's function with the same meaning as `function`, found by name through
        `counterpart_namespaces`; raise `Declined` saying what was looked for."""
        return find_counterpart(self.name, function, self.counterpart_namespaces)

    def import_rule(self, function: Callable, signature: Signature, equivalent: Callable) -> Rule:
        """A rule for `function` at `signature` whose forward is `function` itself and whose
        pullback comes from `equivalent`, a function of this source with the same meaning; or
        raise `Declined(reason)`."""
        raise Declined(f"the rulebridge adapter {self.name!r} does not import rules (it does not "
                       "implement Adapter.import_rule)")

    def evaluate(self, equivalent: Callable, args: tuple, kwargs: dict):
        """`equivalent(*args, **kwargs)` on NumPy arguments, with NumPy outputs: `import_rule`
        compares it with the function it stands for. Override when the source needs a context
        (precision flags) to compute at the arguments' own dtype."""
        out = equivalent(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(_to_numpy(item) for item in out)
        return _to_numpy(out)


def find_counterpart(source: str, function: Callable, namespaces: dict[str, str]) -> Callable:
    """The callable named like `function` under `namespaces` (`scipy.special.logsumexp` with
    {"scipy": "jax.scipy"} is `jax.scipy.special.logsumexp`), or `Declined` naming what was
    looked for."""
    name = function_name(function)
    head, _, rest = name.partition(".")
    if head not in namespaces or not rest:
        covered = ", ".join(f"{k}.* as {v}.*" for k, v in namespaces.items()) or "none"
        raise Declined(f"{source} finds counterparts by name only for functions of {covered}; "
                       f"{name} is not one of them: pass equivalent=<a {source} function with "
                       "the same meaning>")
    wanted = f"{namespaces[head]}.{rest}"
    module_name, _, attribute = wanted.rpartition(".")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise Declined(f"{source} has no counterpart of {name}: looked for {wanted} "
                       f"({type(exc).__name__}: {exc}); pass equivalent=<a {source} function "
                       "with the same meaning>") from None
    if not callable(found):
        raise Declined(f"{source} has no counterpart of {name}: {wanted} is a "
                       f"{type(found).__name__}, not a function")
    return found


def _to_numpy(value):
    if isinstance(value, (np.ndarray, np.generic, int, float, complex, bool)):
        return value
    return np.asarray(value)


class AdapterInfo(str):
    """One discovered adapter, listed without importing it. It is its name (a `str`), and it
    also says whether it can be loaded and, if not, why; which distribution (and version)
    registers it and the installed versions of what that distribution requires, which is what a
    shipped status is bound to; and, for a name several distributions register, `candidates`:
    each of them (the name is then unavailable)."""

    target: str  # "module:attribute" of the entry point, or "" for one registered in-process
    distribution: str
    available: bool
    reason: str
    version: str
    requires: dict[str, str]
    candidates: tuple["AdapterInfo", ...]

    def __new__(cls, name: str, target: str, distribution: str, available: bool = True,
                reason: str = "", version: str = "", requires: dict[str, str] | None = None,
                candidates: tuple["AdapterInfo", ...] = ()) -> "AdapterInfo":
        info = super().__new__(cls, name)
        info.target, info.distribution = target, distribution
        info.available, info.reason = available, reason
        info.version, info.requires, info.candidates = version, dict(requires or {}), candidates
        return info

    def made(self, distribution: str, version: str, requires: dict[str, str]) -> bool:
        """True when this adapter is the one `distribution` at `version` registers, with the
        same versions of what it requires installed: a status made with that one applies to it.
        Never for an adapter registered in-process, nor for a name several distributions claim."""
        return (bool(self.target) and bool(distribution) and not self.candidates
                and (self.distribution, self.version, self.requires)
                == (distribution, version, dict(requires)))

    @property
    def name(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        state = "available" if self.available else f"unavailable: {self.reason}"
        return f"<adapter {self.name!r} ({state})>"

    @property
    def priority(self) -> int:
        """Where `source=None` tries this adapter: higher first (ties by name). Declared as
        `rulebridge_priority` in the module the entry point names; 0 otherwise."""
        value = self._declared("rulebridge_priority", 0)
        return value if isinstance(value, int) else 0

    @property
    def install(self) -> str:
        """How to install what this adapter needs, as its module declares it in
        `rulebridge_install` ("" when it does not)."""
        value = self._declared("rulebridge_install", "")
        return value if isinstance(value, str) else ""

    def _declared(self, attribute: str, default):
        # The module, not the entry point's attribute: an adapter keeps that module light (its
        # source library is imported when the adapter itself is loaded).
        module_name = self.target.partition(":")[0]
        if not module_name or self.candidates:  # a contested name: import none of its claimants
            return default
        try:
            module = importlib.import_module(module_name)
        except Exception:  # reported when the adapter itself is loaded
            return default
        return getattr(module, attribute, default)

    def load(self) -> Adapter:
        try:
            entry = metadata.EntryPoint(self.name, self.target, ENTRY_POINT_GROUP)
            factory = entry.load()
            adapter = factory() if callable(factory) else factory
        except Exception as exc:  # an adapter's own import failure, whatever it is
            raise AdapterError(
                f"the rulebridge adapter {self.name!r} (entry point {self.target!r} from "
                f"{self.distribution or 'an unknown distribution'}) failed to load: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(adapter, Adapter):
            raise AdapterError(
                f"the rulebridge adapter {self.name!r} ({self.target}) is a "
                f"{type(adapter).__name__}, not a rulebridge.Adapter"
            )
        if not adapter.name:
            adapter.name = self.name
        return adapter


def discover() -> dict[str, AdapterInfo]:
    """Entry points of the group, by name, without importing any of them. An adapter whose
    distribution requires a package that is not installed is listed as unavailable. A name
    that several distributions register is listed as unavailable too, with each of them as a
    candidate, and reported (AdapterWarning): neither may silently stand in for the other, nor
    take the status shipped for the other."""
    candidates: dict[str, list[AdapterInfo]] = {}
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(entry, "dist", None)
        requires, missing = _requirements(dist) if dist is not None else ({}, [])
        reason = (f"{', '.join(missing)} not installed; install it with "
                  f"`pip install {' '.join(missing)}`") if missing else ""
        candidates.setdefault(entry.name, []).append(AdapterInfo(
            entry.name, entry.value, dist.name if dist else "", available=not missing,
            reason=reason, version=dist.version if dist else "", requires=requires))
    return {name: infos[0] if len(infos) == 1 else _contested(name, infos)
            for name, infos in candidates.items()}


def _contested(name: str, infos: list[AdapterInfo]) -> AdapterInfo:
    listed = " and ".join(f"{i.distribution or 'an unknown distribution'} {i.version} "
                          f"(entry point {i.target})" for i in infos)
    reason = (f"{len(infos)} installed distributions register an adapter named {name!r}: "
              f"{listed}. rulebridge uses neither, so that one cannot stand in for the other "
              f"or take its verified status: uninstall the one you do not want "
              f"(pip uninstall <distribution>)")
    warnings.warn(f"rulebridge: {reason}", AdapterWarning, stacklevel=3)
    return AdapterInfo(name, " | ".join(i.target for i in infos),
                       " | ".join(i.distribution for i in infos), available=False,
                       reason=reason, candidates=tuple(infos))


def _requirements(dist: metadata.Distribution) -> tuple[dict[str, str], list[str]]:
    """The installed versions of what `dist` requires (extras and markers aside), and the names
    of those not installed."""
    installed, missing = {}, []
    for name in _required(dist):
        try:
            installed[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return installed, missing


def requirement_names(distribution: str) -> list[str]:
    """The distributions `distribution` requires (not its optional ones): for an adapter, the
    source libraries its rules come from."""
    try:
        return _required(metadata.distribution(distribution))
    except metadata.PackageNotFoundError:
        return []


def _required(dist: metadata.Distribution) -> list[str]:
    names = []
    for requirement in dist.requires or ():
        if ";" in requirement:  # extras and environment markers: optional
            continue
        names.append(re.split(r"[\s<>=!~\[(]", requirement.strip(), maxsplit=1)[0])
    return names

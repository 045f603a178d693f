"""The adapter base class and entry-point discovery."""

from __future__ import annotations

import re
from importlib import metadata
from typing import Callable, Iterable

from .errors import AdapterError
from .rule import Rule
from .signature import Signature

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


class AdapterInfo(str):
    """One discovered adapter, listed without importing it. It is its name (a `str`), and it
    also says whether it can be loaded and, if not, why."""

    target: str  # "module:attribute" of the entry point, or "" for one registered in-process
    distribution: str
    available: bool
    reason: str

    def __new__(cls, name: str, target: str, distribution: str, available: bool = True,
                reason: str = "") -> "AdapterInfo":
        info = super().__new__(cls, name)
        info.target, info.distribution = target, distribution
        info.available, info.reason = available, reason
        return info

    @property
    def name(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        state = "available" if self.available else f"unavailable: {self.reason}"
        return f"<adapter {self.name!r} ({state})>"

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
    distribution requires a package that is not installed is listed as unavailable."""
    found = {}
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(entry, "dist", None)
        missing = _missing_requirements(dist) if dist is not None else []
        reason = (f"{', '.join(missing)} not installed; install it with "
                  f"`pip install {' '.join(missing)}`") if missing else ""
        found.setdefault(entry.name, AdapterInfo(entry.name, entry.value, dist.name if dist else "",
                                                 available=not missing, reason=reason))
    return found


def _missing_requirements(dist: metadata.Distribution) -> list[str]:
    missing = []
    for requirement in dist.requires or ():
        if ";" in requirement:  # extras and environment markers: optional
            continue
        name = re.split(r"[\s<>=!~\[(]", requirement.strip(), maxsplit=1)[0]
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing

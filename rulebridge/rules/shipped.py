"""The check results shipped with the package, bound to the distribution that produced them.

An adapter's results apply only to the installed adapter of that name whose entry point comes
from the distribution, at the version, with the versions of what it requires, that the results
record (`AdapterInfo.made`): never to one registered in-process under the same name, nor to a
name two distributions register, nor after an upgrade.
"""

from __future__ import annotations

from typing import Callable

from .adapter import AdapterInfo


class Shipped:
    """Shipped results by adapter name, and which of them apply to the adapters installed now."""

    def __init__(self) -> None:
        self._entries: dict[str, dict] = {}  # adapter name -> its shipped results
        self._bound: dict[str, bool] = {}  # adapter name -> do its results apply to it
        self._imports: set[tuple[str, str]] = set()  # (function, source): see `adopt_import`

    def set(self, entries: dict[str, dict]) -> None:
        """Each entry: `{"distribution", "version", "requires", "status": {function:
        {signature: status}}}`."""
        self._entries = dict(entries)
        self._bound.clear()

    def adapters_changed(self) -> None:
        self._bound.clear()

    def status(self, function: str, source: str, signature: str,
               infos: Callable[[], dict[str, AdapterInfo]]) -> str | None:
        """The shipped status of `source`'s rule for `function` at `signature`, if it applies
        to the adapter `infos()` lists under that name."""
        entry = self._entries.get(source)
        if entry is None:
            return None
        bound = self._bound.get(source)
        if bound is None:
            info = infos().get(source)
            bound = self._bound[source] = info is not None and info.made(
                entry.get("distribution", ""), entry.get("version", ""), entry.get("requires", {}))
        return entry["status"].get(function, {}).get(signature) if bound else None

    def adopt_import(self, function: str, source: str) -> None:
        """The rules `import_rule` builds for `function` from `source` are the ones the results
        were made with (the SciPy drop-ins import exactly what the matrix checked)."""
        self._imports.add((function, source))

    def forget_import(self, function: str, source: str) -> None:
        self._imports.discard((function, source))

    def applies_to_import(self, function: str, source: str) -> bool:
        return (function, source) in self._imports

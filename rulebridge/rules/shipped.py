"""The check results shipped with the package, bound to the distribution that produced them.

An adapter's results apply only to the installed adapter of that name whose entry point comes
from the distribution, at the version, with the versions of what it requires, that the results
record (`AdapterInfo.made`): never to one registered in-process under the same name, nor to a
name two distributions register, nor after an upgrade.
"""

from __future__ import annotations

from typing import Callable


class ShippedStatus:
    """The registry's part that holds the shipped results and binds them to the installed
    adapters, and runs the loaders that give them (a mixin of `Registry`, which provides
    `infos`, `_lock`, `_caches`, `_status_loaders` and `_invalidate`)."""

    def _init_shipped(self) -> None:
        self._shipped: dict[str, dict] = {}  # adapter name -> its shipped results
        self._bound: dict[str, bool] = {}  # adapter name -> do its results apply to it
        self._shipped_imports: set[tuple[str, str]] = set()  # see `use_shipped_for_import`

    def add_status_loader(self, loader: Callable[[object], object]) -> None:
        """Run `loader(registry)` (which calls `set_status`) before the next rule is resolved."""
        with self._lock:
            self._status_loaders.append(loader)
            self._invalidate()

    def _load_status(self) -> None:
        with self._lock:
            loaders, self._status_loaders = self._status_loaders, []
            for loader in loaders:
                loader(self)

    def set_shipped(self, shipped: dict[str, dict]) -> None:
        """The results shipped with the package, by adapter name: each `{"distribution",
        "version", "requires", "status": {function: {key: status}}}`."""
        with self._lock:
            self._shipped, self._bound = dict(shipped), {}
            self._invalidate()

    def shipped_status(self, function: str, source: str, key: str,
                       imported: bool = False) -> str | None:
        """The shipped status of `source`'s rule for `function` at `key`, if it applies to the
        installed adapter named `source` (for a rule `import_rule` built: only if adopted)."""
        if self._status_loaders:
            self._load_status()
        entry = self._shipped.get(source)
        if entry is None or (imported and (function, source) not in self._shipped_imports):
            return None
        bound = self._bound.get(source)
        if bound is None:
            info = self.infos().get(source)
            bound = self._bound[source] = info is not None and info.made(
                entry.get("distribution", ""), entry.get("version", ""), entry.get("requires", {}))
        return entry["status"].get(function, {}).get(key) if bound else None

    def shipped_keys(self, function: str, source: str, imported: bool = False) -> dict[str, str]:
        """{key: status} of every key the shipped results hold for `source`'s rule for
        `function`, where they apply to the installed adapter (see `shipped_status`)."""
        self.shipped_status(function, source, "", imported)  # loads and binds them
        if not self._bound.get(source) or (imported and (function, source)
                                           not in self._shipped_imports):
            return {}
        return dict(self._shipped[source]["status"].get(function, {}))

    def use_shipped_for_import(self, function: str, source: str) -> None:
        """Let the shipped results apply to the rules `import_rule` builds for `function` from
        `source` (the SciPy drop-ins import what the matrix checked); a later `import_rule` of
        the same function and source undoes it."""
        with self._lock:
            self._shipped_imports.add((function, source))
            self._invalidate()

    def _adapters_changed(self) -> None:
        # Bind the shipped results again, and make a named source's cache anew, so that its next
        # use meets the adapter now installed under that name (or the error saying why none is).
        self._bound = {}
        self._caches = {k: v for k, v in self._caches.items() if k is None}
        self._invalidate()

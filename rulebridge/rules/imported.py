"""The rules `import_rule` gives functions: the part of the `Registry` that adds and removes them
(rules/registry.py mixes it in; it reads the registry's own tables)."""

from __future__ import annotations

from typing import Callable

from .rule import Rule, function_name
from .signature import Signature


class ImportedRules:
    """`Registry`'s imports: `builder(signature)` builds `function`'s rule from a source."""

    def add_import(self, function: Callable, source: str,
                   builder: Callable[[Signature], Rule], trusted: bool = False) -> None:
        """Build `function`'s rules from `source` with `builder(signature)` (`import_rule`)
        instead of that adapter's `build_rule`; `trusted`: used unchecked, as the user chose
        (`import_rule(..., check=False)`)."""
        name = function_name(function)
        with self._lock:
            self._imports.setdefault(function, {})[source] = builder
            (self._trusted.add if trusted else self._trusted.discard)((function, source))
            self._shipped_imports.discard((name, source))
            # a new rule: what was checked or timed of an earlier one says nothing about it
            for key in [k for k in self._status if k[:2] == (function, source)]:
                del self._status[key]
            for key, verdicts in self._checked.items():
                if key[0] is function:
                    verdicts.pop(source, None)
            for (timed, _), seconds in self._seconds.items():
                if timed == name:
                    seconds.pop(source, None)
            self._invalidate()

    def only(self, function: Callable, sources: tuple[str, ...]) -> None:
        """`source=None` asks only `sources` for `function` (rules/pinned.py); `source=` any."""
        with self._lock:
            self._only[function] = sources
            self._invalidate()

    def imported_sources(self, function: Callable) -> tuple[str, ...]:
        """The sources `import_rule` gave `function` a rule from, in preference order."""
        builders = self._imports.get(function, {})
        return tuple(str(n) for n in self.order(function) if n in builders)

    def remove_import(self, function: Callable, source: str | None = None) -> None:
        with self._lock:
            builders = self._imports.get(function, {})
            for name in ([source] if source is not None else list(builders)):
                builders.pop(name, None)
                self._trusted.discard((function, name))
            if not builders:
                self._imports.pop(function, None)
            self._invalidate()

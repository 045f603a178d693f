"""A function pinned to the sources it was imported from: what the wrapper that
`import_rule(function, source)` returned records, so that a later import of the same function
from another source (which `source=None` may rank first) leaves that wrapper's calls with the
sources it named (`Registry.only`); an explicit `source=` still reaches every source.

The pinned function is `function` under its own name, with a builder per source `function` is
imported from, each building with `function`'s current builder of that source: a later import
of the same function from the same source (a new equivalent) is what the pinned wrapper uses
too, so two rules never share a verdict key.
Containers go through the pinned function's LeafCalls alike (`derive`)."""

from __future__ import annotations

import dataclasses
import functools
import threading
from typing import Callable

from ..errors import Declined
from .registry import REGISTRY, Registry
from .rule import function_name

_PINNED: dict[tuple[Callable, tuple[str, ...]], Callable] = {}
_LOCK = threading.Lock()


@dataclasses.dataclass(frozen=True, eq=False)
class CurrentBuilder:
    """`function`'s builder from `source` as it is registered when a rule is built."""

    function: Callable
    source: str
    registry: Registry

    def builder(self) -> Callable:
        builder = self.registry._imports.get(self.function, {}).get(self.source)
        if builder is None:
            raise Declined(f"{function_name(self.function)} is no longer imported from "
                           f"{self.source}")
        return builder

    def __call__(self, signature):
        return self.builder()(signature)

    def derive(self, call):
        return self.builder().derive(call)


def pinned(function: Callable, sources: tuple[str, ...], registry: Registry = REGISTRY) -> Callable:
    """`function` resolved among `sources` (source=None), made once per (function, sources)."""
    with _LOCK:
        pin = _PINNED.get((function, sources))
        if pin is None:
            pin = _PINNED[function, sources] = functools.wraps(function)(
                lambda *args, **kwargs: function(*args, **kwargs))
    registry.only(pin, sources)
    refresh(function, registry)
    return pin


def refresh(function: Callable, registry: Registry = REGISTRY) -> None:
    """After an import of `function`: each function pinned to it builds with the new builders
    (a new builder object, so that LeafCalls derive theirs again) and is trusted as it is."""
    with _LOCK:
        pins = [(sources, pin) for (f, sources), pin in _PINNED.items() if f is function]
    imported = list(registry._imports.get(function, {}))
    for _, pin in pins:
        for source in imported:
            registry.add_import(pin, source, CurrentBuilder(function, source, registry),
                                trusted=(function, source) in registry._trusted)

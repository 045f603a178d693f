"""Test adapters registered in this process and preferred for one function, for one block."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import rulebridge as rb


@contextlib.contextmanager
def preferred(function: Callable, *adapters: rb.Adapter) -> Iterator[str]:
    """Register `adapters`, prefer them for `function` in that order; afterwards the process is
    as it was. Yields the first one's name."""
    for adapter in adapters:
        rb.register_adapter(adapter)
    rb.prefer(function, *(adapter.name for adapter in adapters))
    try:
        yield adapters[0].name
    finally:
        for adapter in adapters:
            rb.REGISTRY.unregister(adapter.name)
        rb.REGISTRY._per_function.pop(function, None)

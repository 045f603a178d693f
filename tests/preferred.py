"""A test adapter registered in this process and preferred for one function, for one block."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import rulebridge as rb


@contextlib.contextmanager
def preferred(adapter: rb.Adapter, function: Callable) -> Iterator[str]:
    """Register `adapter`, prefer it for `function`; afterwards the process is as it was."""
    rb.register_adapter(adapter)
    rb.prefer(function, adapter.name)
    try:
        yield adapter.name
    finally:
        rb.REGISTRY.unregister(adapter.name)
        rb.REGISTRY._per_function.pop(function, None)

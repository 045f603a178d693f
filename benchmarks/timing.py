"""Shared timing helpers for the benchmarks: medians of repeated runs on a shared, noisy machine."""

from __future__ import annotations

import gc
import json
import statistics
import time
from typing import Callable

import rulebridge as rb


def median_seconds(run: Callable[[], object], repeats: int = 7, min_seconds: float = 0.02) -> float:
    """Median wall time of one `run()`. Each sample repeats `run` enough times to last at least
    `min_seconds`, so sub-microsecond calls are not lost in the timer's resolution. The garbage
    collector stays on (users pay for it too) but is emptied between samples."""
    run()  # warm up: rule lookup, caches, first-call imports
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            run()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            break
        loops *= 2 if elapsed == 0 else max(2, min(10, int(min_seconds / elapsed) + 1))
    samples = [elapsed / loops]
    for _ in range(repeats - 1):
        gc.collect()
        start = time.perf_counter()
        for _ in range(loops):
            run()
        samples.append((time.perf_counter() - start) / loops)
    return statistics.median(samples)


def rulebridge_sources() -> list[str]:
    """The installed adapters that load, each benchmarked as its own rulebridge column."""
    names = []
    for info in rb.adapters():
        if not info.available:
            continue
        try:
            rb.REGISTRY.adapter(info.name)
        except rb.AdapterError:
            continue
        names.append(info.name)
    return names


def jax_available() -> bool:
    try:
        import jax  # noqa: F401
    except ImportError:
        return False
    return True


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (readable in a terminal, pasteable into the README)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(path: str, figures: dict) -> None:
    with open(path, "w") as fh:
        json.dump(figures, fh, indent=2)
    print(f"wrote {path}")

"""Shared timing helpers for the benchmarks: medians of repeated runs on a shared, noisy machine."""

from __future__ import annotations

import gc
import json
import statistics
import time
from typing import Callable

import rulebridge as rb


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
_clock = time.process_time


def use_clock(name: str) -> None:
    """"cpu" (the default): CPU seconds of this process, which other jobs on a shared machine
    barely disturb; "wall": elapsed time, right on a quiet machine. (CPU time adds up every
    thread of the process: BLAS and XLA threads count as work, not as latency.)"""
    global _clock
    _clock = CLOCKS[name]


def now() -> float:
    return _clock()


def clock_name() -> str:
    return "process_time" if _clock is time.process_time else "perf_counter"


def add_clock_option(parser) -> None:
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="cpu: process CPU time (default; robust on a shared machine); "
                             "wall: elapsed time")


def median_seconds(run: Callable[[], object], repeats: int = 7, min_seconds: float = 0.02) -> float:
    """Median time of one `run()` on the chosen clock. Each sample repeats `run` enough times to
    last at least `min_seconds`, so sub-microsecond calls are not lost in the timer's resolution.
    The garbage collector stays on (users pay for it too) but is emptied between samples."""
    return interleaved_medians({"run": run}, repeats, min_seconds)["run"]


def interleaved_medians(runs: dict[str, Callable[[], object]], repeats: int = 7,
                        min_seconds: float = 0.02) -> dict[str, float]:
    """Median time of one call of each contestant, sampled round-robin (A, B, C, A, B, C, ...)
    after calibrating each one's loop count alone: a noisy phase of a shared machine then slows
    every contestant alike instead of whichever happened to be running, so ratios between them
    are steadier than ratios of medians taken one contestant after another."""
    alone = len(runs) == 1  # then the last calibration pass is already a sample (saves a run)
    loops = {}
    samples: dict[str, list[float]] = {}
    for name, run in runs.items():
        loops[name], calibration = _calibrate(run, min_seconds)
        samples[name] = [calibration] if alone else []
    for _ in range(repeats - alone):
        for name, run in runs.items():
            samples[name].append(_sample(run, loops[name]))
    return {name: statistics.median(values) for name, values in samples.items()}


def _calibrate(run: Callable[[], object], min_seconds: float) -> tuple[int, float]:
    """(loops, seconds per call): enough loops of `run` to last `min_seconds`, after a warm-up
    call (rule lookup, caches, first-call imports), and the time of the last pass."""
    run()
    loops = 1
    while True:
        start = _clock()
        for _ in range(loops):
            run()
        elapsed = _clock() - start
        if elapsed >= min_seconds:
            return loops, elapsed / loops
        loops *= 2 if elapsed == 0 else max(2, min(10, int(min_seconds / elapsed) + 1))


def _sample(run: Callable[[], object], loops: int) -> float:
    gc.collect()
    start = _clock()
    for _ in range(loops):
        run()
    return (_clock() - start) / loops


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

"""Python's cyclic garbage collector, paused while a tape records and sweeps.

Every op and box a tape records is a container that stays alive until the sweep ends, so a
collection during a trace examines them all and frees none of them. CPython starts such
collections as the tape grows: at 1e5 ops they cost about 8% of the instructions of each op
(valgrind, the sin/tanh chain of benchmarks/overhead.py), and more in time, because each full
collection walks the whole tape through the cache. Reference counting still frees everything
that is not in a cycle while the collector is paused; cycles the differentiated code makes are
collected once no trace is running.

The collector is one per process, so the pause is too: it begins when the first trace of any
thread begins and ends when the last one ends, and a collector the user disabled stays so.
"""

from __future__ import annotations

import gc
import threading


class CollectorPause:
    """A re-entrant, thread-safe `with` block during which automatic collection is off."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._paused_it = False

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                self._paused_it = gc.isenabled()
                if self._paused_it:
                    gc.disable()
            self._depth += 1

    def __exit__(self, *exc_info) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._paused_it:
                self._paused_it = False
                gc.enable()


collector_paused = CollectorPause()

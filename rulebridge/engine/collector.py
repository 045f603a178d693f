"""Python's cyclic garbage collector while a tape records and sweeps: no full collections, and
fewer young ones.

Every op and box a tape records is a container that stays alive until the sweep ends, so a
collection of the oldest generation during a trace examines the whole tape (and everything else
the process holds) and frees none of it; CPython starts such collections as the tape grows.
While any trace runs, the oldest generation's threshold is raised out of reach and the
youngest's to `YOUNG` (`gc.set_threshold`); the young generations are still collected, in every
thread, so cyclic garbage made by the differentiated code or by other threads is freed within
about `YOUNG` allocations. A full collection the trace put off happens at the first young collection
after it, as CPython's own rule for the oldest generation then allows.

Measured with valgrind (the sin/tanh chain of 20,000 ops, three gradients, autograd's rules),
instructions per op beyond the collector disabled for the trace (what this module did before):
the collector left as it is +2,490 (8%); the oldest generation out of reach +1,910; that and
the youngest generation's threshold also raised to 10,000 +1,260; at 50,000 +860. The young
collections' cost is the tape's objects each examines once, which no threshold removes; 10,000
keeps half of what disabling bought while bounding how long other threads' garbage waits. The collector's on/off state is never touched: `gc.disable()` and `gc.enable()`
called by the user, inside the differentiated function or in another thread, stay as the user
left them, and so do thresholds the user sets while a trace runs (automatic collection turned
off by a threshold of 0 stays off).

The thresholds are one per process, so the raise is too: it begins when the first trace of any
thread begins and ends when the last one ends.
"""

from __future__ import annotations

import gc
import threading

# The oldest generation's threshold while a trace runs: a count of young-generation collections
# that a process does not reach.
OUT_OF_REACH = 1 << 30
# The youngest generation's threshold while a trace runs (CPython's default is 700): each young
# collection has a cost of its own besides the objects it examines, and a trace allocates
# several containers per op. Other threads' cyclic garbage then waits for at most this many
# allocations.
YOUNG = 10_000


class CollectorPause:
    """A re-entrant, thread-safe `with` block during which the oldest generation is not
    collected (the young ones are)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: tuple | None = None  # the thresholds before, when this block raised them
        self._raised: tuple | None = None  # the thresholds it set

    def __enter__(self) -> None:
        with self._lock:
            if self._depth == 0:
                thresholds = gc.get_threshold()
                # threshold 0 is the user's way of turning automatic collection off: leave it so
                if thresholds[0] > 0 and len(thresholds) == 3:
                    self._saved = thresholds
                    self._raised = (max(thresholds[0], YOUNG), thresholds[1], OUT_OF_REACH)
                    gc.set_threshold(*self._raised)
            self._depth += 1

    def __exit__(self, *exc_info) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._saved is not None:
                if gc.get_threshold() == self._raised:  # else the user set their own: keep it
                    gc.set_threshold(*self._saved)
                self._saved = self._raised = None


collector_paused = CollectorPause()

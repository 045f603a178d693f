"""Progress of a long run: a bar with an estimate in a terminal (tqdm, when installed), a plain
line every few seconds otherwise (a CI log, a pipe), so a run is never silent until it ends."""

from __future__ import annotations

import sys
import time
from typing import TextIO

try:
    from tqdm import tqdm
except ImportError:  # the optional extra `rulebridge[matrix]`; plain lines do without it
    tqdm = None


class Progress:
    """`progress(done, total)` after each unit of work; `close()` at the end.

    Parameters
    ----------
    label : str
        What is running (``"rulebridge matrix"``), at the head of each plain line.
    what : str
        The unit, plural (``"functions"``).
    stream : TextIO, optional
        Where to write (default: standard error).
    every : float
        Seconds between plain lines when `stream` is not a terminal.
    bar : bool, optional
        Force the bar on or off (default: a bar exactly when `stream` is a terminal and tqdm is
        installed).
    """

    def __init__(self, label: str, what: str, stream: TextIO | None = None, every: float = 5.0,
                 bar: bool | None = None) -> None:
        self.label, self.what, self.every = label, what, every
        self.stream = stream or sys.stderr
        if bar is None:
            bar = tqdm is not None and _is_terminal(self.stream)
        self.bar = None
        self._use_bar = bar and tqdm is not None
        self._start = time.perf_counter()
        self._last_line = -float("inf")

    def __call__(self, done: int, total: int, work: tuple[float, float] | None = None) -> None:
        """`work`: (done, total) in the units an earlier run measured (CPU seconds per row), for
        an estimate that weighs each unit by its expected cost."""
        if self._use_bar:
            if self.bar is None:
                self.bar = tqdm(total=total, unit=self.what.rstrip("s"), file=self.stream,
                                dynamic_ncols=True, smoothing=0.1)
            self.bar.update(done - self.bar.n)
            return
        now = time.perf_counter()
        if done in (0, total) or now - self._last_line >= self.every:
            self._last_line = now
            self.stream.write(self.line(done, total, now - self._start, work) + "\n")
            self.stream.flush()

    def line(self, done: int, total: int, elapsed: float,
             work: tuple[float, float] | None = None) -> str:
        """`rulebridge matrix: 120/321 functions, 31 s elapsed, about 52 s left`.

        With `work`, the estimate is the time the work left takes at the rate the work done
        took, on this machine under its load now (the slowest units run first, so a count of
        units alone would promise too little time); without, a count's rough guess, said so."""
        text = f"{self.label}: {done}/{total} {self.what}, {elapsed:.0f} s elapsed"
        if not 0 < done < total:
            return text
        if work is not None and work[0] > 0:
            return text + f", about {elapsed * max(work[1] - work[0], 0.0) / work[0]:.0f} s left"
        return text + (f", about {elapsed * (total - done) / done:.0f} s left (a guess from the "
                       "count: no timings of an earlier run)")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False

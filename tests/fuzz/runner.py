"""Run many fuzzed programs deterministically and tally their outcomes."""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings

import rulebridge as rb

from .check import run
from .generate import programs


@dataclass
class Tally:
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    ops: collections.Counter = field(default_factory=collections.Counter)
    dtypes: collections.Counter = field(default_factory=collections.Counter)
    seconds: float = 0.0

    @property
    def programs(self) -> int:
        return sum(self.outcomes.values())

    def __str__(self) -> str:
        """The tally as the README's reliability table reads it (`pytest -m slow -rP`)."""
        return (f"{self.programs} programs ({dict(self.dtypes)}), outcomes "
                f"{dict(self.outcomes.most_common())}, {len(self.ops)} catalog entries drawn, "
                f"{self.seconds:.0f} s")

    def assert_passes(self, share: float) -> None:
        """At least `share` of the programs the source has rules for pass. One source alone
        lacks rules for some ops (autograd has no nansum), and its refusals there are right;
        those programs must stay a minority, or the run would check little."""
        covered = self.programs - self.outcomes["error:NoRuleError"]
        assert covered >= 0.5 * self.programs, self.outcomes
        assert self.outcomes["pass"] >= share * covered, self.outcomes


def fuzz(n: int, source: str | None = None, checked: bool = False, mode=None) -> Tally:
    """`n` programs, the same ones on every run (derandomized); a wrong gradient raises.
    `checked`: in debug mode, every rule boundary checked in full (rulebridge.debug); `mode`:
    the check of one program (check.py's gradient check by default; jit.py's replays)."""
    tally = Tally()

    @settings(max_examples=n, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def one(program):
        outcome = run(program, source, mode=mode)
        tally.outcomes[outcome] += 1
        tally.ops.update(program.ops)
        tally.dtypes[program.dtype.__name__] += 1

    start = time.perf_counter()
    with rb.debug(checked):
        one()
    tally.seconds = time.perf_counter() - start
    return tally

"""Random NumPy programs: every rulebridge gradient equals float64 finite differences, or
rulebridge refuses with one of its own errors. Never a silently wrong number."""

import pytest

from .catalog import STEPS
from .runner import fuzz

DEFAULT_PROGRAMS = 40
SLOW_PROGRAMS = 2000


def test_random_programs_match_finite_differences():
    tally = fuzz(DEFAULT_PROGRAMS)
    assert tally.outcomes["pass"] >= 0.8 * tally.programs, tally.outcomes


@pytest.mark.slow
def test_two_thousand_random_programs():
    tally = fuzz(SLOW_PROGRAMS)
    assert tally.programs >= SLOW_PROGRAMS
    assert tally.outcomes["pass"] >= 0.9 * tally.programs, tally.outcomes
    unused = set(STEPS) - set(tally.ops)
    assert not unused, f"catalog entries never drawn: {sorted(unused)}"

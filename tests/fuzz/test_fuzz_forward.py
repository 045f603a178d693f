"""Random NumPy programs in forward mode: every rulebridge.jvp equals float64 central
differences of the program along its tangents, or rulebridge refuses with one of its own
errors. Never a silently wrong number."""

import pytest

from .forward import fuzz_forward

DEFAULT_PROGRAMS = 30
SLOW_PROGRAMS = 600


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_random_programs_in_forward_mode_match_finite_differences(source):
    tally = fuzz_forward(DEFAULT_PROGRAMS, source)
    # One source alone lacks rules for some ops (autograd has no nansum, no sum with where=):
    # its refusals there are right. The floor is over the programs it has rules for, and those
    # must be a good share, or the test would check little.
    covered = tally.programs - tally.outcomes["error:NoRuleError"]
    assert covered >= 0.5 * tally.programs, tally.outcomes
    assert tally.outcomes["pass"] >= 0.7 * covered, tally.outcomes


@pytest.mark.slow
def test_six_hundred_random_programs_in_forward_mode():
    tally = fuzz_forward(SLOW_PROGRAMS)
    assert tally.outcomes["pass"] >= 0.8 * tally.programs, tally.outcomes

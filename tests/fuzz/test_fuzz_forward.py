"""Random NumPy programs in forward mode: every rulebridge.jvp equals float64 central
differences of the program along its tangents, or rulebridge refuses with one of its own
errors. Never a silently wrong number."""

import pytest

from .forward import fuzz_forward

DEFAULT_PROGRAMS = 30
SLOW_PROGRAMS = 600


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_random_programs_in_forward_mode_match_finite_differences(source):
    fuzz_forward(DEFAULT_PROGRAMS, source).assert_passes(0.7)


@pytest.mark.slow
def test_six_hundred_random_programs_in_forward_mode():
    tally = fuzz_forward(SLOW_PROGRAMS)
    print(tally)
    assert tally.outcomes["pass"] >= 0.8 * tally.programs, tally.outcomes

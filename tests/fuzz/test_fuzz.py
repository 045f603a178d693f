"""Random NumPy programs: every rulebridge gradient equals float64 finite differences, or
rulebridge refuses with one of its own errors. Never a silently wrong number."""

import pytest

from .catalog import STEPS
from .runner import fuzz

DEFAULT_PROGRAMS = 40
SLOW_PROGRAMS = 2000
DEBUG_PROGRAMS = (10, 400)  # default run, slow run


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


def test_random_programs_keep_every_rule_contract_in_debug_mode():
    tally = fuzz(DEBUG_PROGRAMS[0], checked=True)
    assert not any(o.startswith("error:RuleContract") for o in tally.outcomes), tally.outcomes


@pytest.mark.slow
def test_four_hundred_random_programs_keep_every_rule_contract_in_debug_mode():
    tally = fuzz(DEBUG_PROGRAMS[1], checked=True)
    assert not any(o.startswith("error:RuleContract") for o in tally.outcomes), tally.outcomes

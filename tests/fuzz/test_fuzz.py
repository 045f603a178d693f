"""Random NumPy programs: every rulebridge gradient equals float64 finite differences, or
rulebridge refuses with one of its own errors. Never a silently wrong number."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from .catalog import STEPS
from .generate import Builder
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
    print(tally)
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
    print(tally)
    assert not any(o.startswith("error:RuleContract") for o in tally.outcomes), tally.outcomes


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (1, 1), (2, 0, 2), (1, 0)], ids=str)
def test_every_statement_draws_on_values_with_zero_length_axes(shape):
    """Each catalog entry, applied to a value with a zero-length axis (or whose slices have
    none), emits a statement NumPy runs or declines: the generator itself never raises, and
    every kind of write into a value's elements is drawn on such values."""
    emitted = set()

    @settings(max_examples=8, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def each_statement(data):
        for name in sorted(STEPS):
            builder = Builder(data.draw, np.float64)
            x = np.arange(float(np.prod(shape))).reshape(shape) + 0.5
            builder.inputs["x0"] = builder.env["x0"] = x
            builder.vars.append("x0")
            if STEPS[name](builder):
                emitted.add(name)

    each_statement()
    missing = WRITES_INTO_A_VALUE - emitted
    assert not missing, missing


# The writes into a value's own elements (the others need a first axis of 2 to 4 elements).
WRITES_INTO_A_VALUE = {"write.setitem", "write.augmented", "write.out_argument",
                       "write.view_write", "write.buffer"}

"""Random NumPy programs differentiated twice: every Hessian-vector product (jvp of grad, or grad
of <grad, u>) equals central differences of the gradient, itself checked against NumPy's
function, or rulebridge refuses with one of its own errors. Never a silently wrong number."""

import pytest

from .second import fuzz_second

DEFAULT_PROGRAMS = 25
SLOW_PROGRAMS = 500


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_random_programs_second_derivatives_match_differences_of_the_gradient(source):
    fuzz_second(DEFAULT_PROGRAMS, source).assert_passes(0.6)


@pytest.mark.slow
def test_five_hundred_random_programs_differentiated_twice():
    tally = fuzz_second(SLOW_PROGRAMS)
    print(tally)
    assert tally.outcomes["pass"] >= 0.6 * tally.programs, tally.outcomes

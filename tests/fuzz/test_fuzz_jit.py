"""Random NumPy programs through rulebridge.jit: every replay on new inputs is the eager
value_and_grad's result (to the bit with the NumPy back end, within a few hundred ulps with the
JAX back end, whose kernels are XLA's), or both refuse alike, or jit refuses the program. Never
a stale or different number."""

import pytest

from .jit import fuzz_jit

DEFAULT_PROGRAMS = 40
SLOW_PROGRAMS = 1000


@pytest.mark.parametrize("source", [None, "autograd"])
def test_random_programs_replay_as_their_eager_call(source):
    tally = fuzz_jit(DEFAULT_PROGRAMS, source)
    assert tally.outcomes["pass"] >= 0.5 * tally.programs, tally.outcomes


def test_random_programs_staged_into_jax_replay_as_their_eager_call():
    tally = fuzz_jit(30, backend="jax")
    assert tally.outcomes["pass"] >= 0.5 * tally.programs, tally.outcomes


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_thousand_random_programs_replay_as_their_eager_call(backend):
    tally = fuzz_jit(SLOW_PROGRAMS, backend=backend)
    print(tally)
    assert tally.outcomes["pass"] >= 0.5 * tally.programs, tally.outcomes

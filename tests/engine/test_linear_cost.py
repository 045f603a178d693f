"""Linear cost, checked in ways that cannot flake on a loaded machine.

The default run counts Python-level calls (deterministic: a quadratic pass shows up as a call
count that quadruples when the tape doubles). The wall-clock version (best of several, generous
bound) is marked slow; the real figures are in benchmarks/linear.py.
"""

import sys
import time

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.engine.sweep import backward

from benchmarks.linear import X, chain, replace_all


def count_calls(run):
    calls = 0

    def profile(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


def test_gradient_call_count_is_linear_in_tape_length():
    g1, g2 = rb.grad(chain(1_000)), rb.grad(chain(2_000))
    g1(X), g2(X)  # rule lookups happen once; count the steady state
    small, large = count_calls(lambda: g1(X)), count_calls(lambda: g2(X))
    assert large <= 2 * small + 100, (small, large)


def test_replacing_an_op_touches_only_its_slot():
    _, tape = rb.trace(chain(10), X)
    before = list(tape.entries)
    old = tape.ops[4]
    new = rb.Op(old.rule, old.args, {}, old.inputs, (old.outputs[0], tape.new_var()), tuple,
                old.residuals)
    tape.replace(4, new)
    assert tape.ops[4] is new and tape.entries[4] is new
    assert all(a is b for i, (a, b) in enumerate(zip(before, tape.entries)) if i != 4)
    assert [op.outputs for op in tape.ops[5:]] == [rb.Op(*op).outputs for op in before[5:]]


def test_replacing_every_op_by_a_two_output_op_keeps_gradient_and_replay():
    f = chain(200)
    _, tape = rb.trace(f, X)
    replace_all(tape)
    assert all(len(op.outputs) == 2 for op in tape.ops)
    cts = backward(tape, {tape.outputs: np.float64(1.0)})
    np.testing.assert_allclose(cts[tape.inputs[0]], rb.grad(f)(X), rtol=1e-12)
    np.testing.assert_allclose(tape.replay(X), f(X), rtol=1e-12)


def test_replacement_and_sweep_call_counts_are_linear():
    def replace_and_sweep(n):
        _, tape = rb.trace(chain(n), X)
        return lambda: (replace_all(tape), backward(tape, {tape.outputs: np.float64(1.0)}))

    small = count_calls(replace_and_sweep(1_000))
    large = count_calls(replace_and_sweep(2_000))
    assert large <= 2 * small + 100, (small, large)


@pytest.mark.slow
def test_gradient_wall_time_is_linear():
    def best_of(g, repeats=5):
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            g(X)
            times.append(time.perf_counter() - start)
        return min(times)

    g1, g4 = rb.grad(chain(5_000)), rb.grad(chain(20_000))
    g1(X), g4(X)
    # Linear: 4x. Quadratic would be 16x; 8x leaves room for a loaded machine.
    assert best_of(g4) <= 8 * best_of(g1)

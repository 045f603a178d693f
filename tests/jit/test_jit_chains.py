"""Runs of `y = f(x)` ops in a replay's sweep, passed in one local (rulebridge/jit/program.py's
`_chained`): every shape of run against the eager call, to the bit, on new inputs."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import rulebridge as rb
from tests.jit.test_jit import assert_same


def into_two(x):  # two runs ending in the same variable: the second adds into the first
    return np.sum(np.sin(np.tanh(np.exp(x)))) + np.sum(np.cos(np.sin(x)))


def read_twice(x):  # an intermediate two ops read: a run stops there
    y = np.tanh(np.sin(x))
    return np.sum(np.exp(y) * np.cos(y))


def through_arguments(x, w):  # runs that end at each input
    return np.sum(np.sin(np.tanh(x)) * np.cos(np.exp(w)))


def vector(x):  # a jacobian: the sweep runs once per output entry
    return np.tanh(np.sin(np.exp(x)))


@pytest.mark.parametrize("source", [None, "autograd"])
@pytest.mark.parametrize("transform, f, n", [
    (rb.grad, into_two, 1), (rb.grad, read_twice, 1),
    (lambda f, **k: rb.value_and_grad(f, (0, 1), **k), through_arguments, 2),
    (rb.jacobian, vector, 1), (rb.hessian, read_twice, 1)])
def test_runs_of_one_input_ops_replay_as_the_eager_sweep(source, transform, f, n):
    rng = np.random.default_rng(3)
    jitted = rb.jit(transform(f, source=source))
    eager = transform(f, source=source)
    for _ in range(4):
        args = [rng.normal(size=5) for _ in range(n)]
        assert_same(jitted(*args), eager(*args))
    assert jitted.replays >= 2 and jitted.eager_calls == 0
    if transform is rb.grad and f is into_two:
        assert "g = None" in str(jitted.programs[0])  # the runs were taken


def test_a_long_chain_replays_without_setting_off_the_cyclic_collector():
    # The forward's values reach the sweep in one tuple, not a closure cell each: 1,000 cells
    # a call set off the young generation's collection about once per replay, and the older
    # generations' every few (12% of the chain's replay in cachegrind's estimate).
    def chain(x):
        for i in range(1000):
            x = np.sin(x) if i % 2 == 0 else np.tanh(x)
        return np.sum(x)

    x = np.linspace(0.1, 1.0, 10)
    jitted = rb.jit(rb.grad(chain, source="autograd"))
    for _ in range(3):
        jitted(x)
    assert jitted.programs[0].run.__code__.co_cellvars == ()
    collections = []
    gc.collect()
    gc.callbacks.append(callback := lambda phase, info: collections.append(info["generation"]))
    try:
        for k in range(30):
            got = jitted(x * (1 + k / 100))
    finally:
        gc.callbacks.remove(callback)
    assert collections == []
    np.testing.assert_array_equal(got, rb.grad(chain, source="autograd")(x * 1.29))

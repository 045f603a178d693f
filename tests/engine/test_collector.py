"""Python's cyclic garbage collector while a tape records and sweeps (rulebridge/engine/collector.py):
the oldest generation is not collected, the young ones are, in every thread; the user's
collector state (on/off, thresholds) is the user's, also when changed inside the function."""

import gc
import threading

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.engine.collector import OUT_OF_REACH, YOUNG

X = np.linspace(0.1, 1.0, 5)


@pytest.fixture(autouse=True)
def collector_as_the_test_found_it():
    was, thresholds = gc.isenabled(), gc.get_threshold()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()
    gc.set_threshold(*thresholds)


def _recording_collector_state(seen):
    def f(x):
        seen.append((gc.isenabled(), gc.get_threshold()[2]))
        return np.sum(np.sin(x))
    return f


def test_only_the_oldest_generation_waits_inside_the_trace_and_all_is_given_back_after():
    before = gc.get_threshold()
    seen = []
    gradient = rb.grad(_recording_collector_state(seen), source="autograd")(X)
    np.testing.assert_allclose(gradient, np.cos(X))
    assert seen == [(True, OUT_OF_REACH)]
    assert gc.isenabled() and gc.get_threshold() == before


def test_given_back_after_an_exception_in_the_differentiated_code():
    before = gc.get_threshold()

    def f(x):
        raise KeyError("user's own error")

    with pytest.raises(KeyError, match="user's own error"):
        rb.grad(f)(X)
    assert gc.isenabled() and gc.get_threshold() == before


def test_vjp_for_the_trace_and_for_each_pullback():
    before = gc.get_threshold()
    seen = []
    y, pullback = rb.vjp(_recording_collector_state(seen), X, source="autograd")
    assert seen == [(True, OUT_OF_REACH)] and gc.get_threshold() == before
    (ct,) = pullback(2.0)
    np.testing.assert_allclose(ct, 2.0 * np.cos(X))
    assert gc.isenabled() and gc.get_threshold() == before


def test_a_collector_the_user_disabled_stays_disabled():
    gc.disable()
    rb.grad(lambda x: np.sum(x * x))(X)
    rb.trace(lambda x: np.sum(x * x), X)
    assert not gc.isenabled()


def test_a_collector_the_user_disables_inside_the_function_stays_disabled():
    def f(x):
        gc.disable()
        return np.sum(x * x)

    np.testing.assert_allclose(rb.grad(f)(X), 2 * X)
    assert not gc.isenabled()


def test_a_collector_the_user_enables_inside_the_function_stays_enabled():
    gc.disable()

    def f(x):
        gc.enable()
        return np.sum(x * x)

    rb.grad(f)(X)
    assert gc.isenabled()


def test_thresholds_the_user_sets_inside_the_function_are_kept():
    def f(x):
        gc.set_threshold(1234, 5, 6)
        return np.sum(x * x)

    rb.grad(f)(X)
    assert gc.get_threshold() == (1234, 5, 6)


def test_automatic_collection_the_user_turned_off_by_threshold_stays_off():
    gc.set_threshold(0)
    seen = []
    rb.grad(_recording_collector_state(seen))(X)
    assert gc.get_threshold()[0] == 0 and seen[0][1] != OUT_OF_REACH


class _Cycle:
    """A small object in a reference cycle with itself; counts its own collection."""

    collected = 0

    def __init__(self):
        self.me = self

    def __del__(self):
        type(self).collected += 1


def test_another_threads_cyclic_garbage_is_collected_while_a_long_trace_runs():
    # CPython's default thresholds, whatever an earlier test or library left: the bound below is
    # a count of young collections, so it must not depend on a youngest threshold set elsewhere
    # (a run of the whole suite once found 50,000 there and kept 27,535 cycles waiting).
    gc.set_threshold(700, 10, 10)
    tracing, done = threading.Event(), threading.Event()
    errors = []

    def f(x):
        y = x
        for _ in range(1000):  # a tape of 1,000 ops is held while the other thread allocates
            y = np.sin(y)
        tracing.set()
        # The trace stays open, allocating nothing, so the young collections are the other
        # thread's alone: with ops recorded meanwhile too, the count of cycles freed by the
        # snapshot depended on how the two threads were scheduled on a loaded machine.
        done.wait(timeout=60)
        return np.sum(y)

    def run():
        try:
            rb.grad(f, source="autograd")(X)
        except Exception as exc:  # reported below
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        assert tracing.wait(timeout=30)
        _Cycle.collected = 0
        n = 100_000
        for _ in range(n):
            _Cycle()  # unreachable at once: only the cyclic collector can free it
        collected_during_the_trace = _Cycle.collected
    finally:
        done.set()
        thread.join()
    assert not errors
    # The young generations ran: all but those made since the last young collection (at most
    # YOUNG) were freed while tracing (with the collector disabled, as before, none was).
    assert collected_during_the_trace >= n - 2 * YOUNG, collected_during_the_trace


def test_overlapping_traces_in_threads_give_the_thresholds_back_once_all_end():
    before = gc.get_threshold()
    inside = threading.Barrier(2)
    errors, seen = [], []

    def f(x):
        inside.wait(timeout=10)  # both threads are tracing now
        seen.append(gc.get_threshold()[2])
        return np.sum(np.tanh(x))

    def run():
        try:
            np.testing.assert_allclose(rb.grad(f, source="autograd")(X), 1 - np.tanh(X) ** 2)
        except Exception as exc:  # reported below, with the thread's traceback lost otherwise
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert seen == [OUT_OF_REACH, OUT_OF_REACH]
    assert gc.isenabled() and gc.get_threshold() == before

"""The cyclic garbage collector is paused while a tape records and sweeps (rulebridge/engine/collector.py)
and is always given back as the user left it: after a gradient, after an exception, with other
threads tracing, and when the user had disabled it."""

import gc
import threading

import numpy as np
import pytest

import rulebridge as rb

X = np.linspace(0.1, 1.0, 5)


@pytest.fixture(autouse=True)
def collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def _recording_collector_state(seen):
    def f(x):
        seen.append(gc.isenabled())
        return np.sum(np.sin(x))
    return f


def test_paused_inside_the_trace_and_given_back_after():
    seen = []
    gradient = rb.grad(_recording_collector_state(seen), source="autograd")(X)
    np.testing.assert_allclose(gradient, np.cos(X))
    assert seen == [False]
    assert gc.isenabled()


def test_given_back_after_an_exception_in_the_differentiated_code():
    def f(x):
        raise KeyError("user's own error")

    with pytest.raises(KeyError, match="user's own error"):
        rb.grad(f)(X)
    assert gc.isenabled()


def test_vjp_pauses_for_the_trace_and_for_each_pullback():
    seen = []
    y, pullback = rb.vjp(_recording_collector_state(seen), X, source="autograd")
    assert gc.isenabled() and seen == [False]
    (ct,) = pullback(2.0)
    np.testing.assert_allclose(ct, 2.0 * np.cos(X))
    assert gc.isenabled()


def test_a_collector_the_user_disabled_stays_disabled():
    gc.disable()
    rb.grad(lambda x: np.sum(x * x))(X)
    rb.trace(lambda x: np.sum(x * x), X)
    assert not gc.isenabled()


def test_overlapping_traces_in_threads_resume_the_collector_once_all_end():
    inside = threading.Barrier(2)
    errors, seen = [], []

    def f(x):
        inside.wait(timeout=10)  # both threads are tracing now
        seen.append(gc.isenabled())
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
    assert seen == [False, False]
    assert gc.isenabled()

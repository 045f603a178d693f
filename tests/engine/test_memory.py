"""Memory: tapes and residuals are freed when the gradient is returned (also when the user's
function raises), and thousands of gradient calls do not grow the heap."""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import rulebridge as rb
from tests.support.tapes import recorded_tapes

CALLS = 1000


def _program_keeping(refs, raise_after=False, write=False):
    """A function whose tape holds an array created inside it (as a residual and an op
    argument); `refs` receives a weak reference to that array."""

    def f(x):
        # an array made per call that the tape holds (a plain one is held as its copy alone)
        c = x * 0.0 + np.linspace(0.0, 1.0, x.size).reshape(x.shape) + 0.5
        refs.append(weakref.ref(c._value))
        y = np.sin(x) * c
        if write:
            y = np.copy(y)
            y[0] = y[1] ** 2  # a write: its saved values are residuals too
        if raise_after:
            raise KeyError("user error")
        return np.sum(np.exp(y) * c)

    return f


@pytest.mark.parametrize("api", ["grad", "vjp", "value_and_grad"])
def test_tape_and_residuals_are_freed_when_the_gradient_is_returned(api):
    refs = []
    f = _program_keeping(refs)
    x = np.linspace(-1, 1, 5)
    if api == "grad":
        rb.grad(f)(x)
    elif api == "value_and_grad":
        rb.value_and_grad(f)(x)
    else:
        _, pullback = rb.vjp(f, x)
        pullback(1.0)
        assert refs[0]() is not None  # a pullback may be called again: it keeps its tape
        del pullback
    assert refs[0]() is None  # freed by reference counting alone: no cycle holds the tape


@pytest.mark.parametrize("api", ["grad", "vjp"])
def test_tape_with_writes_is_freed_when_the_gradient_is_returned(api):
    # The MutationState of a tape that recorded writes refers back to its tape weakly: no cycle.
    refs = []
    f = _program_keeping(refs, write=True)
    if api == "grad":
        rb.grad(f)(np.linspace(-1, 1, 5))
    else:
        rb.vjp(f, np.linspace(-1, 1, 5))[1](1.0)
    assert refs[0]() is None


def test_tape_is_freed_after_an_exception_in_the_users_function():
    refs = []
    f = _program_keeping(refs, raise_after=True, write=True)
    try:
        rb.grad(f)(np.linspace(-1, 1, 5))
    except KeyError:
        pass
    gc.collect()  # the traceback's frames form a cycle with the exception; nothing else holds it
    assert refs[0]() is None


def test_tape_is_freed_after_a_rulebridge_error():
    refs = []

    def f(x):
        c = np.linspace(1.0, 1.0, 3)  # a plain array (np.ones here would be a followed buffer)
        refs.append(weakref.ref(c))
        return float(np.sum(x * c))  # refused: would cut the gradient

    with pytest.raises(rb.TracingError):
        rb.grad(f)(np.ones(3))
    gc.collect()
    assert refs[0]() is None


def _small(w, X):
    u = np.copy(np.tanh(X @ w))
    u[0] = u[0] * 2.0
    return np.mean(u ** 2)


def _model(w, X):
    h = np.tanh(X @ w)
    u = np.copy(h)
    u[:, 0] = u[:, 0] * 2.0
    return np.mean(np.log1p(np.exp(-u))) + 0.01 * np.sum(w ** 2) + np.linalg.slogdet(
        w.T @ w + np.eye(3))[1]


def _growth(f, calls):
    """Bytes still allocated after `calls` more gradient calls than a warmed-up first one."""
    rng = np.random.default_rng(0)
    w, X = rng.normal(size=(4, 3)), rng.normal(size=(16, 4))
    gradient = rb.grad(f)
    for _ in range(200):  # warm the rule caches and NumPy's own
        gradient(w, X)
    gc.collect()
    tracemalloc.start()
    try:
        gradient(w, X)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            gradient(w, X)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


# One call's tape is tens of kilobytes; a leak of even one small array per call would be
# hundreds of kilobytes here.
LIMIT = 64 * 1024


def test_thousands_of_gradient_calls_do_not_grow_memory():
    growth = _growth(_small, CALLS)
    assert growth < LIMIT, f"{growth} bytes more after {CALLS} gradient calls"


@pytest.mark.slow
def test_twenty_thousand_calls_of_a_larger_model_do_not_grow_memory():
    growth = _growth(_model, 20000)
    assert growth < LIMIT, f"{growth} bytes more after 20000 gradient calls"


def test_a_gradients_scalar_ops_keep_no_per_op_bookkeeping(monkeypatch):
    """Plain Python arithmetic on traced scalars is recorded with its operator for a program
    that may be replayed (jit); a gradient's tape is swept once, and keeps none of it."""
    tapes = recorded_tapes(monkeypatch)

    def f(x):
        s = x[0]
        for _ in range(50):
            s = s * 1.01 + 0.5
        return s

    x = np.array([0.3, 2.0])
    np.testing.assert_allclose(rb.grad(f)(x), [1.01 ** 50, 0.0], rtol=1e-12)
    assert len(tapes) == 1 and len(tapes[0].entries) >= 100
    assert tapes[0].arithmetic == {}
    replayed = rb.jit(rb.grad(f))
    np.testing.assert_allclose(replayed(x), [1.01 ** 50, 0.0], rtol=1e-12)
    np.testing.assert_allclose(replayed(x + 1.0), [1.01 ** 50, 0.0], rtol=1e-12)

"""rulebridge.jit with the NumPy back end: every replay is the eager call's result to the bit, on
new inputs, or the function is traced again, or refused with JitError. References: the eager
transformation itself (which tests/ checks against finite differences and JAX elsewhere), and
central differences where a value is new here."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.optimize

import rulebridge as rb
from rulebridge.errors import JitError, UsageError
from rulebridge.tree import tree_flatten
from tests.support.jit_programs import Backend, cases, chain, inputs  # noqa: F401 (others import them)

SOURCES = [None, "autograd", "jax"]


def assert_same(a, b):
    """Equal to the bit: same structure, types, shapes, dtypes and bytes."""
    la, sa = tree_flatten(a)
    lb, sb = tree_flatten(b)
    assert sa == sb
    for x, y in zip(la, lb):
        assert type(x) is type(y)
        if isinstance(x, (np.ndarray, np.generic)):
            assert x.shape == y.shape and x.dtype == y.dtype
            assert x.tobytes() == y.tobytes(), (x, y)
        else:
            assert x == y or (x != x and y != y)


NUMPY = Backend("numpy", assert_same)


@pytest.mark.parametrize("program, source", cases(SOURCES))
def test_the_shared_programs_replay_as_the_eager_call(program, source):
    program(NUMPY, source)  # tests/support/jit_programs.py; tests/jit/test_jit_jax.py runs them staged


def test_a_new_shape_is_a_new_key():
    g = rb.jit(rb.grad(chain))
    for n in (3, 4, 3, 4):
        x = np.linspace(0.1, 1, n)
        assert_same(g(x), rb.grad(chain)(x))
    assert len(g.variants) == 2


def test_a_plain_computation_on_a_closure_array_is_seen():
    c = np.array([1.0, 2.0, 3.0])

    def f(x):
        d = c * 2  # plain NumPy: no op on the tape reads c itself
        return np.sum(np.sin(x) * d)

    g = rb.jit(rb.grad(f))
    x = np.array([0.1, 0.2, 0.3])
    g(x), g(x)
    c += 1.0
    assert_same(g(x), rb.grad(f)(x))


def test_a_rebound_closure_variable_and_a_global():
    scale = 2.0

    def f(x):
        return np.sum(np.sin(x) * scale * GLOBAL_SCALE[0])

    g = rb.jit(rb.grad(f))
    x = np.array([0.1, 0.2])
    assert_same(g(x), rb.grad(f)(x))
    scale = 3.0  # noqa: F841 (read by f)
    assert_same(g(x), rb.grad(f)(x))
    GLOBAL_SCALE[0] = 7.0
    try:
        assert_same(g(x), rb.grad(f)(x))
    finally:
        GLOBAL_SCALE[0] = 1.0


GLOBAL_SCALE = [1.0]


def test_state_of_an_object_the_function_holds():
    class Model:
        def __init__(self):
            self.weights = {"w": np.array([1.0, 2.0])}

        def __call__(self, x):
            return np.sum(np.tanh(self.weights["w"] * x))

    model = Model()
    g = rb.jit(rb.grad(model))
    x = np.array([0.3, 0.4])
    g(x), g(x)
    model.weights["w"] = np.array([-1.0, 0.5])  # rebound inside a dict inside the object
    assert_same(g(x), rb.grad(model)(x))


def test_a_seeded_generator_made_inside_replays():
    def f(a):
        return np.sum(np.sin(a) * np.random.default_rng(7).normal(size=3))

    g = rb.jit(rb.grad(f))
    for x in inputs(3, seed=4, shape=(3,)):
        assert_same(g(x), rb.grad(f)(x))


def test_writes_into_an_argument_and_state_outside_are_refused():
    def writes(x):
        x[0] = np.sin(x[1])
        return np.sum(x ** 2)

    with pytest.raises(JitError, match="writes into an argument"):
        rb.jit(rb.grad(writes))(np.array([1.0, 2.0]))
    log = []

    def logs(x):
        log.append(1)
        return np.sum(np.sin(x))

    with pytest.raises(JitError, match="changes state outside"):
        rb.jit(rb.grad(logs))(np.array([1.0, 2.0]))


def test_plain_jit_and_static_arguments():
    def f(x, n, mode):
        for _ in range(n):
            x = np.sin(x) if mode == "sin" else np.cos(x)
        return x

    jf = rb.jit(f, static_argnums=(1, 2))
    for x in inputs(3, seed=5):
        for n, mode in ((2, "sin"), (3, "cos"), (2, "sin")):
            assert_same(jf(x, n, mode), f(x, n, mode))
    assert len(jf.variants) == 2
    with pytest.raises(UsageError, match="not hashable"):
        rb.jit(f, static_argnums=1)(np.ones(2), [1], "sin")


def test_integer_array_arguments_are_part_of_the_key():
    def loss(logits, labels):
        z = logits - np.max(logits, axis=1, keepdims=True)
        logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
        return -np.mean(logp[np.arange(len(labels)), labels])

    g = rb.jit(rb.grad(loss))
    rng = np.random.default_rng(6)
    logits = rng.normal(size=(4, 3))
    for labels in (np.array([0, 1, 2, 0]), np.array([2, 2, 1, 0]), np.array([0, 1, 2, 0])):
        assert_same(g(logits, labels), rb.grad(loss)(logits, labels))


def test_minimize_with_a_jitted_value_and_grad():
    def rosen(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    x0 = np.array([-1.2, 1.0, -0.5, 0.8])
    eager = scipy.optimize.minimize(rb.value_and_grad(rosen), x0, jac=True, method="BFGS")
    jitted_fun = rb.jit(rb.value_and_grad(rosen))
    staged = scipy.optimize.minimize(jitted_fun, x0, jac=True, method="BFGS")
    assert_same(staged.x, eager.x)
    assert staged.nit == eager.nit and jitted_fun.traces == 2


def test_the_callers_arrays_are_the_callers():
    def f(x):
        return x, np.sin(x)

    jf = rb.jit(f)
    x = np.array([0.1, 0.2])
    kept = x.copy()
    for _ in range(3):
        same_x, y = jf(x)
        assert same_x is x  # f returned its argument: the caller's array, as eagerly
        y[0] = 99.0  # the caller's to write: the next call is not changed by it
        np.testing.assert_array_equal(x, kept)
    g = rb.jit(rb.grad(lambda x: np.sum(x)))
    first = g(x)
    first[0] = 5.0
    assert_same(g(x), np.ones(2))


def test_jit_inside_a_differentiation_records_its_ops():
    jf = rb.jit(lambda x: np.sin(x) * x)
    jf(np.ones(2))
    x = np.array([0.3, 0.6])
    assert_same(rb.grad(lambda x: np.sum(jf(x)))(x), rb.grad(lambda x: np.sum(np.sin(x) * x))(x))


def test_the_program_prints_and_threads_share_it():
    g = rb.jit(rb.grad(chain))
    xs = inputs(8, seed=9)
    g(xs[0])
    assert "def chain(inputs):" in str(g.programs[0]) and "backward" in str(g.programs[0])
    results = {}

    def worker(k):
        results[k] = g(xs[k])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(1, 8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(1, 8):
        assert_same(results[k], rb.grad(chain)(xs[k]))


def test_a_replay_that_raises_is_the_eager_call():
    def f(x):
        return np.sum(np.log(x))

    g = rb.jit(rb.grad(f))
    g(np.array([1.0, 2.0])), g(np.array([2.0, 3.0]))
    with np.errstate(all="ignore"):
        assert_same(g(np.array([-1.0, 2.0])), rb.grad(f)(np.array([-1.0, 2.0])))


def test_an_argument_it_does_not_differentiate_may_be_a_python_number_in_the_program():
    def f(w, n, scale):
        y = w
        for _ in range(int(n)):  # as grad(f) allows: n is not differentiated, so not traced
            y = np.sin(y) * scale
        return np.sum(y)

    g = rb.jit(rb.grad(f))
    w = np.array([0.2, 0.4])
    for n, scale in ((2.0, 1.5), (3.0, 1.5), (2.0, 0.5), (2.0, 1.5)):
        assert_same(g(w, n, scale), rb.grad(f)(w, n, scale))
    plain = rb.jit(lambda x, n: np.sin(x) * int(n))
    for n in (2.0, 3.0, 2.0):
        assert_same(plain(w, n), np.sin(w) * int(n))
    with pytest.raises(rb.TracingError):  # the differentiated argument's own: eager raises too
        rb.jit(rb.grad(lambda x: np.sum(x) * int(x[0])))(np.array([2.0, 1.0]))


def test_a_replay_that_cannot_answer_says_so():
    def f(x):
        return np.sum(np.log(x))

    g = rb.jit(rb.grad(f))
    g(np.array([1.0, 2.0])), g(np.array([2.0, 3.0]))
    assert g.eager_calls == 0 and g.last_fallback is None
    with np.errstate(all="ignore"):
        g(np.array([-1.0, 2.0]))  # NaN, as eagerly: the replay answered
    assert g.eager_calls == 0
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError):
            g(np.array([-1.0, 2.0]))  # the replay raises, and so does the eager call it runs
    assert g.eager_calls == 1 and isinstance(g.last_fallback, FloatingPointError)

"""Memory a loop writes into (issue 22, section 1): buffers written with traced values are freed
while the differentiated function runs, once nothing but the tape's records would hold them
(the ops before each write are shed at the memory they read, a write's record holds a buffer
that owns its memory weakly, the alias log forgets a freed owner, the cotangents writes hand on
are held weakly). Gradients against float64 central differences of the plain NumPy program."""

import gc
import weakref

import numpy as np
import pytest

import rulebridge as rb
from rulebridge import MutationError

from tests.support.numerical import central_difference

N = 20_000  # 160 KB: above the tape's LARGE_BYTES
X = np.array([0.3, -1.2, 0.7])


class Node:
    def __init__(self, data):
        self.data, self.me = data, self  # a reference cycle


def _plain(x, loop):
    return loop(x, [], lambda b: b)


def _loop(x, alive, unbox, read=lambda view: view * 2.0):
    s = 0.0
    for i in range(6):
        buffer = np.zeros(N)
        buffer[:3] = x * (i + 1)
        alive.append(weakref.ref(unbox(buffer)))
        n = Node(buffer)
        s = s + np.sum(read(n.data[:3]))
    del buffer, n
    gc.collect()
    alive.append(sum(r() is not None for r in alive))
    return s


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_buffers_written_in_a_loop_are_freed_while_the_function_runs(source):
    alive = []
    g = rb.grad(lambda x: _loop(x, alive, lambda b: b._value), source=source)(X.copy())
    assert alive[-1] <= 1  # the last write's buffer may still be held: no write came after it
    expected = central_difference(lambda x: _loop(x, [], lambda b: b), (X,))
    np.testing.assert_allclose(g, expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_buffers_read_through_a_view_by_a_unary_function_are_freed(source):
    alive = []
    f = lambda x: _loop(x, alive, lambda b: b._value, np.sin)  # noqa: E731
    g = rb.grad(f, source=source)(X.copy())
    assert alive[-1] <= 1  # the VJP made at shedding captures a copy of the view, not the view
    expected = central_difference(lambda x: _loop(x, [], lambda b: b, np.sin), (X,))
    np.testing.assert_allclose(g, expected, rtol=1e-7, atol=1e-9)


def _rewritten(x):
    """A large buffer read by ops whose pullbacks need its values, written again and read again:
    each op must see, in the sweep, the memory its forward read."""
    buffer = np.zeros(N)
    buffer[:3] = x
    a = np.sum(buffer * buffer)  # reads the whole buffer; its pullback reads it too
    view = buffer[:3]
    b = np.sum(np.sin(view) * np.cos(buffer[1:4]))
    buffer[1:3] = x[:2] ** 2  # overwrites what the ops above read
    c = np.sum(buffer * np.exp(buffer))
    buffer[:] = buffer * 3.0
    return a + b + c + np.sum(np.tanh(buffer[:3]) * x)


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_a_large_buffer_written_between_its_reads_gives_the_sweep_what_each_read_saw(source):
    g = rb.grad(_rewritten, source=source)(X.copy())
    np.testing.assert_allclose(g, central_difference(_rewritten, (X,)), rtol=1e-6, atol=1e-8)
    y, pullback = rb.vjp(_rewritten, X.copy(), source=source)
    np.testing.assert_allclose(pullback(1.0)[0], g, rtol=1e-12)
    np.testing.assert_allclose(pullback(1.0)[0], g, rtol=1e-12)  # a pullback runs again


def test_a_stale_view_of_a_large_written_buffer_is_still_refused():
    def f(x):
        buffer = np.zeros(N)
        diagonal = np.diagonal(buffer.reshape(100, 200))  # a view the tape does not follow
        buffer[:3] = x
        return np.sum(diagonal * 2.0)  # reads memory written after it was made

    with pytest.raises(MutationError, match="overwritten"):
        rb.grad(f)(X.copy())

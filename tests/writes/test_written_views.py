"""Small views of large buffers, read by ops and then written (issue 22, section 1): once shed,
an op that read a small view of a large array holds a copy of the view, and so do its rule's
residuals (rulebridge/engine/shedding.py, `Rule.rebased`), so the large base can be freed. The
copy must hold what the op read, not what a later write put there. Gradients against float64
central differences of the plain NumPy program, for both sources."""

import gc
import weakref

import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import central_difference

N = 20_000  # 160 KB: above the tape's LARGE_BYTES; each view below is 24 bytes
C = np.linspace(0.0, 1.0, N)
X = np.array([0.3, -1.2, 0.7])
SOURCES = ["autograd", "jax"]


def _read_then_overwritten(x):
    buffer = np.zeros(N)
    buffer[:3] = x
    view = buffer[:3]
    a = np.sum(np.sin(view) * view)  # shed at the next write, at the values it read
    buffer[:3] = x ** 2  # overwrites what the view showed
    return a + np.sum(np.exp(view))  # the view again: now x ** 2


def _two_views_of_one_buffer(x):
    buffer = np.zeros(N)
    buffer[:3] = x
    buffer[-3:] = x[::-1] * 2.0
    head, tail = buffer[:3], buffer[-3:]
    a = np.sum(head * tail)  # both arguments small views of one large buffer
    buffer[-3:] = np.cos(head)  # writes what `tail` showed
    return a + np.sum(np.tanh(tail) * head)


def _sliding_window(x):
    buffer = np.zeros(N)
    total = 0.0
    for i in range(4):
        buffer[i:i + 3] = x * (i + 1)  # overwrites two thirds of the previous window
        window = buffer[i:i + 3]
        total = total + np.sum(np.sin(window) * np.cos(window))
    return total + np.sum(buffer[:6] ** 2)


def _a_row_of_a_reshaped_buffer(x):
    buffer = np.zeros(N)
    grid = buffer.reshape(100, 200)
    grid[1, :3] = x
    row = grid[1, :3]  # a small view of a view of a large buffer
    a = np.sum(np.sin(row) * x)
    grid[1, :2] = x[1:] * 3.0  # through the grid, into what `row` showed
    return a + np.sum(row * row) + np.sum(np.sin(buffer[200:203]))


def _a_new_large_buffer_between_reads(x):
    buffer = np.zeros(N)
    buffer[:3] = x
    view = buffer[1:3]
    a = np.sum(np.exp(view))
    other = np.exp(np.outer(x, C))  # a large output: the ops before it are shed now
    buffer[1:3] = other[:2, -1]  # exp(x[:2])
    return a + np.sum(np.sin(view)) + np.sum(other[:, :2])


def _rows_of_a_large_traced_array(x):
    big = np.outer(x, C)  # large and traced: its rows' ops are shed with a stand-in of it
    a = np.sum(big[1][:5] ** 2) + np.sum(np.transpose(big)[:4, 2] * x[0])
    b = np.sum(np.sin(big.reshape(3, 2, N // 2)[2, 1, -3:]))
    return a + b


PROGRAMS = [_read_then_overwritten, _two_views_of_one_buffer, _sliding_window,
            _a_row_of_a_reshaped_buffer, _a_new_large_buffer_between_reads,
            _rows_of_a_large_traced_array]


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_views_of_large_buffers_written_later_give_the_gradient_of_what_each_op_read(
        program, source):
    expected = central_difference(program, (X,))
    g = rb.grad(program, source=source)(X.copy())
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    y, pullback = rb.vjp(program, X.copy(), source=source)
    np.testing.assert_allclose(y, program(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(pullback(1.0)[0], g, rtol=1e-12)
    np.testing.assert_allclose(pullback(1.0)[0], g, rtol=1e-12)  # a pullback runs again


@pytest.mark.parametrize("function", [np.sin, lambda v: v * 2.0, lambda v: v * v],
                         ids=["unary", "binary", "twice"])
@pytest.mark.parametrize("source", SOURCES)
def test_a_shed_op_holds_a_read_only_copy_of_its_view_and_frees_the_buffer(source, function):
    seen = []

    def f(x):
        buffer = np.zeros(N)
        buffer[:3] = x
        y = function(buffer[:3])
        buffer[:3] = 0.0  # sheds the ops before it
        seen.append(weakref.ref(buffer._value))
        seen.extend(op.args for op in x._tape.ops if op.inputs[0] is not None
                    and op.rule.name in ("numpy.sin", "numpy.multiply"))
        del buffer
        gc.collect()
        seen.append(seen[0]() is None)  # nothing the tape holds keeps the buffer alive
        return np.sum(y)

    g = rb.grad(f, source=source)(X.copy())
    expected = central_difference(lambda x: np.sum(function(x)), (X,))
    np.testing.assert_allclose(g, expected, rtol=1e-7, atol=1e-9)
    _, *reads, freed = seen
    assert freed
    (args,) = reads[-1:]
    assert args[0].base is None and not args[0].flags.writeable
    np.testing.assert_array_equal(args[0], X)  # what the op read, not the zeros written after

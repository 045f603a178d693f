"""Differentiating NumPy code that writes into arrays, against float64 central differences of the
same code run by NumPy, for every installed source."""

import numpy as np
import pytest

import rulebridge as rb
from rulebridge import MutationError, TracingError

from tests.support.numerical import central_difference

INSTALLED = {str(info) for info in rb.adapters() if info.available}
SOURCES = [pytest.param(name, marks=pytest.mark.skipif(name not in INSTALLED,
                                                       reason=f"adapter {name} not installed"))
           for name in ("autograd", "jax")]


@pytest.fixture(params=SOURCES)
def source(request):
    return request.param


def assert_gradient(f, args, source, argnums=0, rtol=1e-6, h=1e-5):
    """rulebridge's gradient of `f` equals central differences at `rtol` relative."""
    positions = argnums if isinstance(argnums, tuple) else (argnums,)
    calls = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    grads = rb.grad(f, argnums=argnums, source=source)(*calls)
    grads = grads if isinstance(argnums, tuple) else (grads,)
    for i, g in zip(positions, grads):
        reference = central_difference(f, args, i, h)
        np.testing.assert_allclose(g, reference, rtol=rtol,
                                   atol=rtol * max(1.0, np.max(np.abs(reference))))


RNG = np.random.default_rng(5)


# -- programs that write into arrays, as users write them -------------------------------------


def heat(u0, k):
    u = np.copy(u0)
    for _ in range(8):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum(u ** 2 * np.linspace(1.0, 2.0, len(u)))


def test_heat_stencil_updated_in_place(source):
    assert_gradient(heat, (RNG.normal(size=9), 0.21), source, argnums=(0, 1))


def accumulate(W, x, c):
    acc = np.zeros(W.shape[1], like=W)
    for i in range(W.shape[0]):
        acc += W[i] * x[i]
    acc *= c
    return np.sum(np.sin(acc))


def test_accumulation_with_augmented_assignment(source):
    args = (RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), 1.3)
    assert_gradient(accumulate, args, source, argnums=(0, 1, 2))


def rows_then_column(x):
    buf = np.empty((4, len(x)), like=x)
    for i in range(4):
        buf[i] = np.sin(x * (i + 1))
    buf[:, 2] = buf[:, 0] * buf[:, 1] + buf[:, 3]
    return np.sum(buf * np.arange(1.0, 4 * len(x) + 1).reshape(4, len(x)))


def test_buffer_filled_row_by_row_then_column_overwritten(source):
    assert_gradient(rows_then_column, (RNG.normal(size=5),), source)


def out_arguments(x, y):
    buf = np.empty_like(x)
    np.multiply(x, y, out=buf)
    np.exp(buf, out=buf)
    buf[1] = x[0] * 3.0
    return np.sum(buf * y)


def test_out_arguments_then_element_overwrite(source):
    assert_gradient(out_arguments, (RNG.normal(size=4), RNG.normal(size=4)), source,
                    argnums=(0, 1))


def mooncake_loop(x):
    y = np.zeros_like(x)
    for n in range(len(x)):
        y[n] = np.sin(np.cos(np.exp(x[n])))
    return np.sum(y)


def test_mooncake_write_loop(source):
    assert_gradient(mooncake_loop, (RNG.normal(size=6),), source)


def view_read_then_base_written(x):
    u = np.copy(x)
    v = u[1:4]
    s = np.sum(np.sin(v))
    u[2] = u[0] * u[4]
    return s + np.sum(u ** 2)


def test_view_read_before_its_base_is_written(source):
    assert_gradient(view_read_then_base_written, (RNG.normal(size=6),), source)


def write_through_view(x):
    u = np.copy(x)
    v = u[1:4]
    v[0] = u[0] ** 2
    v *= 2.0
    return np.sum(np.cos(v))


def test_write_through_a_view(source):
    assert_gradient(write_through_view, (RNG.normal(size=6),), source)


def read_base_written_through_view(x):
    u = np.copy(x)
    v = u[1:4]
    v[0] = np.sin(u[0])
    return np.sum(u * np.arange(1.0, len(u) + 1))


def read_view_after_base_written(x):
    u = np.copy(x)
    v = u[1:4]
    u[2] = u[0] * u[4]
    return np.sum(np.sin(v))


def rows_written_through_iteration(x):
    a = np.zeros((3, len(x)), like=x)
    for i, row in enumerate(a):
        row[:] = np.cos(x * (i + 1))
        row[1] += x[0]
    return np.sum(a * np.arange(1.0, 3 * len(x) + 1).reshape(3, -1))


def views_of_views(x):
    a = np.ones((3, 4), like=x) * x[0]
    row = a[1]
    part = row[1:3]
    a[1, 2] = x[1] ** 2  # through the base: row and part are re-derived when read
    part[0] = np.sin(x[2])  # through the grandchild: row and a follow
    return np.sum(np.cos(part)) + np.sum(row * x[:4]) + np.sum(a ** 2)


def reshape_and_transpose_views(x):
    a = np.copy(x).reshape(2, 3)
    t = a.T
    t[1] *= 3.0  # through a transpose view of a reshape view of the copy
    a[0, 2] = t[0, 1] * 2  # through the base: t is taken again when read
    flat = a.reshape(6)
    flat[4] = np.sin(x[0])
    return np.sum(a ** 2) + np.sum(t[:, 0]) + np.sum(np.transpose(a)[1:] * x[:4].reshape(2, 2))


@pytest.mark.parametrize("program", [read_base_written_through_view,
                                     read_view_after_base_written,
                                     rows_written_through_iteration, views_of_views,
                                     reshape_and_transpose_views])
def test_aliases_through_views_follow_numpy(source, program):
    assert_gradient(program, (RNG.normal(size=6),), source)


def read_base_written_through_ravel(u):
    v = u.ravel()  # a view rulebridge does not follow
    v[0] = 5.0
    return np.sum(u)


def read_ravel_after_base_written(u):
    v = u.ravel()
    u[2] = 0.0
    return np.sum(v)


def sin_of_ravel_after_base_written(u):
    v = u.ravel()
    w = np.sin(u)  # before the write, and it puts np.sin's rule in the tape's cache
    u[2] = 0.0
    return np.sum(np.sin(v) + w)  # so this takes Traced.__array_ufunc__'s inline path


@pytest.mark.parametrize("program, match", [
    (read_base_written_through_ravel, r"numpy.sum reads .* overwritten later through"),
    (read_ravel_after_base_written, r"numpy.sum reads .* setitem \[2\]"),
    (sin_of_ravel_after_base_written, r"numpy.sin reads .* setitem \[2\]"),
])
def test_aliases_the_tape_cannot_follow_are_refused(source, program, match):
    with pytest.raises(MutationError, match=match):
        rb.grad(lambda x: program(np.copy(x)), source=source)(np.ones(6))


def test_view_of_an_untouched_region_stays_usable(source):
    def f(x):
        u = np.copy(x)
        v = u[:2]
        u[3:] = np.sin(u[3:])
        return np.sum(v * u[:2]) + np.sum(u ** 2)

    assert_gradient(f, (RNG.normal(size=5),), source)


def mutate_argument(x):
    x *= 2.0
    x[0] = x[1] ** 2
    return np.sum(np.sin(x))


def test_function_mutating_its_argument(source):
    x = RNG.normal(size=4)
    expected = x.copy()
    mutate_argument(expected)
    argument = x.copy()
    g = rb.grad(mutate_argument, source=source)(argument)
    np.testing.assert_array_equal(argument, expected)  # the caller sees NumPy's result
    np.testing.assert_allclose(g, central_difference(mutate_argument, (x,), 0), rtol=1e-6)


def mutate_argument_through_view(x):
    v = x[1:3]
    v *= 2.0
    return np.sum(x ** 2)


def shift_onto_itself(x):
    u = np.copy(x)
    u[1:] = u[:-1] * 1.5  # the value overlaps the target, as NumPy allows
    u[::-1] = u + 0.0
    return np.sum(u * np.arange(1.0, 6.0))


@pytest.mark.parametrize("program", [mutate_argument_through_view, shift_onto_itself])
def test_overlapping_and_argument_writes(source, program):
    x = RNG.normal(size=5)
    expected = x.copy()
    program(expected)
    argument = x.copy()
    g = rb.grad(program, source=source)(argument)
    np.testing.assert_array_equal(argument, expected)
    np.testing.assert_allclose(g, central_difference(program, (x,), 0), rtol=1e-6)


def test_vjp_of_a_view_returned_after_its_base_was_written(source):
    def f(x):
        u = np.copy(x)
        y = u[1:3]
        u[1] = 5.0 * x[0]
        return y

    x = RNG.normal(size=4)
    y, pullback = rb.vjp(f, x, source=source)
    np.testing.assert_array_equal(y, f(x))
    ybar = np.array([1.0, 2.0])
    reference = sum(w * central_difference(lambda z: f(z)[i], (x,), 0) for i, w in enumerate(ybar))
    np.testing.assert_allclose(pullback(ybar)[0], reference, rtol=1e-6)


# -- the discipline: restore in reverse, redo after ------------------------------------------------


def test_write_with_no_cotangent_still_restores_for_earlier_pullbacks(source):
    def f(x):
        y = np.sin(x)  # its pullback needs cos(x) at the entry value
        x[0] = 100.0  # nothing downstream reads x: this write gets no cotangent
        return np.sum(y)

    x = RNG.normal(size=3)
    g = rb.grad(f, source=source)(x.copy())
    np.testing.assert_allclose(g, np.cos(x), rtol=1e-12)


def test_vjp_pullback_called_twice(source):
    x = RNG.normal(size=7)
    y, pullback = rb.vjp(lambda x: heat(x, 0.2), x.copy(), source=source)
    first, second = pullback(1.0)[0], pullback(1.0)[0]
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, central_difference(heat, (x, 0.2), 0), rtol=1e-6)


def test_vjp_seeded_with_the_written_output_itself(source):
    def f(x):
        u = np.copy(x)
        u[1:] = np.sin(u[:-1])
        return u

    x = RNG.normal(size=4)
    y, pullback = rb.vjp(f, x, source=source)
    expected = pullback(y.copy())[0]
    np.testing.assert_array_equal(pullback(y)[0], expected)  # y's memory is restored mid-sweep


def test_vjp_output_written_after_use(source):
    def f(x):
        y = np.exp(x)
        z = y * 2.0  # multiply keeps y as a residual
        y[:] = 0.0
        return z + y

    x = RNG.normal(size=3)
    out, pullback = rb.vjp(f, x, source=source)
    np.testing.assert_array_equal(out, 2 * np.exp(x))
    np.testing.assert_allclose(pullback(np.ones(3))[0], 2 * np.exp(x), rtol=1e-12)


# -- indexing forms ---------------------------------------------------------------------------------


def index_forms(x):
    a = np.zeros((3, 4), like=x)
    a[:, 2] = x[0]  # broadcast 0-d value
    a[0] = x[1:5]  # a row
    a[1, [0, 3]] = x[2:4] ** 2  # integer array
    mask = np.array([[False, True, False, True]] * 3)
    a[mask] = np.tile(x[:2], 3) * 3.0  # boolean mask
    a[2:, :2] = np.sin(x[4:6]).reshape(1, 2)  # leading length-1 axis dropped, like NumPy
    a[..., 1] += x[5]
    a[2] -= x[0] * a[0]
    a[0] /= 1.5 + x[1] ** 2
    a[1] **= 2
    return np.sum(a * np.arange(12.0).reshape(3, 4))


def test_index_forms_and_augmented_operators(source):
    assert_gradient(index_forms, (RNG.normal(size=6),), source)


def test_fill_and_allocators(source):
    def f(x):
        a = np.ones_like(x)
        a.fill(x[1])
        b = np.full_like(x, 2.0)
        b[0] = x[0]
        c = np.empty(len(x), like=x)
        c[:] = x * b
        return np.sum(a * b * c)

    assert_gradient(f, (RNG.normal(size=3),), source)


def test_out_of_array_functions(source):
    def f(x):
        u = np.copy(x)
        np.clip(u, -0.5, 0.5, out=u)
        total = np.empty((), like=x)
        np.sum(u * x, out=total)
        return total * 1.0

    assert_gradient(f, (np.array([-1.0, -0.3, 0.1, 0.4, 0.9]),), source)


def test_float32_buffer_keeps_numpys_values(source):
    def f(x):
        buf = np.zeros_like(x, dtype=np.float32)
        buf[1:] = x[:-1] * 2
        return np.sum(buf.astype(np.float64) ** 2)

    x = RNG.normal(size=4)
    assert rb.value_and_grad(f, source=source)(x)[0] == f(x)
    # The buffer rounds to float32: a step far above its resolution (f is quadratic in x).
    assert_gradient(f, (x,), source, rtol=2e-3, h=1e-2)


@pytest.mark.parametrize("program", ["mooncake_loop", "views_of_views",
                                     "rows_written_through_iteration"])
def test_tape_prints_and_replays_writes(source, program):
    program = globals()[program]  # defined further down for some
    x = RNG.normal(size=6)
    y, tape = rb.trace(program, x.copy(), source=source)
    assert "setitem(" in str(tape)
    x2 = RNG.normal(size=6)
    assert tape.replay(x2.copy()) == pytest.approx(program(x2.copy()), rel=1e-14)


# -- random programs ---------------------------------------------------------------------------------


def random_program(seed: int):
    """A seeded mix of slice writes, in-place operators, writes through row and slice views and
    reads of views across writes, on a (3, 4) buffer built from x."""
    rng = np.random.default_rng(seed)
    steps = [tuple(rng.integers(0, 4, size=4)) for _ in range(6)]

    def program(x):
        a = np.empty((3, 4), like=x)
        a[...] = x.reshape(3, 4)
        views = [a[1], a[:, 1:3], a[0, ::2]]
        total = 0.0
        for kind, i, j, k in steps:
            view = views[k % 3]
            if kind == 0:
                a[i % 3, j:] = np.sin(a[(i + 1) % 3, j:]) * x[k]
            elif kind == 1:
                view *= 1.0 + 0.1 * x[i]
            elif kind == 2:
                view[..., j % 2] += np.cos(a[i % 3, k])
            else:
                total = total + np.sum(view ** 2)
        return total + np.sum(a * np.tanh(a))

    return program


@pytest.mark.parametrize("seed", range(8))
def test_random_programs_with_writes_and_views(source, seed):
    assert_gradient(random_program(seed), (RNG.normal(size=12) * 0.5,), source)


def test_writing_an_escaped_box_is_refused(source):
    kept = []

    def f(x):
        u = np.copy(x)
        kept.append(u)
        return np.sum(u)

    rb.grad(f, source=source)(np.ones(3))
    with pytest.raises(rb.NestedDifferentiationError, match="escaped a finished"):
        kept[0][0] = 1.0


# -- refusals ---------------------------------------------------------------------------------------


@pytest.fixture
def unfollowed():
    """Plain buffers as rulebridge sees them when it does not follow allocations."""
    before = rb.follow_plain_buffers(False)
    yield
    rb.follow_plain_buffers(before)


@pytest.mark.parametrize("index", [slice(0, 2), 0])
def test_writing_a_traced_value_into_a_plain_buffer_is_refused(source, index, unfollowed):
    def f(x):
        buf = np.zeros(3)
        buf[index] = x[index]
        return np.sum(buf)

    with pytest.raises((TracingError, ValueError)) as caught:
        rb.grad(f, source=source)(np.ones(3))
    # For one element NumPy raises its own ValueError, with ours as its cause.
    error = caught.value if isinstance(caught.value, TracingError) else caught.value.__cause__
    assert isinstance(error, TracingError)
    assert "plain ndarray" in str(error) and "np.zeros(shape, like=x)" in str(error)


def test_plain_out_with_traced_inputs_is_refused(source, unfollowed):
    def f(x):
        buf = np.zeros(3)
        np.sin(x, out=buf)
        return np.sum(x)

    with pytest.raises(MutationError, match=r"numpy.sin\(\.\.\., out=buf\).*plain ndarray"):
        rb.grad(f, source=source)(np.ones(3))


@pytest.mark.parametrize("write, match", [
    (lambda x: x.__setitem__([0, 0], x[1:3]), "repeats a position"),
    (lambda x: np.add.at(x, [0, 1], 1.0), r"numpy.add.at"),
    (lambda x: np.put(x, [0], 1.0), r"numpy.put writes into its argument"),
    (lambda x: np.clip(x, 0.0, 0.5, x), r"numpy.clip got its output array by position"),
    (lambda x: np.cumsum(x, 0, None, np.empty(3)), r"numpy.cumsum got its output array"),
])
def test_unrecordable_writes_are_refused(source, write, match):
    def f(x):
        u = np.copy(x)
        write(u)
        return np.sum(u)

    with pytest.raises(MutationError, match=match):
        rb.grad(f, source=source)(np.ones(3))

"""Plain buffers and lists of traced values (rulebridge/writes/follow.py): `np.zeros(n)` filled
in a loop, `out=` into a plain-allocated buffer, `np.array([a, b, c])`, `np.mean([a, b])`,
against jax.grad of the same program in jax.numpy or float64 central differences of the plain
NumPy program; buffers that never receive a traced value behave as plain arrays; nothing is left
installed, other threads are untouched, and the switch restores the refusals."""

import os
import subprocess
import sys
import threading
import types

import numpy as np
import pytest
import scipy.linalg
import scipy.stats

import rulebridge as rb
from rulebridge import MutationError, TracingError

from tests.support.numerical import central_difference

INSTALLED = {str(info) for info in rb.adapters() if info.available}
SOURCES = [pytest.param(name, marks=pytest.mark.skipif(name not in INSTALLED,
                                                       reason=f"adapter {name} not installed"))
           for name in ("autograd", "jax")]
NUMPY_ZEROS, NUMPY_ARRAY, NUMPY_MEAN = np.zeros, np.array, np.mean
X = np.array([0.3, 1.2, -0.7, 2.1])


@pytest.fixture(params=SOURCES)
def source(request):
    return request.param


def assert_gradient(f, args, source, argnums=0):
    grads = rb.grad(f, argnums=argnums, source=source)(*[np.copy(a) for a in args])
    positions = argnums if isinstance(argnums, tuple) else (argnums,)
    grads = grads if isinstance(argnums, tuple) else (grads,)
    for i, g in zip(positions, grads):
        np.testing.assert_allclose(g, central_difference(f, args, i, 1e-5), rtol=1e-6,
                                   atol=1e-8)


def jax_grad(f_jnp, x):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return np.asarray(jax.grad(f_jnp)(x))


# -- followed buffers ------------------------------------------------------------------------------


def test_a_buffer_filled_in_a_loop(source):
    def f(x):
        out = np.zeros(len(x))
        for i in range(len(x)):
            out[i] = np.sin(x[i]) * x[i]
        return np.sum(out * out)

    def f_jnp(x):
        import jax.numpy as jnp
        out = jnp.zeros(len(x))
        for i in range(len(x)):
            out = out.at[i].set(jnp.sin(x[i]) * x[i])
        return jnp.sum(out * out)

    got = rb.grad(f, source=source)(X.copy())
    np.testing.assert_allclose(got, jax_grad(f_jnp, X), rtol=1e-12)
    assert_gradient(f, (X,), source)


@pytest.mark.parametrize("allocate, defined", [
    (lambda n: np.empty(n), False), (lambda n: np.ones(n), True), (lambda n: np.full(n, 3.0), True),
    (lambda n: np.zeros((n,), dtype=np.float64), True),
    (lambda n: np.empty(shape=n, dtype="f8"), False),
])
def test_each_allocator_is_followed(source, allocate, defined):
    def f(x):
        buf = allocate(len(x))
        if not defined:
            buf[0] = 1.5
        buf[1:] = x[:-1] ** 2
        buf[0] = buf[0] * x[-1]  # what the allocator put there is part of the value
        return np.sum(np.cos(buf))

    assert_gradient(f, (X,), source)


def test_out_into_a_plain_allocated_buffer(source):
    def f(a, b):
        buf = np.empty(a.shape)
        np.add(a, b, out=buf)
        np.multiply(buf, a, out=buf)
        return np.sum(np.sin(buf))

    assert_gradient(f, (X, X[::-1].copy()), source, argnums=(0, 1))


def test_a_traced_fill_value(source):
    def f(x):
        return np.sum(np.full((2, 3), x[0]) * x[1])

    assert_gradient(f, (X,), source)


def test_a_float32_buffer_keeps_its_dtype(source):
    def f(x):
        out = np.zeros(len(x), dtype=np.float32)
        out[:] = x * 2
        assert out.dtype == np.float32
        return np.sum(out * out)

    got = rb.grad(f, source=source)(X.astype(np.float32))
    np.testing.assert_allclose(got, 8 * X.astype(np.float32), rtol=1e-6)


def test_jacobian_elementwise_grad_and_check_grads_follow_buffers(source):
    def f(x):
        out = np.zeros(len(x))
        for i in range(len(x)):
            out[i] = np.sin(x[i]) * x[i]
        return out

    derivative = np.cos(X) * X + np.sin(X)
    np.testing.assert_allclose(rb.jacobian(f, source=source)(X.copy()), np.diag(derivative),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(rb.elementwise_grad(f, source=source)(X.copy()), derivative,
                               rtol=1e-12)
    rb.check_grads(lambda x: np.sum(f(x) ** 2), X.copy(), source=source)


# -- lists of traced values ------------------------------------------------------------------------


def test_an_array_of_traced_scalars(source):
    def f(x):
        v = np.array([x[0] * x[1], np.sin(x[2]), x[3]])
        return np.sum(v * np.arange(1.0, 4.0)) + np.sum(v ** 2)

    def f_jnp(x):
        import jax.numpy as jnp
        v = jnp.array([x[0] * x[1], jnp.sin(x[2]), x[3]])
        return jnp.sum(v * jnp.arange(1.0, 4.0)) + jnp.sum(v ** 2)

    np.testing.assert_allclose(rb.grad(f, source=source)(X.copy()), jax_grad(f_jnp, X),
                               rtol=1e-12)


def test_a_list_with_constants_asarray_and_dtype(source):
    def f(x):
        v = np.asarray([x[0], 2.0, x[1]], dtype=np.float64)
        assert v.shape == (3,) and v.dtype == np.float64
        return np.prod(v) + v[1]

    assert_gradient(f, (X,), source)


def test_mean_and_friends_of_a_list(source):
    def f(x):
        a, b = x[0] * x[1], np.exp(x[2])
        return np.mean([a, b]) + np.sum([a, x[3]]) * np.max([b, x[0]]) + np.std([a, b, x[3]])

    assert_gradient(f, (X,), source)


def test_nested_lists(source):
    def f(x):
        m = np.array([[x[0], 1.0], [x[1] * x[2], [x[3]][0]]])
        assert m.shape == (2, 2)
        return np.sum(m @ m) + np.mean([[x[0], x[1]], [x[2], 0.5]])

    def f_jnp(x):
        import jax.numpy as jnp
        m = jnp.array([[x[0], 1.0], [x[1] * x[2], x[3]]])
        return jnp.sum(m @ m) + jnp.mean(jnp.array([[x[0], x[1]], [x[2], 0.5]]))

    np.testing.assert_allclose(rb.grad(f, source=source)(X.copy()), jax_grad(f_jnp, X),
                               rtol=1e-12)


def test_a_list_of_traced_rows_is_a_stack(source):
    def f(x):
        rows = [x * k for k in range(3)]
        return np.sum(np.array(rows) ** 2)

    assert_gradient(f, (X,), source)


# -- a buffer that gets no traced value is a plain array ------------------------------------------


def test_an_untouched_buffer_goes_to_scipy_unchanged(source):
    seen = {}

    def f(x):
        buf = np.zeros((2, 2))
        buf[0, 1] = 0.5
        buf[1, 0] = -0.25
        seen["expm"] = scipy.linalg.expm(buf)  # SciPy converts it with np.asarray
        seen["float"], seen["list"] = float(buf[0, 1]), buf.tolist()
        seen["plain"] = np.asarray(buf)
        return np.sum(x[:2] @ seen["expm"])

    plain = np.zeros((2, 2))
    plain[0, 1], plain[1, 0] = 0.5, -0.25
    got = rb.grad(f, source=source)(X.copy())
    np.testing.assert_array_equal(seen["expm"], scipy.linalg.expm(plain))
    assert seen["float"] == 0.5 and seen["list"] == plain.tolist()
    assert type(seen["plain"]) is np.ndarray and not seen["plain"].flags.writeable
    np.testing.assert_allclose(got[:2], scipy.linalg.expm(plain).sum(axis=1), rtol=1e-12)


def test_a_libraries_own_buffers_stay_plain(source):
    def f(x):
        # scipy.stats allocates with np.zeros and fills with np.place inside: not followed.
        density = scipy.stats.norm.pdf(np.linspace(-1.0, 1.0, 4))
        assert type(density) is np.ndarray
        return np.sum(x * density)

    got = rb.grad(f, source=source)(X.copy())
    np.testing.assert_allclose(got, scipy.stats.norm.pdf(np.linspace(-1.0, 1.0, 4)), rtol=1e-12)


def test_integer_buffers_stay_plain(source):
    def f(x):
        index = np.zeros(2, dtype=int)
        index[1] = 3
        assert type(index) is np.ndarray
        return np.sum(x[index])

    np.testing.assert_array_equal(rb.grad(f, source=source)(X.copy()), [1.0, 0, 0, 1.0])


def test_a_traced_write_after_handing_the_memory_out_is_refused(source):
    """The plain array np.asarray handed out would not follow the write: its later reads
    would silently drop the gradient."""
    def f(x):
        buf = np.zeros(4)
        plain = np.asarray(buf)
        buf[0] = x[0]
        return np.sum(x) + plain[0]

    with pytest.raises(MutationError, match="handed to plain code"):
        rb.grad(f, source=source)(X.copy())


def test_the_handed_out_memory_is_read_only(source):
    def f(x):
        buf = np.zeros(4)
        np.asarray(buf)[0] = 1.0
        return np.sum(x * buf)

    with pytest.raises(ValueError, match="read-only"):
        rb.grad(f, source=source)(X.copy())


def test_a_box_holding_a_traced_value_still_refuses_conversion(source):
    def f(x):
        buf = np.zeros(4)
        buf[2] = x[1]
        return float(buf[0]) + np.sum(np.asarray(buf))

    with pytest.raises(TracingError, match="cut the gradient"):
        rb.grad(f, source=source)(X.copy())


# -- nothing left behind, other threads, the switch ------------------------------------------------


def test_nothing_is_installed_after_the_trace(source):
    # Nothing in the numpy module is ever replaced: while a trace runs, its class follows the
    # lookups the differentiated code makes to call np.zeros; any other lookup, even there,
    # gets NumPy's own function (issue 22: pickle, identity tables, other threads).
    from rulebridge.writes import follow

    def f(x):
        assert follow.installed()  # followed while this runs
        assert np.zeros is NUMPY_ZEROS and vars(np)["zeros"] is NUMPY_ZEROS
        return np.sum(x)

    rb.grad(f, source=source)(X.copy())
    assert not follow.installed() and type(np) is types.ModuleType
    assert np.zeros is NUMPY_ZEROS and np.array is NUMPY_ARRAY and np.mean is NUMPY_MEAN

    def raises(x):
        raise KeyError("inside")

    with pytest.raises(KeyError):
        rb.vjp(raises, X.copy(), source=source)
    assert np.zeros is NUMPY_ZEROS and np.array is NUMPY_ARRAY and np.mean is NUMPY_MEAN


def test_another_thread_gets_plain_arrays_during_a_trace(source):
    started, done, seen = threading.Event(), threading.Event(), {}

    def other():
        started.wait(10)
        seen["zeros"] = np.zeros(3)
        seen["array"] = np.array([1.0, 2.0])
        done.set()

    thread = threading.Thread(target=other)
    thread.start()

    def f(x):
        started.set()
        done.wait(10)  # the other thread allocates while this trace runs
        return np.sum(x)

    rb.grad(f, source=source)(X.copy())
    thread.join(10)
    assert type(seen["zeros"]) is np.ndarray and type(seen["array"]) is np.ndarray
    np.testing.assert_array_equal(seen["array"], [1.0, 2.0])


def test_the_switch_restores_the_refusals(source):
    def f(x):
        buf = np.zeros(len(x))
        buf[:2] = x[:2]
        return np.sum(buf)

    before = rb.follow_plain_buffers(False)
    try:
        with pytest.raises(TracingError, match="plain ndarray"):
            rb.grad(f, source=source)(X.copy())
        with pytest.raises(TracingError, match="cut the gradient"):
            rb.grad(lambda x: np.sum(np.array([x[0], x[1]])), source=source)(X.copy())
        assert rb.follow_plain_buffers() is False
    finally:
        rb.follow_plain_buffers(before)
    np.testing.assert_array_equal(rb.grad(f, source=source)(X.copy()), [1.0, 1.0, 0, 0])


def test_the_environment_variable_switches_it_off():
    code = ("import numpy as np, rulebridge as rb\n"
            "try:\n"
            "    rb.grad(lambda x: np.sum(np.array([x[0], x[1]])))(np.ones(3))\n"
            "except rb.TracingError:\n"
            "    print('refused', rb.follow_plain_buffers())\n")
    env = dict(os.environ, RULEBRIDGE_FOLLOW_PLAIN_BUFFERS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "refused False"


def test_debug_mode_compares_a_dtype_result_as_numpy_does(source):
    # np.result_type(x) of a box is recorded and returns a dtype, not numbers: debug mode's
    # comparison with NumPy's own result must not treat it as an array of values.
    def f(x):
        out = np.zeros(np.shape(x), dtype=np.result_type(x))
        for k in range(len(x)):
            out[k] = np.sin(x[k]) * (k + 1)
        return np.sum(out)

    with rb.debug():
        got = rb.grad(f, source=source)(X.copy())
    np.testing.assert_allclose(got, np.cos(X) * np.arange(1, len(X) + 1), rtol=1e-12)


def test_allocations_are_followed_again_after_a_rule_is_built_inside_a_trace(source):
    # A rule is built with NumPy's own functions in the numpy module (an adapter may compare
    # `function is np.sum`); the wrappers must be back for the rest of the trace.
    from rulebridge.writes import follow
    seen = []

    def f(x):
        y = np.sinc(np.arcsinh(x * 0.3)) + np.log1p(np.square(x))
        if isinstance(x, rb.Traced):  # (finite differences call f on plain arrays too)
            seen.append(follow.installed())
        buf = np.zeros(len(x))
        buf[:] = y
        return np.sum(buf * buf)

    def reference(x):
        y = np.sinc(np.arcsinh(x * 0.3)) + np.log1p(np.square(x))
        return np.sum(y * y)

    assert_gradient(f, (X,), source)
    assert seen and all(seen)
    np.testing.assert_allclose(rb.grad(f, source=source)(X.copy()),
                               rb.grad(reference, source=source)(X.copy()), rtol=1e-12)
    assert not follow.installed()

"""The JAX adapter: gradients against jax.grad of the same program in jax.numpy, float32 staying
float32, multi-output ops, NumPy's meaning where JAX's differs, the complex convention against
autograd's rules, and the errors for what it cannot take."""

from __future__ import annotations

import functools
import operator
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

pytestmark = pytest.mark.skipif("jax" not in rb.adapters(), reason="rulebridge-jax not installed")


def jax_grad(program, args, argnums=0):
    """jax.grad of `program(jnp, *args)` in float64, as NumPy arrays (jitted: compiling the
    whole program once is much faster than JAX's op-by-op eager mode)."""
    with jax.enable_x64(True):
        grads = jax.jit(jax.grad(functools.partial(program, jnp), argnums=argnums))(
            *(jnp.asarray(a) for a in args))
    return jax.tree_util.tree_map(np.asarray, grads)


def rb_grad(program, args, argnums=0, source="jax"):
    return rb.grad(functools.partial(program, np), argnums=argnums, source=source)(*args)


def assert_close(actual, expected, rtol=1e-6):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * np.max(np.abs(expected)))


# Programs written once against a namespace `xp`; each exercises functions the JAX adapter binds.

def spectral_and_fft(xp, x):
    spectrum = xp.fft.rfft(xp.sin(x) * xp.cosh(x / 4))
    return xp.sum(xp.abs(spectrum) ** 2) + xp.sum(xp.real(xp.fft.ifft(spectrum)))


def statistics(xp, x):
    y = xp.reshape(x, (3, 4))
    return (xp.sum(xp.std(y, axis=0)) + xp.median(y) + xp.sum(xp.cumprod(y[0] / 3, axis=0))
            + xp.sum(xp.linalg.norm(y, axis=1)) + xp.var(xp.diff(x)))


def indexing(xp, x):
    mask = np.arange(x.shape[0]) % 3 == 0  # a constant boolean mask, as NumPy code writes it
    picked = x[mask] ** 2
    rows = [0, 2, 2, 5] if xp is np else np.array([0, 2, 2, 5])  # jnp refuses list indices
    fancy = x[rows] * x[1:7:2].sum()
    return xp.sum(picked) + xp.sum(fancy) + xp.sum(xp.take(x, np.array([-1, 3]))) + x[-2] ** 3


def special_functions(xp, x):
    import jax.scipy.special as jss
    import scipy.special as ss

    sp = jss if xp is jnp else ss
    a = xp.exp(x)
    return xp.sum(sp.gammaln(a) + sp.digamma(a + 1) + sp.erf(x) + sp.xlogy(a, a + 1)
                  + sp.expit(x) * sp.logit(1 / (1 + a)))


def linear_algebra(xp, A):
    S = A @ A.T + 4 * xp.eye(A.shape[0])
    L = xp.linalg.cholesky(S)
    sign, logdet = xp.linalg.slogdet(S)
    w, V = xp.linalg.eigh(S)
    x = xp.linalg.solve(S, xp.arange(A.shape[0], dtype=A.dtype))
    return (xp.sum(L ** 2) + sign * logdet + xp.sum(w * V[0] ** 2) + x @ x
            + xp.sum(xp.linalg.inv(S)) + xp.linalg.det(S[:2, :2]))


def decompositions(xp, A):
    U, s, Vt = xp.linalg.svd(A, full_matrices=False)
    Q, R = xp.linalg.qr(A)
    first, second = xp.split(A, 2, axis=0)
    return (xp.sum(s ** 3) + xp.sum(xp.abs(U[:, 0])) * xp.sum(xp.abs(Vt[0]))
            + xp.sum(xp.abs(xp.diag(R)))
            + xp.sum(first * second) + xp.sum(xp.abs(Q[:, 0])))


def concrete_arguments(xp, x):
    """Arguments JAX needs as concrete values (counts, deleted indices, a float norm order)."""
    counts, gone = np.array([1, 0, 2, 1, 3, 1]), np.array([0, 4])
    mode = {} if xp is np else {"mode": "wrap"}  # jitted jnp.choose cannot check bounds
    chosen = xp.choose(np.array([0, 1, 1, 0]), [x[:4], x[2:]], **mode)
    return (xp.sum(xp.repeat(x, counts) ** 2) + xp.sum(xp.delete(x, gone) ** 3)
            + xp.linalg.norm(x, 3.0) + xp.sum(chosen * x[1:5]))


PROGRAMS = {
    concrete_arguments: lambda rng: (rng.normal(size=6),),
    spectral_and_fft: lambda rng: (rng.normal(size=16),),
    statistics: lambda rng: (rng.uniform(0.5, 2, size=12),),
    indexing: lambda rng: (rng.normal(size=9),),
    special_functions: lambda rng: (rng.normal(size=7),),
    linear_algebra: lambda rng: (rng.normal(size=(4, 4)),),
    decompositions: lambda rng: (rng.normal(size=(6, 4)),),
}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_float64_gradient_matches_jax_grad(program):
    args = PROGRAMS[program](np.random.default_rng(7))
    assert_close(rb_grad(program, args), jax_grad(program, args))


# (NumPy's FFT of float32 is complex64, which no adapter takes: not a float32 program here.)
@pytest.mark.parametrize("program", [statistics, linear_algebra, special_functions],
                         ids=lambda p: p.__name__)
def test_float32_program_gets_float32_gradients_at_float32_accuracy(program):
    (x,) = PROGRAMS[program](np.random.default_rng(3))
    g32 = rb_grad(program, (x.astype(np.float32),))
    g64 = rb_grad(program, (x.astype(np.float32).astype(np.float64),))
    assert g32.dtype == np.float32
    error = np.max(np.abs(g32 - g64)) / np.max(np.abs(g64))
    assert error < 1e-4  # float32 rounding amplified by the program, not a float16 or a bug
    assert error > 1e-12  # computed in float32, not silently in float64 and cast


def test_multi_output_op_with_one_output_unused_fills_zeros():
    def only_eigenvalues(xp, A):
        return xp.sum(xp.linalg.eigh(A @ A.T)[0] ** 2)

    def only_logdet(xp, A):
        return xp.linalg.slogdet(A @ A.T + xp.eye(3))[1]

    A = np.random.default_rng(0).normal(size=(3, 3))
    for program in (only_eigenvalues, only_logdet):
        assert_close(rb_grad(program, (A,)), jax_grad(program, (A,)))


def test_multi_output_functions_are_one_op_each():
    A = np.random.default_rng(1).normal(size=(6, 4))
    _, tape = rb.trace(functools.partial(decompositions, np), A, source="jax")
    lines = str(tape).splitlines()
    for name, count in (("svd(", 3), ("qr(", 2), ("split(", 2)):
        (line,) = [ln for ln in lines if f" {name}" in ln]
        assert len(line.split(" = ")[0].split(",")) == count, line
        assert line.endswith("[jax]")


@pytest.mark.parametrize("function", [np.linalg.cholesky, np.linalg.eigvalsh])
def test_one_triangle_factorizations_differentiate_what_numpy_reads(function):
    """NumPy reads only the lower triangle: the gradient is zero above the diagonal, as central
    differences of NumPy's own function say (JAX's default symmetrizes, which would halve it)."""
    rng = np.random.default_rng(2)
    B = rng.normal(size=(4, 4))
    S = B @ B.T + 4 * np.eye(4)
    S[0, 3] = 50.0  # garbage in the upper triangle that NumPy never reads
    weights = rng.normal(size=np.shape(function(S)))

    def loss(A):
        return np.sum(weights * function(A))

    g = rb.grad(loss, source="jax")(S)
    fd = np.zeros_like(S)
    for index in np.ndindex(S.shape):
        step = np.zeros_like(S)
        step[index] = 1e-6
        fd[index] = (loss(S + step) - loss(S - step)) / 2e-6
    assert np.all(np.triu(g, 1) == 0)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


def test_complex_convention_matches_autograd_and_jax():
    def real_of_complex(xp, z):
        w = xp.sin(z) * xp.conj(z) + xp.exp(1j * z)
        return xp.sum(xp.abs(w) ** 2) + xp.sum(xp.real(xp.fft.fft(w)) * xp.imag(z))

    rng = np.random.default_rng(4)
    z = rng.normal(size=5) + 1j * rng.normal(size=5)
    g = rb_grad(real_of_complex, (z,))
    assert g.dtype == np.complex128
    assert_close(g, rb_grad(real_of_complex, (z,), source="autograd"))
    assert_close(g, jax_grad(real_of_complex, (z,)))
    # df/dx - i df/dy, from central differences of NumPy's function
    f = functools.partial(real_of_complex, np)
    e = np.eye(5) * 1e-6
    fd = np.array([(f(z + e[k]) - f(z - e[k])) / 2e-6
                   - 1j * (f(z + 1j * e[k]) - f(z - 1j * e[k])) / 2e-6 for k in range(5)])
    np.testing.assert_allclose(g, fd, rtol=1e-5)


def test_user_jax_configuration_is_left_alone():
    before = jax.config.jax_enable_x64
    x = np.linspace(0.1, 1, 5)
    rb.grad(lambda x: np.sum(np.tanh(x) ** 2), source="jax")(x)
    assert jax.config.jax_enable_x64 == before
    assert jnp.asarray(x).dtype == (np.float64 if before else np.float32)


def test_python_floats_are_inputs_not_new_compilations():
    adapter = rb.REGISTRY.adapter("jax")
    f = rb.grad(lambda x, c: np.sum(np.sum(x * c, axis=0) ** 2), source="jax")
    x = np.random.default_rng(5).normal(size=(3, 2))

    def compiled():
        return {fn: len(p.compiled) for fn, p in adapter._pullbacks.items()}

    f(x, 0.25)
    before = compiled()
    for c in (0.5, 1.5, 2.5):
        np.testing.assert_allclose(f(x, c), 2 * c * c * np.sum(x, axis=0) * np.ones((3, 1)))
    assert compiled() == before


def test_integer_indices_and_integer_operands_do_not_recompile():
    adapter = rb.REGISTRY.adapter("jax")

    def loop(x, n):
        total = x[0] * 0
        for i in range(n):
            total = total + x[i] * i  # a new int index and a new int operand each time
        return total

    def compiled():
        return [len(adapter._pullbacks[f].compiled) for f in (operator.getitem, np.multiply)]

    x = np.linspace(0.5, 1.0, 6)
    rb.grad(loop, source="jax")(x, 2)
    before = compiled()
    np.testing.assert_allclose(rb.grad(loop, source="jax")(x, 6), np.arange(6.0))
    assert compiled() == before


def test_object_arrays_get_the_no_rule_error():
    weights = np.array([1.0, 2.0, 3.0], dtype=object)
    with pytest.raises(rb.NoRuleError, match=r"(?s)numpy\.multiply.*object.*jax"):
        rb.grad(lambda x: np.sum(x * weights), source="jax")(np.ones(3))


def test_signature_without_a_float_argument_is_declined():
    int_sig = rb.signature_of((np.arange(3),))
    with pytest.raises(rb.NoRuleError, match=r"(?s)numpy\.sin\(int64\[:\]\).*jax:.*float"):
        rb.rule_for(np.sin, int_sig, source="jax")


def test_declined_meaning_is_reported_with_its_reason():
    with pytest.raises(rb.NoRuleError, match="phase convention"):
        rb.rule_for(np.linalg.eig, rb.signature_of((np.eye(2),)), source="jax")
    # JAX's sign has a zero derivative; NumPy's complex sign z/|z| does not: no rule, not zeros.
    real_only = re.escape("numpy.sign(float32[...] | float64[...] | float, ...)")
    with pytest.raises(rb.NoRuleError, match=r"(?s)sign\(complex128\[:\]\).*z/\|z\|.*" + real_only):
        rb.grad(lambda z: np.sum(np.abs(np.sign(z) + z)), source="jax")(np.array([1 + 1j]))


def test_coverage_is_introspected_and_broad():
    adapter = rb.REGISTRY.adapter("jax")
    functions = set(adapter.functions())
    assert len(functions) > 250
    for f in (np.sin, np.linalg.eigh, np.fft.rfft, operator.getitem, np.take_along_axis):
        assert f in functions
    import scipy.special as ss

    assert ss.gammaln in functions and ss.airy not in functions  # JAX has no airy
    assert np.argmax not in functions and np.isnan not in functions  # never float-valued
    assert adapter.signatures(np.sin) and not adapter.signatures(np.linalg.eig)


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_clip_bounds_by_keyword_and_a_traced_bound_passed_by_keyword(source):
    x = np.array([0.1, 0.5, 0.9])
    g = rb.grad(lambda x: np.sum(np.clip(x, a_min=0.3, a_max=0.8) ** 2), source=source)(x)
    np.testing.assert_allclose(g, [0.0, 1.0, 0.0])
    if source == "jax":  # autograd defines no VJP with respect to a bound
        g_lo = rb.grad(lambda lo: np.sum(np.clip(x, a_min=lo, a_max=0.8)), source=source)(0.3)
        assert g_lo == 1.0  # one element (0.1) sits at the lower bound


def _printed_by_a_fresh_process(program: str) -> list[str]:
    """What `program` prints, run in a new Python (where the first gradient imports JAX)."""
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True).stdout.split()


def test_loading_the_adapter_leaves_numpys_global_random_stream_alone():
    # JAX's import draws from NumPy's global generator, and rulebridge imports it inside the
    # user's first gradient: the user's seeded stream must not depend on that (a fresh process,
    # so that the gradient is what imports JAX)
    program = (
        "import numpy as np, rulebridge as rb\n"
        "np.random.seed(0); first = np.random.normal(size=2)\n"
        "rb.grad(lambda x: np.sum(np.sin(x)), source='jax')(np.ones(2))\n"
        "import sys; assert 'jax' in sys.modules\n"
        "print(*np.random.normal(size=2), *first)\n")
    out = _printed_by_a_fresh_process(program)
    expected = np.random.RandomState(0).normal(size=4)  # the stream np.random.seed(0) starts
    np.testing.assert_array_equal(np.array(out[2:] + out[:2], dtype=float), expected)


def test_loading_the_adapter_keeps_another_threads_draws_in_order():
    # A thread draws from NumPy's global generator while the user's first gradient imports
    # JAX in the main thread: every value the stream gives is drawn once, by one of the two,
    # in the stream's order (putting the state back after the import drew some of them twice).
    program = (
        "import threading, numpy as np, rulebridge as rb\n"
        "np.random.seed(0); drawn = []; running = threading.Event(); running.set()\n"
        "def draw():\n"
        "    while running.is_set():\n"
        "        drawn.append(np.random.normal())\n"
        "thread = threading.Thread(target=draw); thread.start()\n"
        "while len(drawn) < 10: pass\n"
        "rb.grad(lambda x: np.sum(np.sin(x)), source='jax')(np.ones(2))\n"
        "running.clear(); thread.join()\n"
        "import sys; assert 'jax' in sys.modules\n"
        "print(len(drawn), *drawn, np.random.normal())\n")
    out = _printed_by_a_fresh_process(program)
    n = int(out[0])
    assert n > 10
    expected = np.random.RandomState(0).normal(size=n + 1)
    np.testing.assert_array_equal(np.array(out[1:], dtype=float), expected)

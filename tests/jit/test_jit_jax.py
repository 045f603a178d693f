"""rulebridge.jit with the JAX back end (adapters/jax/rulebridge_jax/staging.py): every replay is
the eager call's result to 1e-12 relative in float64, computed by the jax-jitted program (each
test checks the staged function answered), or the function is traced again, or refused.
References: the eager transformation itself, checked elsewhere against finite differences and
JAX; and jax.grad of the same program in jax.numpy for the JAX function handed out."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.special

import rulebridge as rb
from rulebridge.tree import tree_flatten

from tests.support.jit_programs import Backend, cases, chain, inputs, staged_calls  # noqa: F401

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from rulebridge_jax.exported import jax_function  # noqa: E402

RTOL = 1e-12


def assert_close(a, b):
    """Same structure, types, shapes and dtypes; values within RTOL of the largest entry."""
    la, sa = tree_flatten(a)
    lb, sb = tree_flatten(b)
    assert sa == sb
    for x, y in zip(la, lb):
        assert type(x) is type(y), (type(x), type(y))
        if isinstance(x, (np.ndarray, np.generic, float)):
            assert np.shape(x) == np.shape(y) and np.result_type(x) == np.result_type(y)
            scale = max(np.max(np.abs(y), initial=0.0), 1e-300)
            assert np.max(np.abs(np.asarray(x) - y), initial=0.0) <= RTOL * scale, (x, y)
        else:
            assert x == y


JAX = Backend("jax", assert_close)


@pytest.mark.parametrize("program, source", cases([None]))
def test_the_shared_programs_are_staged_as_the_eager_call(program, source):
    program(JAX, source)  # tests/support/jit_programs.py; tests/jit/test_jit.py runs them with NumPy


def test_ops_without_a_counterpart_call_back_to_numpy_with_their_rule():
    """np.partition (JAX's orders ties otherwise: the catalog declines it) and an imported
    SciPy function run on the host with their rulebridge rules as the VJP; under jax.vmap too."""
    logsumexp = rb.import_rule(scipy.special.logsumexp, "autograd")

    def f(x):
        return np.sum(np.partition(x, 1) ** 2 * np.arange(1.0, 4.0)) + logsumexp(np.sin(x))

    g = rb.jit(rb.value_and_grad(f, source="autograd"), backend="jax")
    for x in inputs(4, seed=6, shape=(3,)):
        assert_close(g(x), rb.value_and_grad(f, source="autograd")(x))
    assert staged_calls(g) == 3
    xs = np.random.default_rng(7).normal(size=(5, 3))
    with jax.enable_x64(True):
        value, grads = jax.vmap(jax_function(g, xs[0]))(xs)
    for k in range(5):
        assert_close((np.asarray(value[k])[()], np.asarray(grads[k])),
                     rb.value_and_grad(f, source="autograd")(xs[k]))


def test_a_decision_on_an_index_op_is_numpys_own():
    """argpartition's answer (its order of ties is NumPy's) is computed by NumPy on the host;
    the hessian's program holds partition's gradient ops, called back too."""
    def f(x):
        return np.sum(np.partition(x, 1) ** 3)

    h = rb.jit(rb.hessian(f, source="autograd"), backend="jax")
    for x in (np.array([3.0, 1.0, 2.0]), np.array([3.5, 1.2, 2.1]), np.array([2.9, 0.8, 2.2]),
              np.array([1.0, 2.5, 0.5])):  # the last in another order: another program
        assert_close(h(x), rb.hessian(f, source="autograd")(x))
    assert staged_calls(h) == 3 and h.n_variants == 2  # two replays, one guard that failed


def test_the_jax_function_vmaps_over_1000_parameter_sets():
    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    def loss_jnp(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3))
    step = rb.jit(rb.grad(loss), backend="jax")
    g = jax_function(step, rng.normal(size=3), x)
    ws = rng.normal(size=(1000, 3))
    with jax.enable_x64(True):
        got = np.asarray(jax.vmap(g, in_axes=(0, None))(ws, x))
        want = np.asarray(jax.vmap(jax.grad(loss_jnp), in_axes=(0, None))(ws, x))
    assert got.shape == (1000, 3) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * np.max(np.abs(want)))
    for k in (0, 999):
        assert_close(got[k], rb.grad(loss)(ws[k], x))


def test_the_jax_function_guards_value_decisions_and_refuses_32_bit_inputs():
    def f(x):
        return np.sum(np.sin(x)) if np.sum(x) > 0 else np.sum(x)

    guarded = jax_function(rb.jit(rb.grad(f), backend="jax"), np.ones(3))
    with jax.enable_x64(True):  # (tests/jit/test_jit_jax_function.py: more of it)
        with pytest.raises(Exception, match="JitError: .* took decision 0"):
            jax.block_until_ready(guarded(-jnp.ones(3)))
    g = jax_function(rb.jit(rb.grad(chain), backend="jax"), np.ones(3))
    with jax.enable_x64(False):
        with pytest.raises(rb.UsageError, match="jax_enable_x64"):
            g(jnp.ones(3, dtype=jnp.float32))


@pytest.mark.slow
def test_a_run_over_two_cpu_devices():
    code = textwrap.dedent("""
        import numpy as np, jax, rulebridge as rb
        jax.config.update("jax_enable_x64", True)
        from rulebridge_jax.exported import jax_function
        assert len(jax.devices()) == 2, jax.devices()
        loss = lambda w, x: np.sum(np.tanh(x @ w) ** 2)
        rng = np.random.default_rng(0)
        x, ws = rng.normal(size=(4, 3)), rng.normal(size=(8, 3))
        g = jax_function(rb.jit(rb.grad(loss), backend="jax"), ws[0], x)
        mesh = jax.sharding.Mesh(np.array(jax.devices()), ("d",))
        spec = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
        sharded = jax.device_put(ws, spec)
        out = jax.jit(jax.vmap(g, in_axes=(0, None)))(sharded, x)
        assert len(out.sharding.device_set) == 2, out.sharding
        for k in range(8):
            want = rb.grad(loss)(ws[k], x)
            assert np.max(np.abs(np.asarray(out[k]) - want)) <= 1e-12 * np.max(np.abs(want))
        print("ok")
    """)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr


def test_the_back_end_is_installed_when_it_is_asked_for():
    """The core never imports JAX: naming the back end loads the installed adapter of that
    name, which installs it."""
    code = textwrap.dedent("""
        import sys, numpy as np, rulebridge as rb
        assert "jax" not in sys.modules
        g = rb.jit(rb.grad(lambda x: np.sum(np.sin(x))), backend="jax")
        for x in (np.ones(3), np.full(3, 2.0), np.full(3, 3.0)):
            assert np.allclose(g(x), np.cos(x), rtol=1e-12, atol=0)
        variant = g.variants[next(iter(g.variants))][0]
        assert variant.staged.program.calls == 2
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, JAX_PLATFORMS="cpu"))
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout + run.stderr


def test_float32_programs_and_a_constant_result():
    """float32 stays float32 (XLA's float32 kernels are within a few ulps of NumPy's, far from
    the differences a random draw makes); a result no op computed has a zero gradient."""
    def f(x):
        return np.sum(np.sin(x) ** 3)

    g = rb.jit(rb.grad(f), backend="jax")
    for k in (1, 2, 3):
        x = (np.linspace(0.1, 1, 5) * k).astype(np.float32)
        got, want = g(x), rb.grad(f)(x)
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert staged_calls(g) == 2
    c = rb.jit(rb.grad(lambda x: 1.0), backend="jax")
    for _ in range(3):
        assert_close(c(np.ones(2)), rb.grad(lambda x: 1.0)(np.ones(2)))


"""Forward over reverse: `rulebridge.jvp` of `rulebridge.grad(f)` is a Hessian-vector product,
the forward sweep pushing the tangent through the inner sweep's recorded pullbacks. Reference:
JAX's `jvp` of its `grad` of the same program in jax.numpy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

jax.config.update("jax_enable_x64", True)

rng = np.random.default_rng(31)
W = rng.normal(size=(4, 3))
x0 = np.array([0.4, -0.7, 1.1])
v0 = rng.normal(size=3)

PROGRAMS = {
    "sin cubed": lambda xp, x: xp.sum(xp.sin(x) ** 3),
    "tanh layer": lambda xp, x: xp.sum(xp.tanh(W @ x) ** 2),
    "where branch": lambda xp, x: xp.sum(xp.where(x > 0, x ** 3, xp.exp(x))),
}


@pytest.mark.parametrize("source", [None, "autograd"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jvp_of_grad_is_jaxs_hessian_vector_product(name, source):
    program = PROGRAMS[name]
    g, hv = rb.jvp(rb.grad(lambda x: program(np, x), source=source), (x0,), (v0,),
                   source=source)
    g_ref, hv_ref = jax.jvp(jax.grad(lambda x: program(jnp, x)), (x0,), (v0,))
    np.testing.assert_allclose(g, np.asarray(g_ref), rtol=1e-8)
    np.testing.assert_allclose(hv, np.asarray(hv_ref), rtol=1e-8)
    np.testing.assert_allclose(hv, rb.hvp(lambda x: program(np, x), source=source)(x0, v0),
                               rtol=1e-8)


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_index_reads_push_forward_exactly_without_transposing(source, monkeypatch):
    # the engine's functional cotangent of an index read (untake) is linear: its pushforward
    # is untake of the tangent, so forward over reverse never transposes it entry by entry
    # (which cost one pullback call per entry: forward over reverse at 21x a gradient)
    from rulebridge.forward import sweep

    def indexing(xp, x):
        return xp.sum(x[1:] ** 2 * x[:-1]) + xp.sum(x[xp.array([0, 2, 2])] ** 3)

    transposed = []
    real = sweep.transposed
    monkeypatch.setattr(sweep, "transposed",
                        lambda rule, *a, **k: transposed.append(rule.name) or real(rule, *a, **k))
    _, hv = rb.jvp(rb.grad(lambda x: indexing(np, x), source=source), (x0,), (v0,),
                   source=source)
    want = jax.jvp(jax.grad(lambda x: indexing(jnp, x)), (x0,), (v0,))[1]
    np.testing.assert_allclose(hv, np.asarray(want), rtol=1e-10)
    assert "rulebridge.untake" not in transposed, transposed

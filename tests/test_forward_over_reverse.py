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

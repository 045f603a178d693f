"""benchmarks/hvp.py times equal work: every contestant's Hessian-vector product of the
200-parameter network loss equals central differences of its gradient (the timings are in the
benchmark, not here)."""

import numpy as np

import rulebridge as rb

from benchmarks import hvp


def test_the_program_has_200_parameters_and_every_contestant_agrees():
    assert hvp.P0.size == hvp.N_PARAMS == 200
    hvp.check(["autograd", "jax", None])  # raises where one differs


def test_jax_reference_is_the_same_program():
    import jax
    import jax.numpy as jnp

    with jax.enable_x64(True):
        want = jax.jvp(jax.grad(lambda p: hvp.loss(jnp, p)), (hvp.P0,), (hvp.V,))[1]
    np.testing.assert_allclose(rb.hvp(hvp.f, source="jax")(hvp.P0, hvp.V), want, rtol=1e-10,
                               atol=1e-12)

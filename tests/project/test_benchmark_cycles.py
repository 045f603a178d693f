"""benchmarks/cycles_sources.py measures one program three ways: its autograd and JAX spellings
have the gradient rulebridge's has of cycles.py's `traced` (the peaks are in the benchmark, not
here), against central differences of the plain NumPy program."""

import numpy as np

import rulebridge as rb
from benchmarks.cycles import X
from benchmarks.cycles import traced_in
from tests.support.numerical import central_difference


def test_every_reverse_mode_differentiates_the_same_program():
    import autograd
    import autograd.numpy as anp
    import jax
    import jax.numpy as jnp

    expected = central_difference(traced_in(np, 4), (X,))
    np.testing.assert_allclose(rb.grad(traced_in(np, 4))(X), expected, rtol=1e-7)
    np.testing.assert_allclose(autograd.grad(traced_in(anp, 4))(X), expected, rtol=1e-7)
    with jax.enable_x64(True):
        np.testing.assert_allclose(jax.grad(traced_in(jnp, 4))(X), expected, rtol=1e-7)

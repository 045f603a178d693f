"""A cotangent handed to a pullback that does not fit its output is refused, never cast into a
silently different one (issue 22, section 6): jax.vjp's rules, checked against jax.vjp itself."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

jax.config.update("jax_enable_x64", True)

X = np.array([0.3, 0.7])


def test_a_complex_cotangent_for_a_real_output_raises_as_in_jax():
    _, jax_pullback = jax.vjp(jnp.sin, jnp.asarray(X))
    with pytest.raises(ValueError, match="unexpected JAX type"):
        jax_pullback(jnp.array([1 + 1j, 1j]))
    _, pullback = rb.vjp(np.sin, X)
    with pytest.raises(TypeError, match=r"the cotangent ybar given to the pullback of sin is "
                                        r"complex128, but that output is float64: pass ybar.real"):
        pullback(np.array([1 + 1j, 1j]))


def test_in_a_container_the_message_names_the_leaf():
    _, pullback = rb.vjp(lambda x: {"s": np.sin(x), "c": np.cos(x)}, X)
    with pytest.raises(TypeError, match=r"ybar\['c'\] .* is complex128"):
        pullback({"s": np.ones(2), "c": np.ones(2) * 1j})


@pytest.mark.parametrize("bad", [np.array([True, False]), np.array([None, None]),
                                 np.array(["a", "b"])], ids=["bool", "object", "str"])
def test_what_is_not_a_number_is_not_a_cotangent(bad):
    _, pullback = rb.vjp(np.sin, X)
    with pytest.raises(TypeError, match="is not one|not be a cotangent|make a number"):
        pullback(bad)


def test_cotangents_that_fit_still_work_and_match_jax():
    # A real cotangent of a complex output, an int cotangent of a real one, float64 for float32.
    _, pullback = rb.vjp(lambda x: np.sin(x) * (1 + 2j), X)
    _, jax_pullback = jax.vjp(lambda x: jnp.sin(x) * (1 + 2j), jnp.asarray(X))
    ybar = np.array([0.5, -1.5]) + 0j
    np.testing.assert_allclose(pullback(ybar.real)[0], jax_pullback(ybar)[0], rtol=1e-14)
    _, pullback = rb.vjp(np.sin, X)
    np.testing.assert_allclose(pullback(np.array([2, 3]))[0], np.cos(X) * [2, 3], rtol=1e-15)
    _, pullback = rb.vjp(np.sin, X.astype(np.float32))
    (g,) = pullback(np.ones(2))
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, np.cos(X), rtol=1e-6)

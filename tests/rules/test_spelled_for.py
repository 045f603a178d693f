"""Calls spelled for a source's own function: the call key moves keywords to the positions the
NumPy or SciPy function declares, and a source's function may take that parameter by keyword only
(JAX's `softmax(x, /, *, axis=None)`); `rulebridge.spelled_for` spells the call for it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest
import scipy.special

import rulebridge as rb
import rulebridge.scipy.special as rspecial

from tests.support.numerical import central_difference

A = np.random.default_rng(5).normal(size=(3, 4))
WEIGHTS = np.arange(12.0).reshape(3, 4)


def test_a_positional_argument_the_target_takes_by_keyword_only_is_named():
    args, kwargs = rb.spelled_for(jsp.softmax, scipy.special.softmax, (A, 0), {})
    assert len(args) == 1 and args[0] is A and kwargs == {"axis": 0}
    args, kwargs = rb.spelled_for(jsp.logsumexp, scipy.special.logsumexp, (A, 1), {"b": A})
    assert len(args) == 2 and kwargs == {"b": A}  # logsumexp takes axis by position: unchanged


def test_a_call_the_target_takes_as_spelled_is_the_same_objects():
    args, kwargs = (A, 1), {"keepdims": True}
    assert rb.spelled_for(jnp.sum, np.sum, args, kwargs) == (args, kwargs)
    spelled = rb.spelled_for(jnp.sum, np.sum, args, kwargs)
    assert spelled[0] is args and spelled[1] is kwargs


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("spelling", ["keyword", "position"])
@pytest.mark.parametrize("source", ["jax", None])
def test_softmax_over_an_axis(name, spelling, source):
    ours, theirs = getattr(rspecial, name), getattr(jsp, name)

    def f(a):
        out = ours(a, axis=1) if spelling == "keyword" else ours(a, 1)
        return np.sum(out * WEIGHTS)

    def f_jax(a):
        return jnp.sum(theirs(a, axis=1) * WEIGHTS)

    got = rb.grad(f, source=source)(A.copy())
    with jax.enable_x64(True):
        expected = np.asarray(jax.grad(f_jax)(jnp.asarray(A)))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, central_difference(f, (A.copy(),)), rtol=1e-6, atol=1e-8)

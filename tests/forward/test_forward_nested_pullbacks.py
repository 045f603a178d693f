"""Forward over forward (a jvp of a jvp) through ops whose tangent is read off their pullback,
where that pullback is not NumPy code rulebridge records on the enclosing level's boxes:
autograd's composites that build arrays with `np.array` (`np.stack`, `np.array` of a list of
traced values, `np.max` of one), JAX's jitted pullbacks (`logsumexp`). The transposition falls
back as the reverse sweep does, to the pullback offered as a rule of its own
(rulebridge/forward/transpose.py `PullbackRaised`). Found by autograd's order-2 forward
`check_grads` under the drop-in swap. Reference: jax.jvp of jax.jvp of the same program."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.scipy import special

jax = pytest.importorskip("jax")
jnp = jax.numpy
jspecial = pytest.importorskip("jax.scipy.special")

X = np.array([0.3, -0.7, 1.1])
V = np.array([1.0, 0.5, -0.3])
W = np.array([-0.2, 0.9, 0.4])


def _programs(n, lse):
    return {
        "stack": lambda x: n.sum(n.stack([x, x ** 2]) ** 3),
        "array of items": lambda x: n.sum(n.array([x[0], x[1] ** 2, x[2] * x[0]]) ** 3),
        "max of an array": lambda x: n.max(n.array([x ** 2, 2 * x])),
        "logsumexp": lambda x: lse(n.stack([x, x ** 2 * 0.5])) ** 2,
    }


NUMPY = _programs(np, special.logsumexp)
JAX = _programs(jnp, jspecial.logsumexp)


def _second_directional(f, source):
    return rb.jvp(lambda y: rb.jvp(f, (y,), (V,), source=source)[1], (X,), (W,),
                  source=source)[1]


@pytest.mark.parametrize("name", list(NUMPY))
@pytest.mark.parametrize("source", ["autograd", None])
def test_forward_over_forward_reads_the_tangent_off_a_pullback_offered_as_a_rule(name, source):
    if name == "logsumexp" and source == "autograd":
        pytest.skip("autograd's logsumexp has a pushforward of its own")
    with jax.enable_x64(True):
        reference = jax.jvp(lambda y: jax.jvp(JAX[name], (y,), (jnp.asarray(V),))[1],
                            (jnp.asarray(X),), (jnp.asarray(W),))[1]
    np.testing.assert_allclose(_second_directional(NUMPY[name], source), np.asarray(reference),
                               rtol=1e-9, atol=1e-12)


def test_reverse_over_forward_through_stack():
    """grad of a jvp: the inner tangent read off autograd's stack pullback on the outer
    level's boxes."""
    f = NUMPY["stack"]

    def directional(x):
        return rb.jvp(f, (x,), (V,), source="autograd")[1]

    with jax.enable_x64(True):
        reference = jax.grad(lambda y: jax.jvp(JAX["stack"], (y,), (jnp.asarray(V),))[1])(
            jnp.asarray(X))
    np.testing.assert_allclose(rb.grad(directional, source="autograd")(X), np.asarray(reference),
                               rtol=1e-9, atol=1e-12)

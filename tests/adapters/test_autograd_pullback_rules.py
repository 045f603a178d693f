"""autograd's pullbacks that are not NumPy code rulebridge records, differentiated again through
the rule they offer (adapters/autograd/rulebridge_autograd/again.py): its VJPs that call SciPy
(scipy.stats), and composites whose backward pass adds autograd's sparse cotangents in place
(`concatenate`, `vstack`, `hstack`, `prod`). Found by autograd's own order-2 `check_grads` under
the drop-in swap (docs/autograd-compat.md). References: jax.hessian of the same program in
jax.numpy, and central differences of NumPy's function for the third order."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.scipy import stats

jax = pytest.importorskip("jax")
jnp = jax.numpy
jstats = pytest.importorskip("jax.scipy.stats")

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 3))
B = RNG.standard_normal((3, 3))
X = np.array([0.3, 0.5, -0.2])
LOC = np.array([0.1, 0.0, 0.2])
SCALE = np.array([1.0, 2.0, 0.5])


def _programs(n):
    return {
        "concatenate": (lambda a: n.sum(n.concatenate((a, B)) ** 3), A),
        "vstack": (lambda a: n.sum(n.vstack([a, B, a]) ** 3), A),
        "hstack": (lambda a: n.sum(n.hstack([a, 2.0 * a]) ** 3), A),
        "prod": (lambda a: n.prod(a), A),
        "prod axis": (lambda a: n.sum(n.prod(a, axis=0) ** 2), A),
    }


@pytest.mark.parametrize("name", list(_programs(np)))
@pytest.mark.parametrize("source", ["autograd", None])
def test_hessian_of_composites_with_sparse_cotangents(name, source):
    f, x = _programs(np)[name]
    with jax.enable_x64(True):
        reference = jax.hessian(_programs(jnp)[name][0])(jnp.asarray(x))
    np.testing.assert_allclose(rb.hessian(f, source=source)(x), np.asarray(reference),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", ["pdf", "cdf", "sf", "logpdf", "logcdf", "logsf"])
@pytest.mark.parametrize("source", ["autograd", None])
def test_hessian_of_norm_through_scipy_calls_in_its_vjps(method, source):
    def f(x):
        return np.sum(getattr(stats.norm, method)(x, LOC, SCALE) ** 2)

    with jax.enable_x64(True):
        reference = jax.hessian(lambda x: jnp.sum(
            getattr(jstats.norm, method)(x, LOC, SCALE) ** 2))(jnp.asarray(X))
    np.testing.assert_allclose(rb.hessian(f, source=source)(X), np.asarray(reference),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dist, args", [("t", (3.0, 0.1, 1.5)), ("gamma", (2.5,)),
                                        ("beta", (2.0, 3.0))])
def test_hessian_of_other_distributions(dist, args):
    x = np.array([0.2, 0.4, 0.7])

    def f(x):
        return np.sum(getattr(stats, dist).logpdf(x, *(np.full(3, a) for a in args)))

    with jax.enable_x64(True):
        reference = jax.hessian(lambda x: jnp.sum(getattr(jstats, dist).logpdf(
            x, *(jnp.full(3, a) for a in args))))(jnp.asarray(x))
    np.testing.assert_allclose(rb.hessian(f, source="autograd")(x), np.asarray(reference),
                               rtol=1e-9, atol=1e-12)


def test_a_parameter_of_the_inner_gradient_is_the_outer_variable():
    """The inner level differentiates in x; loc is the outer level's box, a constant of the
    inner op whose value the pullback function must take as an input (or its derivative in
    loc would be lost)."""
    def loss(loc):
        inner = rb.grad(lambda x: np.sum(stats.norm.cdf(x, loc, SCALE)), source="autograd")
        return np.sum(inner(X) ** 2)

    def jloss(loc):
        inner = jax.grad(lambda x: jnp.sum(jstats.norm.cdf(x, loc, SCALE)))
        return jnp.sum(inner(jnp.asarray(X)) ** 2)

    with jax.enable_x64(True):
        reference = jax.grad(jloss)(jnp.asarray(LOC))
    np.testing.assert_allclose(rb.grad(loss, source="autograd")(LOC), np.asarray(reference),
                               rtol=1e-9, atol=1e-12)


def test_third_derivative_offers_the_rule_again():
    """d3/dx3 of sum(cdf(x)): the second-order rule's own pullback runs on boxes of a third
    level and offers its rule in turn. Reference: central differences of the exact second
    derivative -x * pdf(x) (scipy.stats.norm, plain NumPy)."""
    import scipy.stats

    def f(x):
        return np.sum(stats.norm.cdf(x, 0.0, 1.0))

    third = rb.grad(lambda x: np.sum(rb.grad(lambda y: np.sum(
        rb.grad(f, source="autograd")(y)), source="autograd")(x)), source="autograd")(X)
    h = 1e-5

    def second(x):
        return -x * scipy.stats.norm.pdf(x)

    np.testing.assert_allclose(third, (second(X + h) - second(X - h)) / (2 * h), rtol=1e-7)


def test_float32_is_refused_or_right():
    """The offered rule is built for float64 and complex128 arguments only: at float32 the
    nested call is refused (or answered by another route), never a wrong number."""
    a = A.astype(np.float32)

    def f(a):
        return np.sum(np.concatenate((a, a)) ** 3)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            h = rb.hessian(f, source="autograd")(a)
    except rb.RulebridgeError:
        return
    with jax.enable_x64(True):
        reference = jax.hessian(lambda a: jnp.sum(jnp.concatenate((a, a)) ** 3))(
            jnp.asarray(A))
    np.testing.assert_allclose(h, np.asarray(reference), rtol=2e-3, atol=1e-4)

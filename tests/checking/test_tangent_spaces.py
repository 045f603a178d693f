"""First-use checks of functions whose arguments live on a manifold take their finite-difference
directions in its tangent space (rulebridge/rules/tangents.py declares which arguments, as data).

`scipy.stats.dirichlet.logpdf(x, alpha)` is defined for x on the simplex only (SciPy raises a
step off it), `multivariate_normal.logpdf(..., allow_singular=True)` for x - mean in the range of
a singular `cov`, and a near-singular `cov` leaves SciPy's positive-definite domain at a step of
1e-3. References: central differences of SciPy's own function along in-domain directions, and
`jax.grad` of the same program written with `jax.scipy` (the gradient the peers return).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.stats

import rulebridge
import rulebridge.scipy.stats as rstats
from rulebridge.rules.tangents import tangent_space

from tests.support.numerical import central_difference

ALPHA = np.array([1.5, 2.0, 1.3, 2.2])
X = np.array([0.1, 0.3, 0.4, 0.2])


def jax_grad(f, *args, argnums=0):
    with jax.enable_x64(True):
        out = jax.grad(f, argnums=argnums)(*args)
    return np.asarray(out) if not isinstance(out, tuple) else tuple(map(np.asarray, out))


def along(f, x, d, h=1e-6):
    """The central difference of f at x along d (each step stays in f's domain)."""
    return (f(x + h * d) - f(x - h * d)) / (2 * h)


@pytest.mark.parametrize("name", ["logpdf", "pdf"])
def test_dirichlet_in_x_is_the_peers_gradient(name):
    got = rulebridge.grad(lambda x: getattr(rstats.dirichlet, name)(x, ALPHA))(X.copy())
    want = jax_grad(lambda x: getattr(jst.dirichlet, name)(x, jnp.asarray(ALPHA)), X)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    # the part a check can see: along directions that stay on the simplex, SciPy's own values
    for d in (np.array([1.0, -1.0, 0.0, 0.0]), np.array([0.3, 0.2, -0.4, -0.1])):
        fd = along(lambda x: getattr(scipy.stats.dirichlet, name)(x, ALPHA), X, d)
        np.testing.assert_allclose(got @ d, fd, rtol=1e-6)


def test_dirichlet_normalised_as_autograd_tests_it():
    def f(x, alpha):
        return rstats.dirichlet.logpdf(x / np.sum(x), alpha)

    got = rulebridge.grad(f)(X * 1.7, ALPHA)
    want = central_difference(lambda x: scipy.stats.dirichlet.logpdf(x / np.sum(x), ALPHA),
                              (X * 1.7,))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_dirichlet_in_both_arguments():
    gx, ga = rulebridge.grad(rstats.dirichlet.logpdf, argnums=(0, 1))(X.copy(), ALPHA.copy())
    jx, ja = jax_grad(jst.dirichlet.logpdf, X, ALPHA, argnums=(0, 1))
    np.testing.assert_allclose(gx, jx, rtol=1e-9)
    np.testing.assert_allclose(ga, ja, rtol=1e-9)


SINGULAR = np.diag([1.0, 1.0, 0.0, 0.0])


@pytest.mark.parametrize("name", ["logpdf", "pdf"])
def test_mvn_allow_singular_as_autograd_tests_it(name):
    def f(x, mean, module):
        x = np.concatenate([x[:2], mean[2:]])
        return getattr(module.multivariate_normal, name)(x, mean, SINGULAR, allow_singular=True)

    x0 = np.array([0.5, -0.3, 0.0, 0.0])
    m0 = np.array([0.2, 0.1, 0.0, 0.0])
    gx, gm = rulebridge.grad(lambda x, m: f(x, m, rstats), argnums=(0, 1))(x0.copy(), m0.copy())
    np.testing.assert_allclose(gx, central_difference(lambda x: f(x, m0, scipy.stats), (x0,)),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gm, central_difference(lambda m: f(x0, m, scipy.stats), (m0,)),
                               rtol=1e-6, atol=1e-9)


def _near_singular(n=5, smallest=1e-7):
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (q * np.geomspace(1.0, smallest, n)) @ q.T


def test_mvn_near_singular_cov_is_the_peers_gradient():
    cov = _near_singular()
    cov = 0.5 * (cov + cov.T)
    x = np.linspace(-0.01, 0.01, 5)
    mean = np.zeros(5)

    def f(c, module, np_):
        return module.multivariate_normal.logpdf(x, mean, 0.5 * (c + np_.swapaxes(c, -1, -2)))

    got = rulebridge.grad(lambda c: f(c, rstats, np))(cov.copy())
    want = jax_grad(lambda c: f(c, jst, jnp), cov)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9 * np.max(np.abs(want)))


def test_the_verdict_says_what_it_verified():
    result = rulebridge.check_rule(rstats.dirichlet.logpdf, X, ALPHA, argnums=(0, 1),
                                   source="autograd")
    assert result.passed, result
    assert "tangent" in result.reason and "simplex" in result.reason


def test_tangent_directions_stay_in_the_domain():
    space = tangent_space(rstats.dirichlet.logpdf, (X, ALPHA), {}, (0,))
    (d,), = [space.project((X, ALPHA), [np.array([1.0, 2.0, 3.0, 4.0])])]
    assert abs(np.sum(d)) < 1e-12
    t = space.room((X, ALPHA), [d])
    assert np.all(X + t * d > 0) and np.all(X - t * d > 0)
    cov = _near_singular()
    space = tangent_space(rstats.multivariate_normal.logpdf, (X[:3], X[:3]),
                          {"cov": cov}, ())
    assert space is None or not space.declarations  # cov passed by keyword is not stepped
    space = tangent_space(rstats.multivariate_normal.logpdf, (np.zeros(5), np.zeros(5), cov),
                          {}, (2,))
    d = np.random.default_rng(0).normal(size=(5, 5))
    t = space.room((np.zeros(5), np.zeros(5), cov), [None, None, d][2:])
    for sign in (1, -1):
        assert np.min(np.linalg.eigvalsh(cov + sign * t * d)) > 0


def test_a_full_rank_covariance_is_checked_in_every_direction():
    """Only the steps are kept inside there: the verdict claims nothing less than usual."""
    cov = _near_singular(3, 1e-3)
    result = rulebridge.check_rule(rstats.multivariate_normal.logpdf, X[:3], X[:3] * 0, cov,
                                   source="autograd")
    assert result.passed and result.reason == "", result


def test_lookup_says_what_checks_there_verify():
    found = rulebridge.lookup(rstats.dirichlet.logpdf, X, ALPHA)
    assert any("simplex" in c and "multiple of ones" in c for c in found.caveats), found
    found = rulebridge.lookup(rstats.multivariate_normal.logpdf, X[:2], X[:2], np.eye(2),
                              allow_singular=True)
    assert any("positive definite" in c for c in found.caveats), found


def test_second_order_in_x_keeps_the_pullbacks_check_on_the_simplex():
    """autograd's suite checks to second order: the check of autograd's pullback offered as a
    rule steps the pullback's x input, which is dirichlet's x (adapters/autograd again.py)."""
    def f(x, stats, np_):
        return stats.dirichlet.logpdf(x / np_.sum(x), ALPHA)

    got = rulebridge.hessian(lambda x: f(x, rstats, np), source="autograd")(X * 1.7)
    with jax.enable_x64(True):
        want = np.asarray(jax.hessian(lambda x: f(x, jst, jnp))(X * 1.7))
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8)


def test_second_order_with_a_singular_cov():
    def f(x, module):
        x = np.concatenate([x[:2], np.zeros(2)])
        return module.multivariate_normal.pdf(x, np.zeros(4), SINGULAR, allow_singular=True)

    x0 = np.array([0.5, -0.3, 0.0, 0.0])
    got = rulebridge.hessian(lambda x: f(x, rstats), source="autograd")(x0.copy())
    def gradient(x):
        return central_difference(lambda y: f(y, scipy.stats), (x,), h=1e-5)

    want = np.stack([(gradient(x0 + 1e-4 * e) - gradient(x0 - 1e-4 * e)) / 2e-4
                     for e in np.eye(4)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def _kernel(xp, lengthscale, points):
    d = points[:, None] - points[None, :]
    return xp.exp(-0.5 * d ** 2 / lengthscale ** 2) + 1e-6 * xp.eye(points.shape[0])


def test_a_nearly_singular_covariance_fails_no_rule():
    """At a kernel matrix with eigenvalue 1e-6 (condition 6e6) the steps that stay positive
    definite are so small that rounding in SciPy's logpdf moved central differences 1.4e-6 from
    the rule JAX and autograd agree on: that call decides nothing (refused, or answered by a rule
    a pass verified), and the key is not failed for the well-conditioned calls after it."""
    rng = np.random.default_rng(9)
    points, y = np.sort(rng.uniform(0, 3, 16)), rng.normal(size=16)

    def lml(xp, mvn):
        return lambda s: mvn.logpdf(y, xp.zeros(16), _kernel(xp, s, points))

    f = rulebridge.grad(lml(np, rstats.multivariate_normal), source="jax")
    with jax.enable_x64(True):
        reference = jax.grad(lml(jnp, jst.multivariate_normal))
        want = [float(reference(jnp.float64(s))) for s in (0.3, 0.05)]
    try:
        np.testing.assert_allclose(f(0.3), want[0], rtol=1e-6)  # verified earlier in the run
    except rulebridge.UnverifiedRuleError as refusal:
        assert "could not be checked" in str(refusal)
    np.testing.assert_allclose(f(0.05), want[1], rtol=1e-9)  # condition about 1e0: checked

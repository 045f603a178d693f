"""A verdict holds only where it was checked (issue 22, section 3).

An imported rule's verification is kept per value of each untraced float argument (a
hyperparameter, a constant array), unless the user declares it continuous; a NumPy function's
rule whose correctness depends on a regime of its input (`pinv` where `rcond` cuts a singular
value) is keyed by that regime. References: central differences of the function itself.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

import rulebridge as rb

from tests.support.numerical import central_difference

RNG = np.random.default_rng(3)


def test_an_equivalent_right_only_at_one_hyperparameter_is_refused_at_another():
    scaled = rb.import_rule(lambda v, a: np.sin(v) * a, "jax",
                            equivalent=lambda v, a: jnp.sin(v) * a ** 2)
    x = np.array([0.3, 0.7])
    g = rb.grad(lambda v: np.sum(scaled(v, 1.0)))(x)  # a = 1: a ** 2 == a, nothing to see
    np.testing.assert_allclose(g, np.cos(x), rtol=1e-12)
    with pytest.raises(rb.ImportRuleError, match="not an equivalent"):
        rb.grad(lambda v: np.sum(scaled(v, 3.0)))(x)  # 3x the true gradient on main


def test_a_constant_array_is_part_of_what_the_verdict_holds_for():
    masked = rb.import_rule(lambda v, w: np.sum(np.sin(v) * w), "jax",
                            equivalent=lambda v, w: jnp.sum(jnp.sin(v) * jnp.abs(w)))
    x = np.array([0.3, 0.7, 1.1])
    positive = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(rb.grad(lambda v: masked(v, positive))(x), np.cos(x) * positive)
    with pytest.raises(rb.ImportRuleError, match="not an equivalent"):
        rb.grad(lambda v: masked(v, -positive))(x)


def test_a_hyperparameter_declared_continuous_is_checked_once():
    scaled = rb.import_rule(lambda v, a: np.sin(v) * a, "jax",
                            equivalent=lambda v, a: jnp.sin(v) * a, continuous=("a",))
    x = np.array([0.3, 0.7])
    imported = rb.REGISTRY._imports[scaled.__rulebridge_imported__]["jax"]
    for a in np.linspace(0.5, 2.0, 20):
        np.testing.assert_allclose(rb.grad(lambda v: np.sum(scaled(v, a)))(x), np.cos(x) * a)
    assert len(imported.verified) == 1


def test_the_verdicts_kept_per_value_are_bounded():
    from rulebridge.checking.constants import KEPT

    scaled = rb.import_rule(lambda v, a: np.sin(v) * a, "autograd",
                            equivalent=__import__("autograd.numpy").numpy.sin)
    imported = rb.REGISTRY._imports[scaled.__rulebridge_imported__]["autograd"]
    imported.verified.kept = 4  # (KEPT itself in real use)
    assert KEPT >= 64
    for k in range(10):
        imported.verified.add(("key", k))
    assert len(imported.verified) == 4 and ("key", 9) in imported.verified
    assert ("key", 0) not in imported.verified


def test_geom_pmf_checked_at_an_integer_k_is_not_trusted_at_a_fractional_one():
    import rulebridge.scipy.stats as stats

    p = 0.3
    g = rb.grad(lambda q: stats.geom.pmf(3.0, q))(p)
    assert g == pytest.approx(central_difference(lambda q: scipy.stats.geom.pmf(3.0, q), (p,)),
                              rel=1e-6)
    reference = central_difference(lambda q: scipy.stats.geom.pmf(1.5, q), (p,))  # 0: SciPy
    try:
        g = rb.grad(lambda q: stats.geom.pmf(1.5, q))(p)
    except rb.RulebridgeError:
        return  # refused: right
    assert g == pytest.approx(reference, abs=1e-9)


def test_pinv_where_rcond_cuts_a_singular_value_is_not_the_key_checked_without_a_cut():
    u, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
    v, _ = np.linalg.qr(RNG.normal(size=(3, 3)))
    cut = u @ np.diag([2.0, 1.0, 0.05]) @ v.T
    full = RNG.normal(size=(3, 3)) + 3.0 * np.eye(3)
    weights = RNG.normal(size=(3, 3))

    def f(a):
        return np.sum(np.linalg.pinv(a, rcond=0.1) * weights)

    np.testing.assert_allclose(rb.grad(f)(full), central_difference(f, (full,)), rtol=1e-6,
                               atol=1e-8)
    try:
        g = rb.grad(f)(cut)
    except rb.RulebridgeError:
        return  # refused: right (1.9% off on main)
    np.testing.assert_allclose(g, central_difference(f, (cut,)), rtol=1e-6, atol=1e-8)


def test_a_failure_at_one_value_of_a_constant_does_not_fail_the_others():
    # right in value everywhere, wrong in gradient where a > 2: refused there, used elsewhere
    import jax

    @jax.custom_vjp
    def scaled(v, a):
        return jnp.sin(v) * a

    scaled.defvjp(lambda v, a: (scaled(v, a), (v, a)),
                  lambda res, g: (g * jnp.cos(res[0]) * jnp.where(res[1] > 2.0, -res[1], res[1]),
                                  None))
    imported = rb.import_rule(lambda v, a: np.sin(v) * a, "jax", equivalent=scaled)
    x = np.array([0.3, 0.7])
    with pytest.raises(rb.ImportRuleError, match="disagrees"):
        rb.grad(lambda v: np.sum(imported(v, 3.0)))(x)
    np.testing.assert_allclose(rb.grad(lambda v: np.sum(imported(v, 1.5)))(x), 1.5 * np.cos(x))

"""The check at first use differentiates what the call differentiates: the arguments that are
traced are perturbed, the others are constants at their values.

The adversarial rules here are right in their first argument and wrong in their second. A check
that perturbed every float argument would refuse them where only the first is traced (and
could not be decided at all where a constant sits on the edge of its domain, as a point of the
simplex for dirichlet); one that ignored the arguments' roles would use them where the second
is traced. Each case has its own key (its arrays' ndim), so no verdict from another test is reused.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

import rulebridge as rb
from rulebridge import Declined, Rule

from tests.support.numerical import central_difference
from tests.support.paths import ROOT

RNG = np.random.default_rng(23)


class WrongInSecond(rb.Adapter):
    """np.multiply(x, p) with d/dx right and d/dp of the wrong sign."""

    name = "wrong-in-second"

    def functions(self):
        return [np.multiply]

    def build_rule(self, function, signature):
        if function is not np.multiply:
            raise Declined("this test adapter only has multiply")

        def forward(args, kwargs):
            return np.multiply(*args), args

        def pullback(args, g, argnums):
            x, p = args
            cts = {0: g * p, 1: -g * x}
            return tuple(np.sum(cts[i], axis=tuple(range(cts[i].ndim - np.ndim(args[i]))))
                         .reshape(np.shape(args[i])) for i in argnums)

        return Rule(np.multiply, signature, forward, pullback, source=self.name)


@pytest.fixture
def wrong():
    rb.register_adapter(WrongInSecond())
    yield WrongInSecond.name
    rb.REGISTRY.unregister(WrongInSecond.name)


def _vjp_in(f, argument, wrong):
    out, pullback = rb.vjp(f, argument, source=wrong)
    (cotangent,) = pullback(np.ones_like(out))
    return cotangent


def test_a_rule_right_in_the_traced_argument_is_used(wrong):
    x, p = RNG.normal(size=5), RNG.normal(size=5)
    g = _vjp_in(lambda x: np.multiply(x, p), x, wrong)
    np.testing.assert_allclose(g, central_difference(lambda x: np.sum(x * p), (x,)),
                               rtol=1e-7, atol=1e-9)


def test_the_same_rule_is_refused_where_the_wrong_argument_is_traced(wrong):
    x, p = RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2))
    with pytest.raises(rb.UnverifiedRuleError, match="traced in argument 1"):
        _vjp_in(lambda p: np.multiply(x, p), p, wrong)
    # a refusal in p alone says nothing of x: a call traced in x alone still uses it
    np.testing.assert_array_equal(_vjp_in(lambda x: np.multiply(x, p), x, wrong), p)
    with pytest.raises(rb.UnverifiedRuleError):
        rb.vjp(lambda x, p: np.multiply(x, p), x, p, source=wrong)


def test_a_verdict_in_one_argument_is_not_reused_for_the_other(wrong):
    x, p = RNG.normal(size=(4, 1, 2)), RNG.normal(size=(4, 1, 2))
    _vjp_in(lambda x: np.multiply(x, p), x, wrong)  # passes, traced in x
    for _ in range(2):  # refused each time, never trusted from x's pass
        with pytest.raises(rb.UnverifiedRuleError):
            _vjp_in(lambda p: np.multiply(x, p), p, wrong)


def _product_of_sine(x, p):
    return np.sin(x) * p


def test_an_imported_rule_is_checked_in_the_traced_arguments_only():
    # the same values, but no derivative in p
    imported = rb.import_rule(_product_of_sine, "jax",
                              equivalent=lambda x, p: jnp.sin(x) * jax.lax.stop_gradient(p))
    x, p = RNG.normal(size=4), RNG.normal(size=4)
    g = rb.grad(lambda x: np.sum(imported(x, p)))(x)
    np.testing.assert_allclose(g, np.cos(x) * p, rtol=1e-12)
    with pytest.raises((rb.ImportRuleError, rb.UnverifiedRuleError)):
        rb.grad(lambda p: np.sum(imported(x, p)))(p)


def test_dirichlet_in_alpha_alone_is_checked_and_used():
    # x is a point of the simplex: a check that stepped x off it could not decide
    import rulebridge.scipy.stats as stats

    x, alpha = np.array([0.1, 0.25, 0.3, 0.35]), np.array([1.3, 2.2, 0.8, 3.1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        g = rb.grad(lambda a: stats.dirichlet.logpdf(x, a))(alpha)
    reference = central_difference(lambda a: scipy.stats.dirichlet.logpdf(x, a), (alpha,))
    np.testing.assert_allclose(g, reference, rtol=1e-7, atol=1e-9)


def test_the_matrix_verifies_dirichlet_in_alpha_alone_under_a_key_of_its_own():
    # The catalogue holds x on the simplex constant; the verdict says so, and ships no status
    # for the key as a whole (a call tracing x is checked at its first use).
    import json

    from rulebridge.checking import status

    matrix = json.loads((ROOT / "compat_matrix.json").read_text())
    cells = [c for c in matrix["cells"] if c["function"] == "scipy.stats.dirichlet.logpdf"
             and c["dtype"] == "float64"]
    assert cells and all(c["status"] == "pass" for c in cells)
    assert all(c["key"].endswith("traced in argument 1") for c in cells)
    shipped = status.verified_status(matrix)["jax"]["scipy.stats.dirichlet.logpdf"]
    assert "(float64[:], float64[:])" not in shipped

"""One awkward input does not poison a key (issue 22, section 4).

A first-use check at an input where the derivative does not exist (a square root at 0, a norm
at 0), where finite differences are not finite, or where a rule raises (a shape it does not
handle) cannot decide: that call is refused and the next call's inputs are checked. Only a
conclusive disagreement with finite differences fails a rule at a key for the process. Each test
uses a key (dtype, ndim, settings) that no other test and no shipped status covers, since
verdicts are kept per process.
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

import rulebridge as rb

from tests.support.numerical import central_difference

RNG = np.random.default_rng(22)


def _undecided(call):
    """A call at inputs where the check cannot decide: refused (a rule raised there), or used
    unverified with an UncheckedRuleWarning (finite differences undecided); never a verdict."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except rb.UnverifiedRuleError as exc:
            assert "could not be checked at these inputs" in str(exc) or "jax" in str(exc)
            return
    assert any(issubclass(w.category, rb.UncheckedRuleWarning) for w in caught), caught


def _refused_then_right(f, bad: tuple, good: tuple, argnum: int = 0):
    _undecided(lambda: rb.grad(f, argnums=argnum)(*bad))
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        g = rb.grad(f, argnums=argnum)(*good)
    np.testing.assert_allclose(g, central_difference(f, good, argnum), rtol=1e-6, atol=1e-8)


def test_std_with_ddof_at_a_constant_vector_refuses_that_call_only():
    def f(v):
        return np.std(v, ddof=1)

    # A key no other test uses: one verified earlier in the process is trusted at any input
    shape = (3, 1, 1, 1, 1)
    _refused_then_right(f, (np.ones(shape),), (RNG.normal(size=shape),))


def test_a_norm_at_zero_takes_its_subgradient_and_poisons_nothing():
    def f(v):
        return np.linalg.norm(v, 3.5)

    np.testing.assert_array_equal(rb.grad(f)(np.zeros(4)), np.zeros(4))  # the subgradient 0
    good = (RNG.normal(size=4),)
    np.testing.assert_allclose(rb.grad(f)(*good), central_difference(f, good, 0), rtol=1e-6)


def test_xlogy_at_zero_then_good_inputs_gives_the_right_gradient():
    def f(x, y):
        return np.sum(scipy.special.xlogy(x, y))

    zeros = np.zeros((2, 1, 1, 2))
    for _ in range(3):  # each undecided, none a verdict on the key
        _undecided(lambda: rb.grad(f, argnums=(0, 1))(zeros, zeros))
    x, y = RNG.uniform(0.5, 2.0, (2, 1, 1, 2)), RNG.uniform(0.5, 2.0, (2, 1, 1, 2))
    gx, gy = rb.grad(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.log(y), rtol=1e-12)
    np.testing.assert_allclose(gy, x / y, rtol=1e-12)


def test_lstsq_first_called_on_a_square_system_does_not_block_tall_ones():
    def f(a, b):
        return np.sum(np.linalg.lstsq(a, b)[0] ** 2)

    square = RNG.normal(size=(3, 3)).astype(np.float32), RNG.normal(size=3).astype(np.float32)
    try:  # a square system: refused, or right
        g = rb.grad(f)(*square)
    except rb.UnverifiedRuleError:
        pass
    else:
        reference = central_difference(f, tuple(x.astype(np.float64) for x in square), h=1e-4)
        np.testing.assert_allclose(g, reference, rtol=2e-3, atol=2e-3)
    a, b = RNG.normal(size=(5, 3)).astype(np.float32), RNG.normal(size=5).astype(np.float32)
    g = rb.grad(f)(a, b)
    reference = central_difference(f, (a.astype(np.float64), b.astype(np.float64)), h=1e-4)
    np.testing.assert_allclose(g, reference, rtol=2e-3, atol=2e-3)


def test_an_import_checked_at_a_kink_is_refused_there_and_checked_again():
    imported = rb.import_rule(lambda v: np.abs(v) * 2.0, "jax",
                              equivalent=lambda v: jnp.abs(v) * 2.0)
    with pytest.raises(rb.UnverifiedRuleError, match="could not be checked"):
        rb.grad(lambda v: np.sum(imported(v)))(np.array([0.0, 1.0, -2.0]))
    x = np.array([0.5, 1.0, -2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        g = rb.grad(lambda v: np.sum(imported(v)))(x)
    np.testing.assert_allclose(g, 2.0 * np.sign(x))


def test_a_conclusive_disagreement_still_fails_the_key():
    class Flipped(rb.Adapter):
        name = "flipped-cos"

        def functions(self):
            return [np.cos]

        def build_rule(self, function, signature):
            return rb.Rule(np.cos, signature, rb.CallForward(np.cos),
                           lambda res, g, argnums: (g * np.sin(res[1][0]),), source=self.name)

    rb.register_adapter(Flipped())
    try:
        x = RNG.normal(size=(2, 2, 2, 2, 2))
        with pytest.raises(rb.UnverifiedRuleError, match="flipped-cos: fail"):
            rb.grad(lambda v: np.sum(np.cos(v)), source="flipped-cos")(x)
        with pytest.raises(rb.NoRuleError, match="failed the finite-difference check"):
            rb.grad(lambda v: np.sum(np.cos(v)), source="flipped-cos")(x + 1.0)
    finally:
        rb.REGISTRY.unregister("flipped-cos")

"""The check at first use where its two steps disagree tries a ladder of steps again
(checking/refine.py): along the direction scaled to each element, and now also with every
element stepped by the same absolute amount. A function of differences (logsumexp) at inputs
far from 0 (the log-likelihood at the end of autograd's hmm_em forward recursion, about -370
with a spread of a few units) moved each element by a fraction of 370, where its curvature
makes every such step disagree: the rules were refused as undecided. Reference: the exact
gradient, softmax(x)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.scipy import special

pytest.importorskip("autograd")


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_logsumexp_far_from_zero_is_checked_and_right(source):
    if source == "jax":
        pytest.importorskip("jax")
    rng = np.random.default_rng(5)
    x = -371.0 + 4.0 * rng.standard_normal(12) + 3.0 * np.arange(12) % 7

    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)  # checked, not used unverified
        g = rb.grad(lambda x: special.logsumexp(x), source=source)(x)
    softmax = np.exp(x - x.max()) / np.sum(np.exp(x - x.max()))
    np.testing.assert_allclose(g, softmax, rtol=1e-12, atol=1e-15)


def test_a_wrong_rule_is_not_passed_far_from_zero():
    """The absolute ladder decides only a pass within its own error bound: a pullback off by
    1% (an autograd primitive whose forward is logsumexp's and whose VJP is not) is refused
    there, never used."""
    import scipy.special
    from autograd.extend import defvjp, primitive

    @primitive
    def off(x):
        return scipy.special.logsumexp(x)

    defvjp(off, lambda ans, x: lambda g: 1.01 * g * np.exp(x - ans))

    def mine(x):
        return scipy.special.logsumexp(x)

    imported = rb.import_rule(mine, source="autograd", equivalent=off)
    x = -371.0 + np.linspace(0.0, 5.0, 6)
    with pytest.raises(rb.RulebridgeError):
        rb.grad(lambda x: imported(x))(x)

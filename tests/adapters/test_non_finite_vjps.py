"""A VJP that is not finite for finite cotangents, in both bundled adapters: refused with the
reason the function gives (a repeated eigenvalue, or a pole or the domain's edge), and the test
of finiteness exact where a sum of the cotangents would overflow."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("name, spectral", [("numpy.linalg.eigh", True),
                                            ("pullback of scipy.special.gammaln", False)])
def test_a_non_finite_vjp_is_explained_by_what_the_function_is(name, spectral):
    # The eigenvector explanation is for eig and svd; a pullback whose derivative has a pole
    # (the negative binomial example's third derivative of gammaln) is told about the domain.
    from rulebridge_autograd.adapter import _finite as autograd_finite
    from rulebridge_jax.pullback import _finite as jax_finite

    for refuse in (jax_finite, autograd_finite):
        with pytest.raises(FloatingPointError) as raised:
            refuse((np.array([np.inf, 1.0]),), (np.array([1.0, 2.0]),), name)
        assert ("repeated eigenvalue" in str(raised.value)) == spectral
        assert ("domain" in str(raised.value)) != spectral


def test_finiteness_test_of_jax_cotangents_is_exact():
    # A finite sum proves every element finite; a sum that overflowed must fall back to the
    # elementwise test, not refuse finite cotangents.
    from rulebridge_jax.pullback import _all_finite

    big = np.full(4, 1e308)
    assert _all_finite((big, np.ones(2)))
    assert _all_finite((np.full(3, 3e38, np.float32),))
    assert not _all_finite((np.array([1.0, np.nan]),))
    assert not _all_finite((np.ones(2), np.array([np.inf, -np.inf])))
    assert not _all_finite((np.array([1 + 1j, complex(0, np.nan)]),))
    assert _all_finite((np.array([1e308 + 1e308j] * 3),))
    with np.errstate(all="raise"):  # no overflowing reduction: nothing to warn of or raise
        assert _all_finite((big, np.full(3, -1e308)))

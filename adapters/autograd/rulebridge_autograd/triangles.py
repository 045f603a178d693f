"""autograd's rules for functions that read one triangle of a matrix, in NumPy's meaning.

autograd writes cholesky's VJP for symmetric matrices (its cotangent is symmetrised: half the
true one on each side of the diagonal), eigh's for the triangle its UPLO names, and has none for
cholesky(upper=True) or pinv(hermitian=True). Each pullback here runs autograd's VJP at the
Hermitian matrix NumPy actually reads and converts its cotangent with
`rulebridge.lower_triangle_cotangent`, which is exact for either form of autograd's cotangent.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

import rulebridge


def _conjugate_transpose(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _autograd_call(function: Callable, out, args: tuple, kwargs: dict, g):
    """The call autograd's VJP maker takes for NumPy's call: (out, args, kwargs, g)."""
    if function is np.linalg.cholesky and kwargs.get("upper", False):
        # NumPy returns U = L^H of the matrix read from the upper triangle; autograd's VJP is
        # that of L. The cotangent of a conjugate transpose is the conjugate transpose.
        kwargs = {k: v for k, v in kwargs.items() if k != "upper"}
        return _conjugate_transpose(out), args, kwargs, _conjugate_transpose(g)
    if function is np.linalg.pinv:
        # At a Hermitian matrix the general pseudo-inverse is the Hermitian one, and autograd's
        # VJP (of the general one) takes no `hermitian`.
        kwargs = {k: v for k, v in kwargs.items() if k != "hermitian"}
        return out, args[:2], kwargs, g
    if function is np.linalg.svd:
        raise NotImplementedError(
            "autograd has no VJP of np.linalg.svd(..., hermitian=True): NumPy's singular vectors "
            "there come from eigh, with its signs. Use source='jax', or svd without hermitian.")
    return out, args, kwargs, g


def one_triangle(pullback: Callable, function: Callable) -> Callable:
    """`pullback` (over residuals `(out, args, kwargs)`) giving NumPy's cotangent for calls of
    `function` that read one triangle, and unchanged for the calls that read the whole matrix."""
    def pullback_of_triangle(residuals, g, argnums):
        out, args, kwargs = residuals
        kwargs = kwargs or {}
        call = rulebridge.one_triangle_call(function, args, kwargs)
        if call is None:
            return pullback(residuals, g, argnums)
        out, read, kwargs, g = _autograd_call(function, out, call.args, kwargs, g)
        return call.cotangents(pullback((out, read, kwargs or None), g, argnums), argnums)

    return pullback_of_triangle

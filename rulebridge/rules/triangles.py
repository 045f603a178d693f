"""Functions that read one triangle of a matrix, and the one conversion every source needs.

LAPACK's Cholesky and Hermitian eigensolvers read one triangle and the real part of the
diagonal; the other triangle is never looked at. So NumPy's `cholesky(a)` is a function of
`tril(a)` alone, and its gradient is zero on the strict upper triangle. A source whose rule is
written for symmetric matrices returns a gradient `G` that is right only for symmetric tangents
(autograd's cholesky: `(S + S^H) / 2`, half the true value on each side). The exact cotangent of
the entries NumPy reads follows from `G` alone: entry (i, j) below the diagonal moves both
(i, j) and (j, i) of the Hermitian matrix LAPACK sees, so

    lower_triangle_cotangent(G) = tril(G + G^H, -1) + real(diag(G)).

The result depends only on `G`'s action on Hermitian tangents, so it is the same whether the
source symmetrised `G` or not, and it leaves an already exact (triangular) cotangent unchanged.
A source must compute `G` at the Hermitian matrix NumPy factorises (`hermitian_from_triangle`),
not at the caller's matrix, whenever its rule recomputes anything from the input.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np


def hermitian_from_triangle(a: np.ndarray, lower: bool = True) -> np.ndarray:
    """The Hermitian matrix (stack) LAPACK reads from one triangle of `a`: that triangle, its
    conjugate transpose in the other, and the real part of the diagonal.

    Parameters
    ----------
    a : ndarray, shape (..., n, n)
    lower : bool
        Read the lower triangle (NumPy's default), else the upper one.

    Returns
    -------
    ndarray
        A new array of `a`'s shape and dtype.
    """
    a = np.asarray(a)
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    diagonal = np.real(np.diagonal(a, axis1=-2, axis2=-1))
    result = part + np.conj(np.swapaxes(part, -1, -2))
    index = np.arange(a.shape[-1])
    result[..., index, index] = diagonal
    return result


def lower_triangle_cotangent(g: np.ndarray, lower: bool = True) -> np.ndarray:
    """The cotangent of a function of one triangle of its argument (cholesky, eigh, eigvalsh),
    from a source's gradient `g` of the same function written for Hermitian matrices.

    Parameters
    ----------
    g : ndarray, shape (..., n, n)
        The source's cotangent at the Hermitian matrix the function reads. Right for every
        Hermitian tangent; symmetrised or not, or already triangular, gives the same result.
    lower : bool
        The function reads the lower triangle (True) or the upper one (False).

    Returns
    -------
    ndarray
        `tril(g + g^H, -1) + real(diag(g))` (`triu(..., 1)` for the upper triangle), in `g`'s
        dtype: zero on the triangle the function ignores and on the diagonal's imaginary part.
    """
    g = np.asarray(g)
    both = g + np.conj(np.swapaxes(g, -1, -2))
    result = np.tril(both, -1) if lower else np.triu(both, 1)
    index = np.arange(g.shape[-1])
    result[..., index, index] = np.real(g[..., index, index])
    return result


def _argument(args: tuple, kwargs: dict, position: int, name: str, default: Any) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[position] if len(args) > position else default


def _uplo(position: int) -> Callable[[tuple, dict], str]:
    return lambda args, kwargs: str(_argument(args, kwargs, position, "UPLO", "L")).upper()


def _if_hermitian(position: int) -> Callable[[tuple, dict], str | None]:
    return lambda args, kwargs: "L" if _argument(args, kwargs, position, "hermitian",
                                                 False) else None


# NumPy function -> (its positional arguments, keyword arguments) -> "L", "U", or None when the
# call reads the whole matrix. The matrix is always the first argument. pinv and svd with
# hermitian=True go through eigh (lower triangle); pinv reads a.conj(), the same triangle.
ONE_TRIANGLE: dict[Callable, Callable[[tuple, dict], str | None]] = {
    np.linalg.cholesky: lambda args, kwargs: "U" if kwargs.get("upper", False) else "L",
    np.linalg.eigh: _uplo(1),
    np.linalg.eigvalsh: _uplo(1),
    np.linalg.pinv: _if_hermitian(2),
    np.linalg.svd: _if_hermitian(3),
}


def reads_one_triangle(function: Callable) -> bool:
    """Can a call of `function` read only one triangle of its matrix (for some arguments)?

    Parameters
    ----------
    function : callable
        The NumPy (or SciPy) function, as the engine records it.

    Returns
    -------
    bool
        True for `cholesky`, `eigh`, `eigvalsh`, `pinv` and `svd` (and what is added to the
        table): an adapter wraps their pullbacks with `one_triangle_call`.
    """
    return function in ONE_TRIANGLE


def triangle_read(function: Callable, args: tuple, kwargs: dict) -> str | None:
    """Which triangle of its first argument a call of NumPy's `function` reads.

    Parameters
    ----------
    function : callable
        The NumPy (or SciPy) function, as the engine records it.
    args, kwargs : tuple, dict
        The call's positional and keyword arguments (the rule's residuals keep them).

    Returns
    -------
    str or None
        "L" or "U" when the call reads only that triangle (`cholesky`, `eigh(UPLO=...)`,
        `pinv(hermitian=True)`, ...); None when it reads the whole matrix.
    """
    reader = ONE_TRIANGLE.get(function)
    return None if reader is None else reader(args, kwargs or {})



class TriangleCall(NamedTuple):
    """A call that reads one triangle of its first argument, as a source's rule must see it."""

    lower: bool
    args: tuple  # the call's arguments, the matrix replaced by the Hermitian one NumPy reads

    def cotangents(self, cts: tuple, argnums: tuple) -> tuple:
        """The source's cotangents (one per argnum, at `args`) in NumPy's meaning: the matrix's
        through `lower_triangle_cotangent`, the others as they are."""
        return tuple(lower_triangle_cotangent(ct, self.lower) if i == 0 and ct is not None
                     else ct for i, ct in zip(argnums, cts))


def one_triangle_call(function: Callable, args: tuple, kwargs: dict) -> TriangleCall | None:
    """For a call of `function` that reads one triangle of its matrix, the arguments a source's
    rule must be run at and the conversion of its cotangents; None for a call that reads the
    whole matrix (the rule needs nothing then).

    Parameters
    ----------
    function : callable
        The NumPy (or SciPy) function, as the engine records it.
    args, kwargs : tuple, dict
        The call's positional and keyword arguments.

    Returns
    -------
    TriangleCall or None
    """
    uplo = triangle_read(function, args, kwargs)
    if uplo is None:
        return None
    lower = uplo == "L"
    return TriangleCall(lower, (hermitian_from_triangle(args[0], lower),) + tuple(args[1:]))

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

Which calls read one triangle is said once, by `OneTriangle` (NumPy's functions here, SciPy's in
rulebridge/scipy/conventions.py), and the matrix such a call uses is built by one formula,
`matrix_read`, with NumPy's functions (`hermitian_from_triangle`, for the adapters' rules of
NumPy's functions, which then convert the source's cotangent) or with a source's own
(`rulebridge.scipy`, whose source functions are called on that matrix, so that the source's chain
rule is the conversion). Both give the cotangent above.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from .levels import Box


def always(bound: inspect.BoundArguments) -> bool:
    """`OneTriangle`'s predicate that holds for every call."""
    return True


@dataclass(frozen=True)
class OneTriangle:
    """A call reads one triangle of its argument `parameter` (item `item` of it when it is a
    tuple, as `cho_solve`'s `(c, lower)`), the lower one when `lower(bound arguments)`, when
    `applies(bound arguments)`. `symmetric`: the triangle stands for a Hermitian matrix;
    otherwise for a triangular one (with a unit diagonal, which is not read, when
    `unit_diagonal(bound arguments)`). `copies_other_triangle`: output 0 holds the result in the
    triangle read and the argument's other triangle, copied (`scipy.linalg.cho_factor`)."""

    parameter: str
    lower: Callable[[inspect.BoundArguments], bool]
    symmetric: bool = True
    item: int | None = None
    applies: Callable[[inspect.BoundArguments], bool] = always
    unit_diagonal: Callable[[inspect.BoundArguments], bool] = lambda bound: False
    copies_other_triangle: bool = False


def keyword(name: str, default: Any) -> Callable[[inspect.BoundArguments], bool]:
    """`bound -> bool(the argument `name`, or `default`)`, for `OneTriangle`'s predicates."""
    return lambda bound: bool(bound.arguments.get(name, default))


NUMPY_OPS = (np.tril, np.triu, np.swapaxes, np.conj, np.real)


def matrix_read(m: Any, lower: bool, symmetric: bool = True, unit_diagonal: bool = False,
                ops: tuple = NUMPY_OPS) -> Any:
    """The matrix a call reading one triangle of `m` uses: the Hermitian one that triangle and
    the real part of its diagonal stand for, or the triangular one.

    Parameters
    ----------
    m : array, shape (..., n, n)
    lower : bool
        The lower triangle (else the upper one).
    symmetric : bool
        Hermitian (LAPACK's Cholesky and eigensolvers), else triangular (`solve_triangular`).
    unit_diagonal : bool
        A triangular matrix whose diagonal is not read (the function takes it to be 1).
    ops : tuple
        `tril`, `triu`, `swapaxes`, `conj` and `real` of the library `m` belongs to: NumPy's, or
        a source's, which then differentiates the reading too.

    Returns
    -------
    array
        A new array of `m`'s shape and dtype (for a unit diagonal, zero on the diagonal).
    """
    tril, triu, swapaxes, conj, real = ops

    def triangle(k: int):
        return tril(m, k) if lower else triu(m, -k)

    if not symmetric:
        return triangle(-1) if unit_diagonal else triangle(0)
    strict = triangle(-1)
    return strict + conj(swapaxes(strict, -1, -2)) + real(tril(triu(m)))


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
    if isinstance(a, Box):
        return matrix_read(a, lower)
    a = np.asarray(a)
    if a.ndim < 2 or a.dtype.kind != "f":
        return matrix_read(a, lower)
    # A real matrix: matrix_read's formula in two passes, not six (no conj copy, no tril(triu)
    # of the diagonal), to the bit: every entry is the same sum, (strict + strict^T) + diag.
    # gp_lml's cholesky (n = 128): 166 us -> about 80 us a call, which autograd does not spend.
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    h = strict + np.swapaxes(strict, -1, -2)
    index = np.arange(a.shape[-1])
    h[..., index, index] += a[..., index, index]
    return h


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
    if isinstance(g, Box):  # under nesting: the enclosing level records it, no write
        both = g + np.conj(np.swapaxes(g, -1, -2))
        strict = np.tril(both, -1) if lower else np.triu(both, 1)
        return strict + np.real(g) * np.eye(g.shape[-1])
    g = np.asarray(g)
    both = g + np.conj(np.swapaxes(g, -1, -2))
    result = np.tril(both, -1) if lower else np.triu(both, 1)
    index = np.arange(g.shape[-1])
    result[..., index, index] = np.real(g[..., index, index])
    return result


def _uplo(bound: inspect.BoundArguments) -> bool:
    return str(bound.arguments.get("UPLO", "L")).upper() == "L"


# NumPy's functions whose matrix (the first argument) a call may read one triangle of. pinv and
# svd with hermitian=True go through eigh (lower triangle); pinv reads a.conj(), the same one.
ONE_TRIANGLE: dict[Callable, OneTriangle] = {
    np.linalg.cholesky: OneTriangle("a", lambda bound: not bound.arguments.get("upper", False)),
    np.linalg.eigh: OneTriangle("a", _uplo),
    np.linalg.eigvalsh: OneTriangle("a", _uplo),
    np.linalg.pinv: OneTriangle("a", always, applies=keyword("hermitian", False)),
    np.linalg.svd: OneTriangle("a", always, applies=keyword("hermitian", False)),
}
_SIGNATURES = {function: inspect.signature(function) for function in ONE_TRIANGLE}


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
    convention = ONE_TRIANGLE.get(function)
    if convention is None:
        return None
    bound = _SIGNATURES[function].bind_partial(*args, **(kwargs or {}))
    if not convention.applies(bound):
        return None
    return "L" if convention.lower(bound) else "U"


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

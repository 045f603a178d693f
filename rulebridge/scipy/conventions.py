"""Where SciPy reads only one triangle of a matrix argument, and how an imported rule is made to
mean exactly what SciPy computes there.

`scipy.stats.multivariate_normal.logpdf` passes `cov` to `eigh(lower=True)`; `scipy.linalg.
cholesky(a)` factors the upper triangle of `a`; `solve_triangular` and `cho_solve` ignore the
other triangle. A source's counterpart may read the whole matrix instead (JAX's `cholesky`
symmetrises its input), so its gradient on a non-symmetric argument is not SciPy's. The fix is
exact and needs no conversion written by hand: the source's counterpart is called on the matrix
SciPy actually uses, built from the triangle with the source's own `tril`/`triu` (the symmetric
matrix that triangle stands for, or the triangular one), so the source's chain rule gives SciPy's
gradient: for a function of the lower triangle, `G + G.T` below the diagonal, `G` on it, and 0
above, with `G` the gradient of the symmetric-input function, which is what
`rulebridge.lower_triangle_cotangent` makes of `G` for the adapters' rules of NumPy's functions.
Which arguments are read how (`OneTriangle`) and the matrix read (`matrix_read`) are the ones of
rulebridge/rules/triangles.py. The matrix checks this with tangents in every entry, where the
true derivative in the ignored triangle is 0.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..rules.triangles import NUMPY_OPS, OneTriangle, always, keyword, matrix_read


def _assumes_symmetric(bound: inspect.BoundArguments) -> bool:
    # scipy.linalg.solve reads one triangle only for these `assume_a` values
    return bound.arguments.get("assume_a", "gen") in (
        "sym", "her", "pos", "symmetric", "hermitian", "positive definite")


def _lower_item(position: int) -> Callable[[inspect.BoundArguments], bool]:
    return lambda bound: bool(bound.arguments["c_and_lower"][position])


_MVN = OneTriangle("cov", always, symmetric=True)
_LOWER_FALSE = keyword("lower", False)

CONVENTIONS: dict[str, tuple[OneTriangle, ...]] = {
    **{f"scipy.stats.multivariate_normal.{m}": (_MVN,)
       for m in ("logpdf", "pdf", "logcdf", "cdf", "entropy")},
    "scipy.linalg.cholesky": (OneTriangle("a", _LOWER_FALSE, symmetric=True),),
    "scipy.linalg.cho_factor": (OneTriangle("a", _LOWER_FALSE, symmetric=True,
                                            copies_other_triangle=True),),
    "scipy.linalg.cho_solve": (OneTriangle("c_and_lower", _lower_item(1), symmetric=False,
                                           item=0),),
    "scipy.linalg.solve_triangular": (
        OneTriangle("a", _LOWER_FALSE, symmetric=False,
                    unit_diagonal=keyword("unit_diagonal", False)),),
    "scipy.linalg.eigh": (OneTriangle("a", keyword("lower", True), symmetric=True),
                          OneTriangle("b", keyword("lower", True), symmetric=True)),
    "scipy.linalg.solve": (OneTriangle("a", _LOWER_FALSE, symmetric=True,
                                       applies=_assumes_symmetric),),
}


# Parameters recorded positionally even when the caller leaves them out (their default then):
# autograd's odeint rule takes `args` positionally only.
POSITIONAL_UP_TO = {"scipy.integrate.odeint": "args"}

# A function's parameter that it spreads into a callable's arguments (odeint calls
# `func(y, t, *args)`), with that callable's parameter: a container of traced values there
# (autograd's ode_net example passes `(params,)`, params a list of `(W, b)` pairs) is recorded
# as one flat tuple of its leaves, and the callable is handed the container back
# (`DropIn._spread_flat`), since the tape records traced values one list or tuple deep.
SPREAD = {"scipy.integrate.odeint": ("args", "func")}


class _SourceOps:
    """The source's own `tril`, `triu`, `swapaxes`, `conj` and `real`, found by name like any
    counterpart, so the triangle is taken inside the source's differentiation."""

    def __init__(self, adapter) -> None:
        self.ops = tuple(adapter.counterpart(f) for f in NUMPY_OPS)

    def triangle(self, m, lower: bool, k: int = 0):
        return self.ops[0](m, k) if lower else self.ops[1](m, -k)

    def matrix(self, m, convention: OneTriangle, bound: inspect.BoundArguments):
        """The matrix SciPy uses when it reads `m` through `convention`."""
        return matrix_read(m, convention.lower(bound), convention.symmetric,
                           convention.unit_diagonal(bound), self.ops)


def with_convention(conventions: tuple[OneTriangle, ...], counterpart: Callable, adapter,
                    signature: inspect.Signature) -> Callable:
    """`counterpart`, called on the matrices SciPy reads (see the module's docstring)."""
    ops = _SourceOps(adapter)

    def equivalent(*args: Any, **kwargs: Any):
        bound = signature.bind(*args, **kwargs)
        originals = {}
        for convention in conventions:
            name = convention.parameter
            if name not in bound.arguments or not convention.applies(bound):
                continue
            value = bound.arguments[name]
            m = value if convention.item is None else value[convention.item]
            if np.ndim(m) < 2:  # a scalar or diagonal covariance: nothing to choose
                continue
            originals[name] = m
            m = ops.matrix(m, convention, bound)
            if convention.item is not None:
                m = (*value[:convention.item], m, *value[convention.item + 1:])
            bound.arguments[name] = m
        out = counterpart(*bound.args, **bound.kwargs)
        for convention in conventions:
            if convention.copies_other_triangle and convention.parameter in originals:
                lower = convention.lower(bound)
                other = ops.triangle(originals[convention.parameter], not lower, -1)
                out = (ops.triangle(out[0], lower) + other, *out[1:])
        return out

    equivalent.__name__ = getattr(counterpart, "__name__", "equivalent")
    equivalent.__qualname__ = getattr(counterpart, "__qualname__", equivalent.__name__)
    equivalent.__module__ = getattr(counterpart, "__module__", None)
    return equivalent


def in_float64(counterpart: Callable, adapter) -> Callable:
    """`counterpart` called with its float32 arguments cast to float64, as SciPy's
    `scipy.stats` converts them (its values are float64 whatever the inputs' precision; a
    source that kept float32 would not be an equivalent). The cast is the source's own `astype`,
    so each cotangent comes back in its argument's float32; a source without one gets the
    arguments as they are (and the comparison says why it is no equivalent)."""
    def widen(value):
        if getattr(value, "dtype", None) != np.float32:
            return value
        try:
            astype = adapter.counterpart(np.astype)
        except Exception:  # no astype in this source
            return value
        return astype(value, np.float64)

    def equivalent(*args: Any, **kwargs: Any):
        return counterpart(*map(widen, args), **{k: widen(v) for k, v in kwargs.items()})

    equivalent.__name__ = getattr(counterpart, "__name__", "equivalent")
    equivalent.__qualname__ = getattr(counterpart, "__qualname__", equivalent.__name__)
    equivalent.__module__ = getattr(counterpart, "__module__", None)
    return equivalent

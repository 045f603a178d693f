"""Arguments that live on a manifold, and the directions a check may step them along.

A check compares a rule's pullback with central differences of NumPy's or SciPy's own function
along random directions (rulebridge/checking/check.py). Some functions are defined only on part
of their arguments' space, and SciPy raises (or returns -inf) one step off it:
`scipy.stats.dirichlet.logpdf(x, alpha)` wants x on the probability simplex,
`multivariate_normal.logpdf(x, mean, cov)` a positive-definite `cov` (with `allow_singular=True`,
x - mean in the range of a singular one). There the check steps along the domain's tangent space:
the random directions are projected onto it (`project`), and the step is kept small enough to
stay inside (`room`). What is declared is data, one table below by function name: the checker
knows no function.

A check along tangent directions verifies less: only the part of the rule's cotangent that
pairs with those directions (for x on the simplex, the gradient up to a multiple of ones; for
x in the range of a singular covariance, its part in that range). The verdict says so in its
reason (`TangentSpace.describe`). Off the tangent space SciPy's function has no derivative to
compare with; the sources' rules give the ambient gradient there (JAX's and autograd's
`(alpha - 1) / x` for the Dirichlet density in x), which is what rulebridge returns.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .rule import function_name
from .triangles import always

# A pullback offered as a function (Rule.pullback_rule) whose leading inputs are a call's
# arguments says so in this attribute: `(function, args, kwargs, positions)`, with positions[k]
# the argument of `function` its input k is (None: a cotangent or a container's item). Its
# checks keep those inputs in `function`'s domain (adapters/autograd/rulebridge_autograd/again.py).
PRIMAL = "__rulebridge_primal__"

# A step moves every element by at most this fraction of its distance to the domain's edge:
# central differences then see the function's curvature over 1% of the way to a pole.
MARGIN = 0.01


def _cutoff(eigenvalues: np.ndarray) -> float:
    """The eigenvalue below which SciPy's `_PSD` treats a covariance as singular (its `cond`:
    1e6 times the machine epsilon, relative to the largest magnitude)."""
    return 1e6 * np.finfo(np.float64).eps * float(np.max(np.abs(eigenvalues), initial=0.0))


def _read(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The eigenvalues and vectors of the matrix SciPy reads (its lower triangle, eigh)."""
    return np.linalg.eigh(np.real(matrix))


@dataclass(frozen=True)
class Simplex:
    """`parameter` holds probabilities along `axis` (SciPy's dirichlet: axis 0) that sum to one
    when `complete(bound arguments)` (all components given; else the last one is implied), each
    in (0, 1). Directions sum to zero along `axis`; steps keep every component positive."""

    parameter: str
    complete: Callable[[inspect.BoundArguments], bool] = always
    axis: int = 0

    def restricts(self, value, bound: inspect.BoundArguments) -> bool:
        return self.complete(bound)

    def caveat(self) -> str:
        return (f"{self.parameter} lives on the simplex: checks step along directions summing "
                f"to 0 along axis {self.axis}, so they verify its cotangent up to a multiple of "
                "ones; the gradient returned is the sources' ambient one")

    def describe(self, bound: inspect.BoundArguments) -> str:
        return (f"{self.parameter} on the simplex (directions summing to 0 along axis "
                f"{self.axis}: its cotangent is verified up to a multiple of ones there)")

    def project(self, value, direction, bound: inspect.BoundArguments):
        if not self.complete(bound):
            return direction
        return direction - np.mean(direction, axis=self.axis, keepdims=True)

    def room(self, value, direction, bound: inspect.BoundArguments) -> float:
        value, direction = np.real(value), np.real(direction)
        rooms = [_room(value, direction)]
        if not self.complete(bound):  # the implied component 1 - sum(x)
            rooms.append(_room(1.0 - np.sum(value, axis=self.axis),
                               -np.sum(direction, axis=self.axis)))
        return min(rooms)


def _room(distance, direction) -> float:
    moving = np.abs(direction) > 0
    if not np.any(moving):
        return np.inf
    return MARGIN * float(np.min(np.abs(distance)[moving] / np.abs(direction)[moving]))


@dataclass(frozen=True)
class PositiveDefinite:
    """`parameter` is a symmetric positive-definite matrix (SciPy reads its lower triangle).
    Steps stay below its smallest eigenvalue, so every step is positive definite too; where the
    call allows a singular one (`allow_singular=True`) and it is singular, directions are
    symmetric and in its range (P D P), which keeps the null space SciPy's value depends on."""

    parameter: str

    def caveat(self) -> str:
        return (f"{self.parameter} must stay positive definite: checks keep their steps below "
                "its smallest eigenvalue; where it is singular (allow_singular=True) they step "
                "symmetric directions in its range and verify its cotangent there only")

    def restricts(self, value, bound: inspect.BoundArguments) -> bool:
        if np.ndim(value) != 2:
            return False
        w, _ = _read(value)
        return bool(np.any(w <= _cutoff(w)))

    def describe(self, bound: inspect.BoundArguments) -> str:
        return (f"{self.parameter} singular (symmetric directions in its range: its cotangent "
                "is verified there only)")

    def project(self, value, direction, bound: inspect.BoundArguments):
        if np.ndim(value) != 2:
            return direction
        w, v = _read(value)
        kept = w > _cutoff(w)
        if np.all(kept):
            return direction
        p = v[:, kept] @ v[:, kept].T
        symmetric = 0.5 * (direction + direction.T)
        return p @ symmetric @ p

    def room(self, value, direction, bound: inspect.BoundArguments) -> float:
        if np.ndim(value) != 2:  # a diagonal or a scalar variance: each entry positive
            return _room(value, direction)
        w, _ = _read(value)
        smallest = float(np.min(w[w > _cutoff(w)], initial=np.inf))
        # the matrix SciPy reads moves by the symmetrised triangle: at most 2 |D|_F in norm
        size = 2.0 * float(np.linalg.norm(direction))
        return np.inf if size == 0 else MARGIN * smallest / size


@dataclass(frozen=True)
class InRange:
    """`parameter`'s vectors (its last axis) move in the range of the symmetric matrix
    `matrix` (a singular covariance's support, where `x - mean` must stay)."""

    parameter: str
    matrix: str

    def restricts(self, value, bound: inspect.BoundArguments) -> bool:
        return True  # applies only where the matrix is singular

    def caveat(self) -> str:
        return (f"where {self.matrix} is singular, checks move {self.parameter} in its range "
                "(the support) and verify its cotangent there only")

    def describe(self, bound: inspect.BoundArguments) -> str:
        return (f"{self.parameter} in the range of {self.matrix}, its support (its cotangent "
                "is verified there only)")

    def applies(self, bound: inspect.BoundArguments) -> bool:
        m = bound.arguments.get(self.matrix)
        if np.ndim(m) != 2 or not np.ndim(bound.arguments.get(self.parameter)):
            return False
        w, _ = _read(np.asarray(m, dtype=np.float64))
        return bool(np.any(w <= _cutoff(w)))

    def project(self, value, direction, bound: inspect.BoundArguments):
        w, v = _read(np.asarray(bound.arguments[self.matrix], dtype=np.float64))
        kept = w > _cutoff(w)
        p = v[:, kept] @ v[:, kept].T
        return direction @ p

    def room(self, value, direction, bound: inspect.BoundArguments) -> float:
        return np.inf


def _all_components(bound: inspect.BoundArguments) -> bool:
    return np.shape(bound.arguments["x"])[:1] == np.shape(bound.arguments["alpha"])


_MVN = (PositiveDefinite("cov"), InRange("x", "cov"), InRange("mean", "cov"))
TANGENTS: dict[str, tuple] = {
    "scipy.stats.dirichlet.logpdf": (Simplex("x", _all_components),),
    "scipy.stats.dirichlet.pdf": (Simplex("x", _all_components),),
    "scipy.stats.multivariate_normal.logpdf": _MVN,
    "scipy.stats.multivariate_normal.pdf": _MVN,
    "scipy.stats.multivariate_normal.logcdf": _MVN[:1],
    "scipy.stats.multivariate_normal.cdf": _MVN[:1],
    "scipy.stats.multivariate_normal.entropy": _MVN[:1],
}


def caveats(name: str) -> list[str]:
    """What checks of the function called `name` verify, where its domain restricts them."""
    return [d.caveat() for d in TANGENTS.get(name, ())]


class TangentSpace:
    """The declarations of one call that apply to the arguments a check steps (`argnums`):
    `project` and `room` take the call's arguments and one direction per argnum."""

    def __init__(self, bound: inspect.BoundArguments, declarations: list,
                 positions: dict[str, int], argnums: tuple) -> None:
        self.bound, self.declarations = bound, declarations
        self.positions, self.argnums = positions, argnums

    def _each(self):  # (declaration, its index among argnums)
        for declaration in self.declarations:
            k = self.argnums.index(self.positions[declaration.parameter])
            yield declaration, k

    def project(self, args: tuple, xdot: Sequence[Any]) -> list:
        out = list(xdot)
        for declaration, k in self._each():
            value = args[self.argnums[k]]
            out[k] = np.asarray(declaration.project(value, out[k], self.bound),
                                dtype=np.result_type(out[k]))
        return out

    def room(self, args: tuple, xdot: Sequence[Any]) -> float:
        """The largest step along `xdot` that keeps a margin inside the domain."""
        return min([declaration.room(args[self.argnums[k]], xdot[k], self.bound)
                    for declaration, k in self._each()] + [np.inf])

    def describe(self, args: tuple) -> str:
        """What a check along these directions verified, where it is less than every direction
        ("" where only the steps were kept inside: a positive-definite matrix of full rank)."""
        restricted = [d.describe(self.bound) for d, k in self._each()
                      if d.restricts(args[self.argnums[k]], self.bound)]
        return ("checked along the domain's tangent space only: " + "; ".join(restricted)
                if restricted else "")


def tangent_space(function: Callable, args: tuple, kwargs: dict,
                  argnums: Sequence[int]) -> TangentSpace | None:
    """The tangent space a check of `function(*args, **kwargs)` in `argnums` steps along, or
    None when `function` declares none for those arguments (every direction is in its domain)."""
    primal = getattr(function, PRIMAL, None)
    if primal is not None:
        return _of_pullback(primal, args, tuple(argnums))
    declared = TANGENTS.get(function_name(function))
    if not declared:
        return None
    try:
        signature = inspect.signature(function)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    names = list(signature.parameters)
    positions = {name: i for i, name in enumerate(names[:len(args)])}
    argnums = tuple(argnums)
    applying = [d for d in declared
                if positions.get(d.parameter) in argnums
                and getattr(d, "applies", always)(bound)]
    if not applying:
        return None
    return TangentSpace(bound, applying, positions, argnums)


def _of_pullback(primal: tuple, args: tuple, argnums: tuple) -> "Transported | None":
    function, primal_args, kwargs, positions = primal
    at = {k: positions[k] for k in argnums if k < len(positions) and positions[k] is not None}
    inner = tangent_space(function, primal_args, kwargs, tuple(sorted(set(at.values()))))
    return None if inner is None else Transported(inner, primal_args, at, argnums)


class Transported:
    """A call's tangent space, seen from a function whose inputs include that call's arguments
    (its pullback: the input `k` is argument `at[k]`); the other inputs move freely."""

    def __init__(self, inner: TangentSpace, primal_args: tuple, at: dict[int, int],
                 argnums: tuple) -> None:
        self.inner, self.primal_args, self.at, self.argnums = inner, primal_args, at, argnums

    def _primal(self, args: tuple, xdot: Sequence[Any]) -> tuple[tuple, list]:
        full = list(self.primal_args)
        by_argument = {}
        for j, k in enumerate(self.argnums):
            if k in self.at:
                full[self.at[k]] = args[k]
                by_argument[self.at[k]] = xdot[j]
        return tuple(full), [by_argument[i] for i in self.inner.argnums]

    def project(self, args: tuple, xdot: Sequence[Any]) -> list:
        full, inner = self._primal(args, xdot)
        projected = dict(zip(self.inner.argnums, self.inner.project(full, inner)))
        return [projected[self.at[k]] if k in self.at else d
                for k, d in zip(self.argnums, xdot)]

    def room(self, args: tuple, xdot: Sequence[Any]) -> float:
        return self.inner.room(*self._primal(args, xdot))

    def describe(self, args: tuple) -> str:
        return self.inner.describe(self._primal(args, [None] * len(self.argnums))[0])

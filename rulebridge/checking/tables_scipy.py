"""Catalogue table: the SciPy functions `rulebridge.scipy` mirrors, under their SciPy names.

Distributions are declared once, by their arguments' domains (x in the support, shapes where the
density is smooth), and every method a source offers is checked there: `ppf`/`isf` at
probabilities in (0, 1), `pmf`/`logpmf` at integer counts held constant. Integer arguments
(counts, `n` of `binom`, `polygamma`'s order) are constants. Matrices SciPy reads one triangle
of are drawn symmetric positive definite, and their tangents span every entry, so a rule that is
right only for symmetric perturbations fails.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cases import MATRIX, SCALAR, VECTOR, case, of
from .domains import (ABOVE_ONE, NONZERO, POSITIVE, PROBABILITY, REAL, SPD, UNIT,
                      WELL_CONDITIONED, Arr, Const, Domain, Held)


def _between(low: float, high: float, name: str) -> Domain:
    return Domain(name, lambda rng, shape: rng.uniform(low, high, shape), imag_scale=0.0)


NEAR_ZERO = _between(-0.1, 0.1, "(-0.1, 0.1)")
SCALE = _between(0.8, 1.6, "(0.8, 1.6)")
INSIDE = _between(0.2, 0.8, "(0.2, 0.8)")
BELOW = _between(-1.5, -1.1, "(-1.5, -1.1)")
ABOVE = _between(1.1, 1.5, "(1.1, 1.5)")
ANGLE = _between(0.3, 2.8, "(0.3, 2.8)")
PARETO_X = _between(1.3, 2.8, "(1.3, 2.8)")

X = (5,)
LOC, SCALE_ARG = Arr(NEAR_ZERO, SCALAR), Arr(SCALE, SCALAR)


@dataclass(frozen=True)
class Continuous:
    """x's domain and the shapes' domains; `loc_scale`: whether loc and scale are checked too
    (not for bounded supports, where they would move the support across x)."""

    x: Domain
    shapes: tuple = ()
    loc_scale: bool = True

    def cases(self, method: str) -> list:
        first = Arr(PROBABILITY, X) if method in ("ppf", "isf") else Arr(self.x, X)
        shapes = tuple(Arr(d, SCALAR) for d in self.shapes)
        if not self.loc_scale:
            return of(case(first, *shapes))
        return of(case(first, *shapes, LOC, SCALE_ARG), case(Arr(self.x, MATRIX) if method
                  not in ("ppf", "isf") else Arr(PROBABILITY, MATRIX), *shapes))


@dataclass(frozen=True)
class Discrete:
    """Counts held constant; the parameters' domains (a constant where SciPy wants an integer)."""

    k: tuple
    parameters: tuple

    def cases(self, method: str) -> list:
        first = Arr(PROBABILITY, (len(self.k),)) if method == "ppf" else Const(np.array(self.k))
        return of(case(first, *(p if isinstance(p, (int, Const)) else Arr(p, SCALAR)
                                for p in self.parameters)))


COUNTS = (0, 1, 2, 3, 5)
DISTRIBUTIONS = {
    "norm": Continuous(REAL), "cauchy": Continuous(REAL), "logistic": Continuous(REAL),
    "gumbel_l": Continuous(REAL), "gumbel_r": Continuous(REAL), "laplace": Continuous(NONZERO),
    "t": Continuous(REAL, (ABOVE_ONE,)),
    "gennorm": Continuous(NONZERO, (ABOVE_ONE,), loc_scale=False),
    "expon": Continuous(POSITIVE), "gamma": Continuous(POSITIVE, (POSITIVE,)),
    "chi2": Continuous(POSITIVE, (ABOVE_ONE,)),
    "beta": Continuous(INSIDE, (ABOVE_ONE, ABOVE_ONE), loc_scale=False),
    "pareto": Continuous(PARETO_X, (ABOVE_ONE,), loc_scale=False),
    "truncnorm": Continuous(UNIT, (BELOW, ABOVE), loc_scale=False),
    "uniform": Continuous(INSIDE, ()),
    "vonmises": Continuous(UNIT, (POSITIVE,), loc_scale=False),
    "wrapcauchy": Continuous(ANGLE, (INSIDE,), loc_scale=False),
    "poisson": Discrete(COUNTS, (POSITIVE,)),
    "binom": Discrete(COUNTS, (10, PROBABILITY)),
    "bernoulli": Discrete((0, 1, 1, 0), (PROBABILITY,)),
    "geom": Discrete((1, 2, 3), (PROBABILITY,)),
    "nbinom": Discrete(COUNTS, (POSITIVE, PROBABILITY)),
    "betabinom": Discrete(COUNTS, (10, POSITIVE, POSITIVE)),
}
METHODS = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf", "pmf", "logpmf")

MEAN, COV = Arr(REAL, (3,)), Arr(SPD, (3, 3))
ALPHA = Arr(POSITIVE, (3,))
SIMPLEX = Held(np.array([0.2, 0.3, 0.5]))  # checked in alpha: a step leaves the simplex
SQUARE, POSDEF = Arr(WELL_CONDITIONED, (4, 4)), Arr(SPD, (4, 4))
B, B2 = Arr(REAL, (4,)), Arr(REAL, (4, 2))
V3 = Arr(REAL, (3,))
M, V = Arr(REAL, MATRIX), Arr(REAL, VECTOR)


@dataclass(frozen=True)
class Tup:
    """A tuple argument whose items are descriptors or literals (`cho_solve`'s `(c, lower)`)."""

    items: tuple

    def make(self, rng: np.random.Generator, dtype: np.dtype) -> tuple:
        return tuple(i.make(rng, dtype) if hasattr(i, "make") else i for i in self.items)


PIVOTS = Const(np.arange(4, dtype=np.int32))


def damped_pendulum(y, t, k):
    """odeint's dynamics in plain NumPy: the rule must differentiate them too."""
    return np.stack([y[1], -k[0] * np.sin(y[0]) - k[1] * y[1]])


TIMES = Const(np.linspace(0.0, 1.0, 4))

CASES = {
    **{f"scipy.stats.{name}.{method}": d.cases(method)
       for name, d in DISTRIBUTIONS.items() for method in METHODS},
    "scipy.stats.multivariate_normal.logpdf": of(case(V3, MEAN, COV),
                                                 case(Arr(REAL, (4, 3)), MEAN, COV)),
    "scipy.stats.multivariate_normal.pdf": of(case(V3, MEAN, COV)),
    "scipy.stats.multivariate_normal.entropy": of(case(MEAN, COV)),
    "scipy.stats.dirichlet.logpdf": of(case(SIMPLEX, ALPHA)),
    "scipy.stats.dirichlet.pdf": of(case(SIMPLEX, ALPHA)),
    "scipy.stats.multinomial.logpmf": of(case(Const(np.array([2, 1, 3])), 6,
                                              Const(np.array([0.2, 0.3, 0.5])))),
    "scipy.stats.poisson.entropy": of(case(Arr(POSITIVE, SCALAR))),
    "scipy.stats.sem": of(case(V), case(M, axis=1)),
    "scipy.special.multigammaln": of(case(Arr(ABOVE_ONE, SCALAR), 2)),
    "scipy.linalg.solve_triangular": of(case(SQUARE, B, lower=True), case(SQUARE, B2),
                                        case(SQUARE, B, lower=True, unit_diagonal=True),
                                        case(SQUARE, B, trans=1)),
    "scipy.linalg.cho_solve": of(case(Tup((SQUARE, True)), B), case(Tup((SQUARE, False)), B2)),
    "scipy.linalg.cho_factor": of(case(POSDEF), case(POSDEF, lower=True)),
    "scipy.linalg.cholesky": of(case(POSDEF), case(POSDEF, lower=True)),
    "scipy.linalg.eigh": of(case(POSDEF, complex_outputs=(0,)), case(POSDEF, eigvals_only=True)),
    "scipy.linalg.solve": of(case(SQUARE, B), case(SQUARE, B2), case(POSDEF, B, assume_a="pos")),
    "scipy.linalg.inv": of(case(SQUARE)),
    "scipy.linalg.det": of(case(SQUARE)),
    "scipy.linalg.lu_factor": of(case(SQUARE)),
    "scipy.linalg.lu_solve": of(case(Tup((SQUARE, PIVOTS)), B)),
    "scipy.linalg.lu": of(case(SQUARE)),
    "scipy.linalg.expm": of(case(Arr(REAL, (3, 3)))),
    "scipy.linalg.sqrtm": of(case(POSDEF)),
    "scipy.linalg.svd": of(case(Arr(REAL, (5, 3)), full_matrices=False, complex_outputs=(1,))),
    "scipy.linalg.qr": of(case(Arr(REAL, (5, 3)), mode="economic")),
    "scipy.linalg.block_diag": of(case(Arr(REAL, (2, 2)), Arr(REAL, (1, 3)))),
    "scipy.linalg.solve_sylvester": of(case(Arr(WELL_CONDITIONED, (3, 3)),
                                            Arr(WELL_CONDITIONED, (3, 3)), Arr(REAL, (3, 3)))),
    "scipy.linalg.toeplitz": of(case(V), case(V, Arr(REAL, (3,)))),
    "scipy.linalg.circulant": of(case(V)),
    "scipy.linalg.hankel": of(case(V)),
    "scipy.signal.convolve": of(case(V, V3), case(V, V3, mode="same"),
                                case(M, Arr(REAL, (2, 2)))),
    "scipy.signal.correlate": of(case(V, V3), case(V, V3, mode="valid")),
    "scipy.signal.convolve2d": of(case(M, Arr(REAL, (2, 2)))),
    "scipy.signal.correlate2d": of(case(M, Arr(REAL, (2, 2)))),
    "scipy.signal.fftconvolve": of(case(V, V3)),
    "scipy.integrate.trapezoid": of(case(V), case(M, axis=0)),
    "scipy.integrate.odeint": of(case(damped_pendulum, Arr(POSITIVE, (2,)), TIMES,
                                      Tup((Arr(POSITIVE, (2,)),)), rtol=1e-10, atol=1e-10)),
}

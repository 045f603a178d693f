"""Input domains: where a function is smooth, so that finite differences can judge its rule.

A `Domain` draws float64 values for a shape; `Arr(domain, shape)` is one differentiable argument
of a case, made in the column's dtype (float32, float64 or complex128) when the case is built.
Every domain keeps its samples at least ~0.1 away from the kinks, ties, poles and branch cuts of
the functions it is used for, which is far more than the finite-difference steps (~1e-3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

Sampler = Callable[[np.random.Generator, tuple], np.ndarray]


@dataclass(frozen=True)
class Domain:
    name: str
    sample: Sampler = field(compare=False)
    # Imaginary parts for complex columns are drawn with this scale (small near branch cuts).
    # A domain restricts where inputs are drawn, never the tangents: those span every entry
    # NumPy's function reads (see check.py).
    imag_scale: float = 0.3

    def draw(self, rng: np.random.Generator, shape: tuple, dtype: np.dtype) -> np.ndarray:
        values = np.asarray(self.sample(rng, shape), dtype=np.float64).reshape(shape)
        if dtype.kind == "c":
            values = values + 1j * self.imag_scale * rng.uniform(-1.0, 1.0, shape)
        # an array even of shape (): 0-d arithmetic gives a NumPy scalar, which a check does
        # not differentiate by default (a complex 0-d case then checked nothing)
        return np.asarray(values, dtype=dtype).reshape(shape)


def _interval(low: float, high: float) -> Sampler:
    margin = 0.1 * (high - low)
    return lambda rng, shape: rng.uniform(low + margin, high - margin, shape)


def _away_from_zero(rng, shape):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.0, shape)


def _off_lattice(offset: float) -> Sampler:
    # k + offset + [0.1, 0.4] with k even: two domains with offsets 0 and 1 never come within 0.2
    # of each other (maximum, minimum, fmax, fmin ties) nor of an integer or half-integer.
    return lambda rng, shape: (2.0 * rng.integers(-1, 2, shape) + offset
                               + rng.uniform(0.1, 0.4, shape))


def _distinct(rng, shape):
    # A permutation of well separated values (gap 0.5 - 0.1): sort, max, median, partition.
    n = int(np.prod(shape, dtype=int))
    values = (np.arange(n) - n / 2) * 0.5 + rng.uniform(0.0, 0.1, n)
    return rng.permutation(values) * (1.0 if n < 8 else 4.0 / n)


def _well_conditioned(rng, shape):
    n = shape[-1]
    return rng.normal(size=shape) * 0.3 + np.eye(n) * 2.0


def _spd(rng, shape):
    # A A^T + n I, with the diagonal spread so the eigenvalues are distinct (eigh's rule needs it).
    n = shape[-1]
    a = rng.normal(size=shape) * 0.5
    spread = np.diag(np.arange(1.0, n + 1.0))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n) + spread


def _distinct_spectrum(rng, shape):
    # Non-symmetric with real, well separated eigenvalues: a similarity transform of diag(1..n).
    n = shape[-1]
    basis = np.eye(n) + 0.2 * rng.normal(size=shape)
    return basis @ np.diag(np.arange(1.0, n + 1.0)) @ np.linalg.inv(basis)


REAL = Domain("real line", lambda rng, shape: rng.uniform(-2.0, 2.0, shape), imag_scale=1.0)
POSITIVE = Domain("positive", _interval(0.4, 2.6), imag_scale=0.2)
NONZERO = Domain("away from 0", _away_from_zero)
UNIT = Domain("(-1, 1)", _interval(-1.0, 1.0), imag_scale=0.1)
PROBABILITY = Domain("(0, 1)", _interval(0.0, 1.0), imag_scale=0.1)
ABOVE_ONE = Domain("(1, 3)", _interval(1.0, 3.0), imag_scale=0.1)
NEAR_ONE = Domain("(0.9, 1.1)", lambda rng, shape: rng.uniform(0.95, 1.05, shape), 0.01)
HALF_PI = Domain("(-1.3, 1.3)", _interval(-1.4, 1.4), imag_scale=0.1)
OFF_INTEGERS = Domain("away from integers and half-integers", _off_lattice(0.0), imag_scale=0.0)
TIE_FREE_LOW = Domain("tie-free pair (low)", _off_lattice(0.0), imag_scale=0.05)
TIE_FREE_HIGH = Domain("tie-free pair (high)", _off_lattice(1.0), imag_scale=0.05)
DISTINCT = Domain("distinct values with a gap", _distinct, imag_scale=0.02)
WELL_CONDITIONED = Domain("well-conditioned square", _well_conditioned)
SPD = Domain("symmetric positive definite, distinct eigenvalues", _spd, imag_scale=0.0)
SPECTRUM = Domain("distinct real eigenvalues", _distinct_spectrum, imag_scale=0.0)


@dataclass(frozen=True)
class Arr:
    """A differentiable array argument: drawn from `domain`, in the column's dtype."""

    domain: Domain
    shape: tuple = (3, 4)
    dtype: str | None = None  # fixed dtype (e.g. "float64" for an argument that stays real)

    def make(self, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        return self.domain.draw(rng, self.shape, np.dtype(self.dtype or dtype))


@dataclass(frozen=True)
class Seq:
    """A list of differentiable arrays (np.concatenate([a, b]), np.stack)."""

    items: tuple

    def make(self, rng: np.random.Generator, dtype: np.dtype) -> list:
        return [item.make(rng, dtype) for item in self.items]


@dataclass(frozen=True)
class Bools:
    """A boolean mask (np.where's condition)."""

    shape: tuple = (3, 4)

    def make(self, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        return rng.random(self.shape) < 0.5


@dataclass(frozen=True)
class Const:
    """A fixed array (indices, sorted knots): the same in every column."""

    value: Any

    def make(self, rng: np.random.Generator, dtype: np.dtype) -> Any:
        return np.array(self.value)


@dataclass(frozen=True)
class Held(Const):
    """A fixed float array the check holds constant (a point of the simplex, which a step would
    leave): the rule is checked in the other arguments, as a call tracing only those is."""


def build_args(args: tuple, rng: np.random.Generator, dtype: np.dtype) -> tuple:
    """The concrete positional arguments of a case: descriptors are drawn, literals pass."""
    return tuple(a.make(rng, dtype) if hasattr(a, "make") else a for a in args)

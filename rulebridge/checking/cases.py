"""How a catalogue table spells a function's cases: `Case` and the builders the `tables_*.py`
modules use (`case`, `unary`, `binary`, `reduction`, ...). The tables are data; the catalogue
(catalogue.py) merges them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..rules.arguments import differentiable_argnums
from .domains import REAL, Arr, Held


@dataclass(frozen=True)
class Case:
    """One way to call a function: positional argument descriptors or literals, static keyword
    arguments, and which outputs get a random cotangent (None: all). Complex eigenvectors and
    singular vectors carry a phase NumPy picks freely, and a loss that depends on it has no
    derivative to agree on: `complex_outputs` names the gauge-invariant outputs seeded in the
    complex column (real ones have a sign that is locally fixed, so they are checked in full)."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    outputs: tuple | None = None
    complex_outputs: tuple | None = None

    def seeded_outputs(self, dtype: str) -> tuple | None:
        if dtype.startswith("complex") and self.complex_outputs is not None:
            return self.complex_outputs
        return self.outputs

    def checked_argnums(self, args: tuple) -> tuple[int, ...] | None:
        """The positions of `args` (this case's, drawn) the check differentiates: None for
        every differentiable one, unless some are `Held` constant."""
        held = {i for i, a in enumerate(self.args) if isinstance(a, Held)}
        if not held:
            return None
        return tuple(i for i in differentiable_argnums(args) if i not in held)

    def label(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())


def case(*args: Any, outputs: tuple | None = None, complex_outputs: tuple | None = None,
         **kwargs: Any) -> Case:
    return Case(tuple(args), kwargs, outputs, complex_outputs)


SCALAR, VECTOR, MATRIX = (), (5,), (3, 4)


def unary(domain=REAL) -> list[Case]:
    """Elementwise functions of one array: 1-d, 2-d and 0-d."""
    return [case(Arr(domain, shape)) for shape in (VECTOR, MATRIX, SCALAR)]


def binary(first=REAL, second=REAL) -> list[Case]:
    """Elementwise functions of two arrays: same shape, broadcasting pair, 0-d with 1-d."""
    return [case(Arr(first, MATRIX), Arr(second, MATRIX)),
            case(Arr(first, (3, 1)), Arr(second, (4,))),
            case(Arr(first, SCALAR), Arr(second, VECTOR))]


def reduction(domain=REAL) -> list[Case]:
    """Reductions: a vector, a whole matrix, along each axis (with keepdims)."""
    return [case(Arr(domain, VECTOR)), case(Arr(domain, MATRIX)),
            case(Arr(domain, MATRIX), axis=0), case(Arr(domain, MATRIX), axis=1, keepdims=True)]


def scan(domain=REAL) -> list[Case]:
    """Cumulative functions along an axis."""
    return [case(Arr(domain, MATRIX)), case(Arr(domain, MATRIX), axis=1),
            case(Arr(domain, VECTOR))]


def shaped(*calls: tuple) -> list[Case]:
    """Shape functions of one matrix: each item is (extra positional args, kwargs)."""
    return [case(Arr(REAL, MATRIX), *extra, **kwargs) for extra, kwargs in calls]


def of(*cases: Case) -> list[Case]:
    return list(cases)

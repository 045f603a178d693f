"""The catalogue: for each function name, the cases (inputs, static arguments) it is checked at.

The catalogue supplies domains, not the list of functions: rows of the matrix come from
introspection of NumPy and SciPy intersected with what each adapter offers (`rows()`), and a
function the catalogue has no cases for still gets a row, marked unchecked. The tables themselves
live in `tables_*.py`, as data; this module holds the builders they use.
"""

from __future__ import annotations

import importlib
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from ..rules.rule import function_name
from .domains import REAL, Arr

NAMESPACES = ("numpy", "numpy.linalg", "numpy.fft")
UFUNC_NAMESPACES = ("scipy.special",)


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


def _tables() -> dict[str, list[Case]]:
    from . import tables_elementwise, tables_linalg, tables_shape

    merged: dict[str, list[Case]] = {}
    for module in (tables_elementwise, tables_shape, tables_linalg):
        for name, cases in module.CASES.items():
            if name in merged:
                raise ValueError(f"{name} appears in two catalogue tables")
            merged[name] = cases
    return merged


_CASES: dict[str, list[Case]] | None = None


def cases_for(name: str) -> list[Case]:
    """The cases for a function name (`numpy.sin`); [] when the catalogue has no domain for it."""
    global _CASES
    if _CASES is None:
        _CASES = _tables()
    return _CASES.get(name, [])


def introspected() -> dict[Callable, str]:
    """Public callables of numpy, numpy.linalg, numpy.fft, SciPy's ufuncs, and indexing."""
    found: dict[Callable, str] = {operator.getitem: "operator.getitem"}
    for module_name in NAMESPACES + UFUNC_NAMESPACES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for attr, value in vars(module).items():
            if attr.startswith("_") or not callable(value) or isinstance(value, type):
                continue
            if module_name in UFUNC_NAMESPACES and not isinstance(value, np.ufunc):
                continue
            try:
                found.setdefault(value, function_name(value))
            except TypeError:  # unhashable callables
                continue
    return found


def rows(offered: dict[str, Iterable[Callable]]) -> dict[str, Callable]:
    """Matrix rows, by name: the introspected functions some adapter offers, then whatever an
    adapter offers beyond them (so every offered function has a row)."""
    known = introspected()
    result: dict[str, Callable] = {}
    for functions in offered.values():
        for function in functions:
            name = known.get(function) or function_name(function)
            result.setdefault(name, function)
    return dict(sorted(result.items()))

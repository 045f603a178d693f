"""The catalogue: for each function name, the cases (inputs, static arguments) it is checked at.

The catalogue supplies domains, not the list of functions: rows of the matrix come from
introspection of NumPy and SciPy intersected with what each adapter offers (`rows()`), and a
function the catalogue has no cases for still gets a row, marked unchecked. The tables themselves
live in `tables_*.py`, as data, spelled with the builders of cases.py; this module merges them.
"""

from __future__ import annotations

import functools
import operator
from typing import Callable, Iterable

from ..rules.namespaces import NAMESPACES, dispatched_functions
from ..rules.rule import function_name
from . import settings, tables_elementwise, tables_linalg, tables_scipy, tables_shape
from .cases import Case


def _tables() -> dict[str, list[Case]]:
    merged: dict[str, list[Case]] = {}
    for module in (tables_elementwise, tables_shape, tables_linalg, tables_scipy):
        for name, cases in module.CASES.items():
            if name in merged:
                raise ValueError(f"{name} appears in two catalogue tables")
            merged[name] = cases
    return merged


_CASES: dict[str, list[Case]] | None = None


def cases_for(name: str) -> list[Case]:
    """The cases for a function name (`numpy.sin`): its table's, then one per configuration of
    the keywords it declares (rulebridge/checking/settings.py); [] when the catalogue has no
    domain for it."""
    global _CASES
    if _CASES is None:
        _CASES = _tables()
    cases = _CASES.get(name, [])
    if name not in _WITH_SETTINGS and cases:
        function = _by_name().get(name)
        extra = [] if function is None else settings.extra_cases(function, name, cases, Case)
        _WITH_SETTINGS[name] = cases + extra
    return _WITH_SETTINGS.get(name, cases)


_WITH_SETTINGS: dict[str, list[Case]] = {}


@functools.cache
def _by_name() -> dict[str, Callable]:
    return {name: function for function, name in introspected().items()}


def introspected() -> dict[Callable, str]:
    """The functions NumPy hands to a traced box (rulebridge/rules/namespaces.py), and indexing,
    by their names."""
    found: dict[Callable, str] = {operator.getitem: "operator.getitem"}
    for namespace in NAMESPACES:
        for _, function in dispatched_functions(namespace):
            found.setdefault(function, function_name(function))
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

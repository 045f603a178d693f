"""The catalogue: for each function name, the cases (inputs, static arguments) it is checked at.

The catalogue supplies domains, not the list of functions: rows of the matrix come from
introspection of NumPy and SciPy intersected with what each adapter offers (`rows()`), and a
function the catalogue has no cases for still gets a row, marked unchecked. The tables themselves
live in `tables_*.py`, as data, spelled with the builders of cases.py; this module merges them.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import operator
from typing import Any, Callable, Iterable

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


# x[i] reaches rulebridge as operator.getitem; the rest of Python's operator module is not NumPy's.
EXPORTS_OF = {"operator": ("operator.getitem",)}


def module_of(name: str) -> str:
    """The module a row belongs to: `numpy.linalg` for `numpy.linalg.solve`."""
    return name.rpartition(".")[0] or name


def exports(names: Iterable[str]) -> dict[str, list[str]]:
    """For each module among the row `names`, the public functions it exports (its callables
    that are not classes, named as rows are, aliases once): what coverage is counted against.
    A module that cannot be imported (a SciPy drop-in of a SciPy not installed) exports []."""
    found = {}
    for module_name in sorted({module_of(name) for name in names}):
        if module_name in EXPORTS_OF:
            found[module_name] = sorted(EXPORTS_OF[module_name])
            continue
        namespace = _resolve(module_name)
        members = {}
        for attr in dir(namespace) if namespace is not None else ():
            value = getattr(namespace, attr, None)
            if (attr.startswith("_") or attr == "test"  # NumPy's and SciPy's test runners
                    or not callable(value) or isinstance(value, type)):
                continue
            try:
                name = function_name(value) if inspect.ismodule(namespace) else None
            except TypeError:
                continue
            name = name if name and module_of(name) == module_name else f"{module_name}.{attr}"
            # A module's aliases (abs, absolute) count once; an object's attributes are made
            # anew on each access (bound methods), so they are told apart by name.
            members.setdefault(id(value) if inspect.ismodule(namespace) else attr, name)
        found[module_name] = sorted(set(members.values()))
    return found


def _resolve(dotted: str) -> Any:
    """The module or object a dotted name means (`scipy.stats.norm` is an object in a module)."""
    head, rest = dotted, []
    while head:
        try:
            value = importlib.import_module(head)
        except ImportError:
            head, _, last = head.rpartition(".")
            rest.insert(0, last)
            continue
        for attr in rest:
            value = getattr(value, attr, None)
        return value
    return None


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

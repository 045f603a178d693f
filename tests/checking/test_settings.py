"""The matrix checks configurations: every keyword a catalogued function declares is either
enumerated (rulebridge/checking/settings.py) or named as deliberately not, with a reason."""

from __future__ import annotations

import inspect

import numpy as np

from rulebridge.checking import settings
from rulebridge.checking.catalogue import _by_name, _tables, cases_for


def test_every_declared_keyword_of_a_catalogued_function_is_enumerated_or_explained():
    unexplained = {}
    for name in _tables():
        function = _by_name().get(name)
        if function is None or isinstance(function, np.ufunc):
            continue
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            continue
        known = set(settings.GENERAL) | set(settings.SPECIFIC.get(name, {}))
        missing = [p.name for p in parameters if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   and p.name not in known and p.name not in settings.NOT_SETTINGS]
        if missing:
            unexplained[name] = missing
    assert not unexplained


def test_the_issue_s_configurations_are_matrix_cases():
    def labels(name):
        return [sorted(case.kwargs) for case in cases_for(name)]

    assert ["where"] in labels("numpy.sum") and ["correction"] in labels("numpy.std")
    assert ["initial", "where"] in labels("numpy.max")
    assert [] in labels("numpy.linalg.svd")  # full_matrices left at its default, True
    assert ["prepend"] in labels("numpy.diff") and ["dtype"] in labels("numpy.cumsum")
    assert ["axis1", "axis2"] in labels("numpy.trace")
    assert ["norm"] in labels("numpy.fft.fft") and ["n"] in labels("numpy.fft.rfft")

"""The functions NumPy hands to a traced box, found by one scan that the adapters' catalogues
and the matrix share.

NumPy hands a call to `Traced` when the function is a ufunc (`__array_ufunc__`) or carries
NumPy's array-function dispatch (`__array_function__`, NEP 18: such functions have an
`_implementation`). Everything else, SciPy's non-ufuncs among them, converts its arguments with
`np.asarray` and never reaches the box: those need `rulebridge.import_rule`.
"""

from __future__ import annotations

import importlib
from typing import Callable

import numpy as np

# The namespaces whose dispatched functions the bundled adapters and the matrix cover.
NAMESPACES = ("numpy", "numpy.linalg", "numpy.fft", "scipy.special")


def dispatches(function: Callable) -> bool:
    """Whether NumPy hands calls of `function` on a traced value to the value.

    Parameters
    ----------
    function : callable
        A NumPy or SciPy function.

    Returns
    -------
    bool
        True for ufuncs and functions with NumPy's array-function dispatch.
    """
    return isinstance(function, np.ufunc) or hasattr(function, "_implementation")


def dispatched_functions(namespace: str) -> list[tuple[str, Callable]]:
    """The public functions of a namespace that reach a traced value through NumPy's protocols.

    Parameters
    ----------
    namespace : str
        A module name such as ``"numpy"``, ``"numpy.linalg"`` or ``"scipy.special"``; it is
        imported.

    Returns
    -------
    list of (str, callable)
        ``(name, function)`` pairs, empty when the namespace is not installed. An alias
        (``np.permute_dims`` is ``np.transpose``) comes after the name the function calls
        itself, so taking the first pair of each function keeps the canonical name.
    """
    try:
        module = importlib.import_module(namespace)
    except ImportError:
        return []
    found = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        function = getattr(module, name, None)
        # (While a trace follows plain buffers, this lookup is not the user's: it gets NumPy's
        # own function, rulebridge/writes/follow.py.)
        if callable(function) and not isinstance(function, type) and dispatches(function):
            found.append((name, function))
    found.sort(key=lambda pair: pair[0] != getattr(pair[1], "__name__", pair[0]))  # stable
    return found

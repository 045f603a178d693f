"""SciPy's public functions outside NumPy's protocols, by the name a user imports them under, and
which of them some installed adapter has a counterpart for (what `rulebridge.scipy` mirrors).

`scipy.special.logsumexp`, `scipy.stats.norm.logpdf` and `scipy.linalg.solve_triangular` call
`np.asarray` on their arguments, so a traced value never reaches rulebridge through NumPy's
protocols. The candidates are found by introspecting SciPy's modules (every public function, and
every public method of every distribution in `scipy.stats`); an adapter has a counterpart when
its `Adapter.counterpart` finds a function of the same name (`jax.scipy.stats.norm.logpdf`).
The traced-value error (`TracingError`) uses the same answer to name its fix.
"""

from __future__ import annotations

import functools
import importlib
import re
import types
from typing import Callable

import numpy as np

from ..errors import AdapterError, Declined, user_line
from .registry import REGISTRY

# The SciPy modules `rulebridge.scipy` mirrors, each as `rulebridge.scipy.<last part>`.
MODULES = ("scipy.special", "scipy.stats", "scipy.linalg", "scipy.signal", "scipy.integrate")


class Named:
    """A stand-in that `function_name` and `Adapter.counterpart` read as the SciPy function
    `name`, for asking adapters about a function by name."""

    def __init__(self, name: str) -> None:
        self.__rulebridge_name__ = name

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__rulebridge_name__} stand-in: not callable")


def candidates(module_name: str) -> dict[str, Callable]:
    """SciPy's public callables of one mirrored module that NumPy's protocols do not reach.

    Parameters
    ----------
    module_name : str
        One of `MODULES` (`"scipy.stats"`).

    Returns
    -------
    dict of str to callable
        By public name: functions (not ufuncs, not classes), and for `scipy.stats` the public
        methods of every distribution object (`"scipy.stats.norm.logpdf"`).
    """
    return dict(_candidates(module_name))


@functools.cache
def _candidates(module_name: str) -> tuple[tuple[str, Callable], ...]:
    module = importlib.import_module(module_name)
    found = []
    for attr in sorted(getattr(module, "__all__", None) or vars(module)):
        if attr.startswith("_"):
            continue
        value = getattr(module, attr, None)
        if module_name == "scipy.stats" and is_distribution(value):
            found += [(f"{module_name}.{attr}.{method}", bound)
                      for method, bound in methods_of(value)]
        elif is_candidate(value):
            found.append((f"{module_name}.{attr}", value))
    return tuple(found)


def is_candidate(value) -> bool:
    """Is `value` a function NumPy's protocols do not reach (not a ufunc, class or module)?

    Parameters
    ----------
    value : object
        An attribute of a mirrored SciPy module, or a method of a distribution.

    Returns
    -------
    bool
        True for a plain function or bound method (what `rulebridge.scipy` makes a drop-in).
    """
    return (callable(value) and not isinstance(value, (type, np.ufunc, types.ModuleType))
            and not isinstance(value, functools.partial))


def methods_of(distribution) -> list[tuple[str, Callable]]:
    """A `scipy.stats` distribution's public methods that are candidates, by name."""
    found = []
    for method in sorted(dir(distribution)):
        bound = getattr(distribution, method, None) if not method.startswith("_") else None
        if bound is not None and is_candidate(bound):
            found.append((method, bound))
    return found


def is_distribution(value) -> bool:
    """Is `value` a `scipy.stats` distribution object (`norm`, `multivariate_normal`)?"""
    from scipy.stats import rv_continuous, rv_discrete
    from scipy.stats._multivariate import multi_rv_generic

    return isinstance(value, (rv_continuous, rv_discrete, multi_rv_generic))


def distribution_names() -> list[str]:
    """`norm`, `t`, `multivariate_normal`, ...: the distribution objects of `scipy.stats`."""
    stats = importlib.import_module("scipy.stats")
    return [a for a in sorted(vars(stats)) if not a.startswith("_")
            and is_distribution(getattr(stats, a))]


def sources_with_counterpart(name: str) -> tuple[str, ...]:
    """The installed adapters whose `counterpart` finds a function for a SciPy name.

    Parameters
    ----------
    name : str
        A public SciPy name (`"scipy.stats.norm.logpdf"`).

    Returns
    -------
    tuple of str
        Adapter names, in the registry's order. The adapters are loaded to answer.
    """
    return _sources_with_counterpart(name, REGISTRY.order())


@functools.cache
def _sources_with_counterpart(name: str, order: tuple[str, ...]) -> tuple[str, ...]:
    found = []
    for source in order:
        try:
            REGISTRY.adapter(source).counterpart(Named(name))
        except (Declined, AdapterError):
            continue
        found.append(source)
    return tuple(found)


def mirrored_module(name: str) -> str | None:
    """`scipy.stats` for `scipy.stats.norm.logpdf`: the mirrored module a public name is in."""
    for module in MODULES:
        if name.startswith(module + "."):
            return module
    return None


# -- naming the SciPy function a traced value reached, for TracingError ----------------------


def scipy_caller(frame: types.FrameType | None) -> str | None:
    """The SciPy function the user's code called that converted a traced value.

    Parameters
    ----------
    frame : frame or None
        The frame that called `Traced.__array__` (NumPy's own frames above it are skipped).

    Returns
    -------
    str or None
        The public name (`"scipy.stats.norm.logpdf"`) of the outermost function, in the run of
        SciPy frames between `frame` and the user's code, whose name SciPy exports (decorators'
        wrappers are skipped); None when the user's code converted the value itself.
    """
    chain = []
    while frame is not None:
        top = frame.f_globals.get("__name__", "").split(".")[0]
        if top == "scipy":
            chain.append(frame)
        elif top != "numpy" and not frame.f_globals.get("_FRAMES_ARE_NUMPYS"):
            # (a module that stands in for numpy's functions, rulebridge/writes/follow.py)
            break  # the user's code: it called SciPy (chain), or converted the value itself
        frame = frame.f_back
    for outer in reversed(chain):
        name = _public_name(outer)
        if name:
            return name
    return None


def _public_name(frame: types.FrameType) -> str | None:
    function = frame.f_code.co_name
    owner = frame.f_locals.get("self")
    if owner is not None and is_distribution(getattr(owner, "dist", None)):
        owner, function = owner.dist, "(...)." + function  # a frozen distribution's method
    if owner is not None and is_distribution(owner):
        stats = importlib.import_module("scipy.stats")
        frozen = function.startswith("(...).")
        for attr in distribution_names():
            named = getattr(stats, attr)
            if named is owner or frozen and type(named) is type(owner):  # freezing copies it
                if frozen:
                    return f"scipy.stats.{attr}{function}"
                return f"scipy.stats.{attr}.{function}" if hasattr(owner, function) else None
        return None
    name = _exported(frame.f_globals.get("__name__", ""), function)
    if name is None:
        # A decorator's wrapper (SciPy's batching and nan-policy wrappers convert the arguments
        # before the function runs): the function it wraps is one of its closure's values.
        for value in frame.f_locals.values():
            if isinstance(value, types.FunctionType):
                name = _exported(value.__module__ or "", value.__name__)
                if name is not None:
                    return name
    return name


def _exported(module: str, function: str) -> str | None:
    """`scipy.linalg.solve_triangular` for ("scipy.linalg._basic", "solve_triangular"): the
    public module of a SciPy module (its path up to the first private part), if it exports it."""
    parts = module.split(".")
    if parts[0] != "scipy":
        return None
    public = ".".join(parts[:next((i for i, p in enumerate(parts) if p.startswith("_")),
                                  len(parts))])
    try:
        exported = getattr(importlib.import_module(public), function, None)
    except ImportError:
        return None
    return f"{public}.{function}" if callable(exported) and public != "scipy" else None


def fix_for(name: str) -> str:
    """The sentence, with the line of code, that makes a SciPy function differentiable.

    Parameters
    ----------
    name : str
        A public SciPy name, as `scipy_caller` returns it.

    Returns
    -------
    str
        The `rulebridge.scipy` import when it mirrors the function, else the `import_rule` line
        (with an `equivalent=` when no installed source has a function of that name).
    """
    if "(...)." in name:
        return unfrozen(name)
    module = mirrored_module(name)
    try:
        sources = sources_with_counterpart(name)
    except Exception:  # naming the fix must never hide the error being reported
        sources = ()
    short = name.rpartition(".")[2]
    if sources and module is not None:
        alias = module.rpartition(".")[2]
        return (f"rulebridge.scipy has it: write `import rulebridge.scipy.{alias} as {alias}` "
                f"instead of `import {module} as {alias}` (rulebridge.scipy"
                f"{name[len('scipy'):]} is SciPy's function, with a rule from "
                f"{' and '.join(sources)})")
    if sources:
        return (f"import its rule from {' and '.join(sources)}: `{short} = "
                f"rulebridge.import_rule({name})`, and call {short}")
    return (f"no installed rulebridge adapter has a function named like it, so give it the rule "
            f"of a function with the same meaning: `{short} = rulebridge.import_rule({name}, "
            "source=<adapter>, equivalent=<that source's function>)`, and call " + short)


def unfrozen(name: str) -> str:
    """The fix for a frozen distribution's method (`scipy.stats.norm(...).logpdf`): the
    parameters passed to the method itself, spelled from the user's line when it shows the call
    (`norm.logpdf(x, m, 1)` for `norm(m, 1).logpdf(x)`)."""
    distribution, _, method = name[len("scipy.stats."):].partition("(...).")
    line = user_line()
    inner = r"((?:[^()]|\([^()]*\))*)"  # arguments, with one level of parentheses
    found = re.search(rf"((?:\w+\.)*){re.escape(distribution)}\({inner}\)\.(\w+)\({inner}\)",
                      line)
    if found:
        prefix, parameters, method, values = found.groups()
        prefix = "rulebridge." + prefix if prefix.startswith("scipy.") else prefix
        call = f"{prefix}{distribution}.{method}({values}, {parameters})"
    else:
        shapes = getattr(getattr(importlib.import_module("scipy.stats"), distribution, None),
                         "shapes", None)
        parameters = ", ".join(filter(None, [shapes, "loc", "scale"]))
        call = f"{distribution}.{method}(x, {parameters})"
    return (f"{call}  # a frozen distribution ({distribution}(...)) converts its parameters "
            f"to plain arrays: pass them to the method, from rulebridge.scipy.stats")

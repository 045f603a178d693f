"""Measured pullback speed: how `source=None` chooses between rules of equal verification status.

`measure_rules(function, *args)` times each source's pullback at those arguments and records the
median in the registry under (function, signature, source). Nothing is timed behind the user's
back: a measurement exists only where someone asked for it, so the choice stays reproducible.
"""

from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import AdapterError, NoRuleError
from .registry import REGISTRY
from .rule import function_name
from .signature import format_signature, is_differentiable, signature_of


def measure_rules(function: Callable, *args: Any, sources: Sequence[str] | None = None,
                  repeat: int = 7, **kwargs: Any) -> dict[str, float]:
    """Time each source's pullback for `function(*args, **kwargs)`, and remember the result.

    From then on, among rules of equal verification status for `function` at this signature,
    `source=None` picks the fastest. Measure at the sizes you run: a signature covers every size.

    Parameters
    ----------
    function : callable
        The NumPy or SciPy function (or one given a rule by `import_rule`).
    *args
        Its positional arguments; every float or complex array argument is traced.
    sources : sequence of str, optional
        The sources to time (default: every installed adapter).
    repeat : int, optional
        Calls timed per source, after one warm-up call (so a JIT compile is not counted).
    **kwargs
        Its keyword arguments.

    Returns
    -------
    dict of str to float
        Seconds per pullback (the median), by source, with a cotangent of ones for every float or
        complex output. Sources without a rule are left out.
    """
    signature = signature_of(args)
    argnums = tuple(i for i, a in enumerate(args) if _differentiable(a))
    seconds: dict[str, float] = {}
    for name in sources if sources is not None else REGISTRY.order(function):
        try:
            rule = REGISTRY.candidate(function, signature, name)  # timed, not checked
        except (AdapterError, NoRuleError):
            continue  # not installed, failed to load, or no rule: nothing to measure
        if rule.missing:
            continue
        out, residuals = rule.forward(args, kwargs)
        cotangent = _ones_like_outputs(out)
        rule.pullback(residuals, cotangent, argnums)
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            rule.pullback(residuals, cotangent, argnums)
            samples.append(time.perf_counter() - start)
        seconds[name] = statistics.median(samples)
    for name, value in seconds.items():
        REGISTRY.set_seconds(function_name(function), name, format_signature(signature), value)
    return seconds


def _differentiable(x: Any) -> bool:
    if type(x) in (list, tuple):
        return bool(x) and all(_differentiable(item) for item in x)
    return is_differentiable(x)


def _ones_like_outputs(out: Any) -> Any:
    if isinstance(out, (tuple, list)):
        return tuple(_ones_like_outputs(item) for item in out)
    if not _differentiable(out):
        return None
    if isinstance(out, np.ndarray):
        return np.ones_like(out)
    return np.ones((), np.result_type(out))[()]

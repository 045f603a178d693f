"""Statements that call catalogued functions with the keywords they declare, drawn from the same
menu the compatibility matrix checks (rulebridge/checking/settings.py: `where=` with `initial=`,
`ddof`, `correction`, `keepdims`, `axis=None` or a tuple, `dtype`, `n`/`norm` of FFTs, ...),
one or two settings at a time and spelled by keyword. Each function's keywords are read from
its signature, so a keyword NumPy adds is drawn without a change here. Each call is a key of its
own, verified by the shipped matrix or checked at first use: a source that mishandles a setting
must come out as a refusal, never as a wrong number."""

from __future__ import annotations

import inspect

import numpy as np

from rulebridge.checking.settings import GENERAL, SPECIFIC

# function name -> (the call's template, with {a} and {kw}; kind of kink its margin guards)
FUNCTIONS = {
    "sum": ("np.sum({a}{kw})", None), "mean": ("np.mean({a}{kw})", None),
    "prod": ("np.prod(np.tanh({a}) + 1.5{kw})", None),
    "max": ("np.max({a}{kw})", "ties"), "min": ("np.min({a}{kw})", "ties"),
    "amax": ("np.amax({a}{kw})", "ties"), "amin": ("np.amin({a}{kw})", "ties"),
    "std": ("np.std({a}{kw})", "spread"), "var": ("np.var({a}{kw})", "spread"),
    "nansum": ("np.nansum({a}{kw})", None), "nanmean": ("np.nanmean({a}{kw})", None),
    "nanstd": ("np.nanstd({a}{kw})", "spread"), "nanvar": ("np.nanvar({a}{kw})", "spread"),
    "nanmax": ("np.nanmax({a}{kw})", "ties"), "nanmin": ("np.nanmin({a}{kw})", "ties"),
    "cumsum": ("np.cumsum({a}{kw})", None),
    "cumprod": ("np.cumprod(np.tanh({a}) + 1.5{kw})", None),
    "average": ("np.average({a}{kw})", None), "median": ("np.median({a}{kw})", "ties"),
    "ptp": ("np.ptp({a}{kw})", "ties"), "trace": ("np.trace({a}{kw})", None),
    "diff": ("np.diff({a}{kw})", None), "linalg.norm": ("np.linalg.norm({a}{kw})", "norm"),
    "fft.fft": ("np.real(np.fft.fft({a}{kw}))", None),
    "fft.rfft": ("np.imag(np.fft.rfft({a}{kw}))", None),
    "fft.ifft": ("np.real(np.fft.ifft({a}{kw}))", None),
}
# Settings whose values need a constant of the program's shape.
_NEEDS_CONSTANT = {"mask", "weights"}


def _function(name: str):
    function = np
    for part in name.split("."):
        function = getattr(function, part)
    return function


def menu(name: str) -> dict[str, list[dict]]:
    """The settings of `np.<name>` the matrix checks, by keyword, for the keywords it declares."""
    declared = set(inspect.signature(_function(name)).parameters)
    specific = SPECIFIC.get(f"numpy.{name}", {})
    return {**{k: v for k, v in GENERAL.items() if k in declared},
            **{k: v for k, v in specific.items() if k in declared}}


def _spelled(b, value, shape) -> str | None:
    if isinstance(value, str) and value in _NEEDS_CONSTANT:
        return b.const(shape, "mask") if value == "mask" else f"(np.abs({b.const(shape)}) + 0.5)"
    if value is np.float64:
        return "np.float64"
    if isinstance(value, float) and np.isinf(value):
        return "np.inf" if value > 0 else "-np.inf"
    return repr(value)


def _ties(values, initial) -> float:
    """The smallest gap between any two entries (and `initial`): a max, min, median or ptp is
    smooth wherever no two candidates are closer than the margin, whichever entries a mask or
    an axis leaves."""
    flat = np.ravel(values)
    if initial is not None:
        flat = np.append(flat, initial)
    if flat.size < 2:
        return np.inf
    return float(np.min(np.diff(np.sort(flat))))


def _step(name: str):
    template, kink = FUNCTIONS[name]
    settings = menu(name)

    def step(b):
        a = b.var(lambda v: 1 <= np.ndim(v) <= 2 and np.size(v) >= 2)
        if a is None or not settings:
            return False
        shape = np.shape(b.value(a))
        chosen = [b.choice(sorted(settings))]
        if len(settings) > 1 and b.coin():
            chosen.append(b.choice(sorted(set(settings) - set(chosen))))
        kwargs: dict[str, str] = {}
        values: dict = {}
        for keyword in chosen:
            for key, value in b.choice(settings[keyword]).items():
                kwargs[key] = _spelled(b, value, shape)
                values[key] = value
        if "axis" not in kwargs and "axis" in inspect.signature(_function(name)).parameters \
                and b.coin():
            kwargs["axis"] = b.choice(["None", "0", "-1"] + (["(0, 1)"] if len(shape) == 2
                                                                else []))
        kw = "".join(f", {k}={v}" for k, v in kwargs.items())
        margins = ()
        if kink == "ties":
            initial = values.get("initial")
            margins = (lambda env: _ties(env[a], initial),)
        elif kink == "spread":  # a spread near zero: std's derivative grows without bound
            axis = eval(kwargs.get("axis", "None"))
            margins = (lambda env: 10 * float(np.min(np.var(env[a], axis=axis))),)
        elif kink == "norm":
            margins = (lambda env: min(_ties(np.abs(env[a]), None),
                                       float(np.min(np.abs(env[a])))),)
        return b.emit(f"{{out}} = {template.format(a=a, kw=kw)}", margins)

    return step


STEPS = {name: _step(name) for name in FUNCTIONS if menu(name)}

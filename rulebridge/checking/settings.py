"""The configurations the matrix checks beside a function's table cases: one case per meaningful
setting of each keyword the function declares (`where=`, `ddof`, `correction`, `keepdims`,
`axis=None` or a tuple, `initial`, `dtype`, `ord`, `mode`, `n`/`norm` of FFTs, `full_matrices`,
`prepend`/`append`, ...).

A rule is trusted only at the keys it was verified at (rulebridge/rules/keys.py), so every
setting checked here is a key the shipped status covers and a user does not pay a check at
first use for. Settings are found by introspection: a function gets the cases of the keywords
its signature declares, built on its first table case that has a matrix argument, and only
those NumPy itself accepts at the case's inputs. `NOT_SETTINGS` names the keywords that are
deliberately not enumerated, and why; a test holds every catalogued function's keywords to one
of the two.
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from .domains import POSITIVE, Arr, Bools, Seq, build_args

# keyword -> the values to check, each as a dict of keywords (several when they go together)
GENERAL: dict[str, list[dict]] = {
    "axis": [{"axis": None}],
    "keepdims": [{"keepdims": True}],
    "where": [{"where": "mask"}, {"where": "mask", "initial": 0.5}],
    "initial": [{"initial": 0.5}],
    "ddof": [{"ddof": 1}],
    "correction": [{"correction": 1}],
    "dtype": [{"dtype": np.float64}],
    "ord": [{"ord": np.inf}, {"ord": -np.inf}, {"ord": 3}],
    "full_matrices": [{"full_matrices": True}],
    "compute_uv": [{"compute_uv": False}],
    "prepend": [{"prepend": 0}, {"prepend": 0.5, "append": 1.5}],
    "append": [{"append": 1.5}],
    "offset": [{"offset": 1}],
    "axis1": [{"axis1": 1, "axis2": 0}],
    "decimals": [{"decimals": 1}],
    "include_initial": [{"include_initial": True}],
    "method": [{"method": "midpoint"}, {"method": "nearest"}],
    "weights": [{"weights": "weights"}],
    "returned": [{"returned": True}],
    "rowvar": [{"rowvar": False}],
    "bias": [{"bias": True}],
    "edge_order": [{"edge_order": 2}],
    "dx": [{"dx": 0.5}],
    "UPLO": [{"UPLO": "U"}],
    "upper": [{"upper": True}],
    "increasing": [{"increasing": True}],
    "optimize": [{"optimize": True}],
}
# Settings whose values depend on the function.
_FFT = {"n": [{"n": 3}, {"n": 8}], "norm": [{"norm": "ortho"}, {"norm": "forward"}]}
SPECIFIC: dict[str, dict[str, list[dict]]] = {
    **{f"numpy.fft.{name}": _FFT for name in "fft ifft rfft irfft hfft ihfft".split()},
    **{f"numpy.fft.{name}": {"norm": _FFT["norm"], "s": [{"s": (2, 6)}]}
       for name in "fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn".split()},
    "numpy.linalg.qr": {"mode": [{"mode": "complete"}, {"mode": "r"}]},
    "numpy.pad": {"mode": [{"mode": "edge"}, {"mode": "wrap"}, {"mode": "symmetric"}]},
    "numpy.convolve": {"mode": [{"mode": "valid"}]},
    "numpy.correlate": {"mode": [{"mode": "valid"}, {"mode": "same"}]},
    "numpy.take": {"mode": [{"mode": "clip"}, {"mode": "wrap"}]},
    "numpy.linalg.matrix_norm": {"ord": [{"ord": np.inf}, {"ord": 2}, {"ord": -1}]},
    "numpy.linalg.norm": {"ord": [{"ord": np.inf}, {"ord": -np.inf}, {"ord": 3}]},
}

# Keywords not enumerated, by why.
NOT_SETTINGS: dict[str, str] = {
    **dict.fromkeys(["out"], "the engine's own (writes into a buffer), not a rule's"),
    **dict.fromkeys(["casting", "order", "subok", "copy", "like", "signature", "extobj",
                     "kind", "stable", "descending", "overwrite_input"],
                    "no effect on the value or the derivative NumPy defines"),
    **dict.fromkeys(["a_min", "a_max", "min", "max", "nan", "posinf", "neginf", "q",
                     "values", "constant_values", "end_values", "mean", "x", "y", "xp",
                     "fp", "left", "right", "period", "fill_value", "to_end", "to_begin",
                     "obj", "indices", "condlist", "choicelist", "default", "v", "b",
                     "condition", "arr", "a", "arrays", "array", "tup", "m", "c", "p",
                     "seq_of_seq", "seq1", "seq2", "w", "xs", "ys", "r", "k", "val",
                     "shape", "newshape", "reps", "repeats", "shift", "axes", "source",
                     "destination", "start", "pad_width", "indices_or_sections", "ary",
                     "s", "sorter", "side", "A", "B", "x1", "x2", "u", "deg", "rcond",
                     "hermitian", "tol", "rtol", "atol", "equal_nan", "return_index",
                     "return_inverse", "return_counts", "assume_unique", "invert", "trim",
                     "bins", "ind", "fweights", "aweights", "full", "cov",
                     "interpolation", "varargs", "spacing", "scale", "sparse", "operands",
                     "subscripts", "ndmin", "ind", "N",
                     "precision", "tensor", "xa", "ya", "stop", "num", "endpoint"],
                    "an operand, an index or a shape: the table cases pass it"),
    **dict.fromkeys(["a1", "a2", "ar", "choices", "element", "f", "filt", "kth", "new_shape",
                     "seq_of_zeros", "test_elements", "z", "discont"],
                    "an operand, an index or a shape: the table cases pass it"),
    **dict.fromkeys(["device", "sorted"], "no effect on the value or the derivative NumPy defines"),
    **dict.fromkeys(["axisa", "axisb", "axisc", "retstep"],
                    "not enumerated yet: keys with them are checked at first use"),
    **dict.fromkeys(["axis2", "mode", "n", "norm", "s"],
                    "enumerated with its partner or per function"),
}


def extra_cases(function: Callable, name: str, cases: list, case_type: type) -> list:
    """The configuration cases of `function` beyond its table `cases` (see the module)."""
    base = _base(cases)
    if base is None or isinstance(function, np.ufunc):  # a ufunc's keywords: see NOT_SETTINGS
        return []
    declared = _keywords(function)
    menu = {**{k: v for k, v in GENERAL.items() if k in declared},
            **{k: v for k, v in SPECIFIC.get(name, {}).items() if k in declared}}
    shape = _first_shape(base)
    seen = {_spelling(c) for c in cases}
    found = []
    for settings in menu.values():
        for setting in settings:
            kwargs = {**base.kwargs, **{k: _concrete(v, shape) for k, v in setting.items()}}
            # float64 only (the complex column checks table cases): a setting may change the
            # outputs (compute_uv=False) that the base case's complex_outputs name
            extra = case_type(base.args, kwargs, base.outputs, None)
            if _spelling(extra) in seen or not _numpy_accepts(function, extra):
                continue
            seen.add(_spelling(extra))
            found.append(extra)
    return found


def _keywords(function: Callable) -> set[str]:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()


def _base(cases: list):
    for case in cases:
        if case.args and isinstance(case.args[0], Arr) and len(case.args[0].shape) == 2:
            return case
    return cases[0] if cases and case_arrays(cases[0]) else None


def case_arrays(case) -> bool:
    return any(isinstance(a, (Arr, Seq)) for a in case.args)


def _first_shape(case) -> tuple:
    for a in case.args:
        if isinstance(a, Arr):
            return a.shape
    return ()


def _concrete(value, shape: tuple):
    if value == "mask":
        return Bools(shape)
    if value == "weights":
        return Arr(POSITIVE, shape, dtype="float64")
    return value


def _spelling(case) -> str:
    """A table case with the same keywords already checks that setting, whatever its shapes."""
    return repr(sorted((k, repr(v)) for k, v in case.kwargs.items()))


def _numpy_accepts(function: Callable, case) -> bool:
    rng, dtype = np.random.default_rng(0), np.dtype(np.float64)
    args = build_args(case.args, rng, dtype)
    kwargs = dict(zip(case.kwargs, build_args(tuple(case.kwargs.values()), rng, dtype)))
    try:
        with np.errstate(all="ignore"):
            out = function(*args, **kwargs)
    except Exception:
        return False
    return all(np.size(o) for o in (out if isinstance(out, (tuple, list)) else (out,)))


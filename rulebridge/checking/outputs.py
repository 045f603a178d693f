"""Why the outputs of one call are not another's: an imported function's equivalent is compared
with the function itself at the inputs it is first used at (rulebridge/import_rule.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..rules.signature import INEXACT_KINDS


def outputs_mismatch(expected: Any, got: Any, eps: float = 0.0,
                     labels: list[str] | None = None) -> str:
    """Why `got` is not `expected` (the outputs of one call), or "" when they agree: count,
    shapes, dtypes, and values to half the digits of their precision (or of `eps`, the inputs'
    machine epsilon, when that is coarser). `labels` name the outputs (default `output k`)."""
    several = isinstance(expected, (tuple, list))
    want = list(expected) if several else [expected]
    have = list(got) if isinstance(got, (tuple, list)) else [got]
    if several != isinstance(got, (tuple, list)) or len(want) != len(have):
        return f"it returns {_count(got)}, the function returns {_count(expected)}"
    for k, (w, g) in enumerate(zip(want, have)):
        label = labels[k] if labels else f"output {k}" if several else "the output"
        w_dtype, g_dtype = np.result_type(w), np.result_type(g)
        if np.shape(w) != np.shape(g) or w_dtype != g_dtype:
            return (f"{label} is {g_dtype}{list(np.shape(g))} where the function's is "
                    f"{w_dtype}{list(np.shape(w))}")
        if w_dtype.kind in INEXACT_KINDS:
            rtol = float(np.sqrt(max(np.finfo(w_dtype).eps, eps)))
            w64, g64 = np.asarray(w, np.complex128), np.asarray(g, np.complex128)
            finite = np.isfinite(w64)
            scale = float(np.max(np.abs(w64[finite]), initial=1.0))
            if not np.allclose(g64, w64, rtol=rtol, atol=rtol * scale, equal_nan=True):
                worst = float(np.nanmax(np.abs(g64 - w64), initial=0.0))
                return (f"{label} differs in value (max |difference| {worst:.3g} against values "
                        f"up to {scale:.3g}; tolerance {rtol:.1e} relative)")
        elif not np.array_equal(w, g):
            return f"{label} differs in value"
    return ""


def _count(out) -> str:
    if isinstance(out, (tuple, list)):
        return f"{len(out)} outputs"
    return "one output"

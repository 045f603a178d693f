"""Helpers every adapter needs, so none of them writes its own: which signatures a float source
can take, and putting a source's cotangent into the exact shape and dtype of its argument."""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..errors import Declined
from .levels import Box
from .signature import Signature, SpecInfo, format_spec

#: The dtypes rulebridge differentiates: float32, float64 and complex128.
DIFFERENTIABLE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex128))
# Arrays that may appear beside the differentiable ones: masks, indices, counts.
PASSIVE_KINDS = "biu"
SCALAR_TYPES = (bool, int, float, complex, np.bool_, np.integer, np.float32, np.float64,
                np.complex128)
STATIC_TYPES = (type(None), str, slice, type(Ellipsis), tuple, list, np.dtype, type)


def decline_unsupported(signature: Signature,
                        dtypes: Iterable[np.dtype] = DIFFERENTIABLE_DTYPES) -> None:
    """Decline a signature a float source cannot take, for an adapter's `build_rule`.

    Parameters
    ----------
    signature : Signature
        The signature `build_rule` was asked for.
    dtypes : iterable of numpy.dtype, optional
        The float and complex dtypes the source accepts (default: `DIFFERENTIABLE_DTYPES`).

    Raises
    ------
    Declined
        Unless every argument is an exact ndarray of one of `dtypes` (or a bool or int array), a
        scalar, or a static value such as an axis or a shape; the reason names the argument.
    """
    dtypes = tuple(dtypes)
    for position, spec in enumerate(signature):
        reason = _refusal(SpecInfo.of(spec), dtypes)
        if reason:
            raise Declined(f"argument {position} is {format_spec(spec)}: {reason}")


def _refusal(info: SpecInfo, dtypes: tuple) -> str:
    if info.kind == "subclass":
        return (f"{info.type.__name__} is an ndarray subclass with its own semantics; only exact "
                "np.ndarray is supported")
    if info.kind == "array":
        if info.dtype in dtypes or info.dtype.kind in PASSIVE_KINDS:
            return ""
        accepted = ", ".join(d.name for d in dtypes)
        return f"dtype {info.dtype} is not supported (accepted: {accepted}; bool and int arrays " \
               "only as non-differentiable arguments)"
    if info.kind == "sequence":
        for item in info.items:
            reason = _refusal(item, dtypes)
            if reason:
                return reason
        return ""
    if issubclass(info.type, SCALAR_TYPES) or issubclass(info.type, STATIC_TYPES):
        return ""
    return f"a {info.type.__name__} is not an array, a scalar or a static argument"


def conform_cotangent(ct: Any, primal: Any) -> Any:
    """A source's cotangent in the form the engine requires: the dtype of its argument.

    Parameters
    ----------
    ct : array_like or None
        The cotangent a source computed; None (a zero cotangent) is returned as it is.
    primal : array_like
        The argument it is the cotangent of.

    Returns
    -------
    numpy.ndarray or scalar
        `ct` with `primal`'s dtype: a complex cotangent of a real argument keeps its real part
        (the JAX and autograd convention). It is an ndarray when `primal` is one, a scalar when
        `primal` is a scalar. A wrong shape is left as it is, for the engine's contract check.
    """
    if ct is None:
        return None
    target = primal.dtype if hasattr(primal, "dtype") else np.result_type(primal)
    if isinstance(ct, Box):  # under nesting (rulebridge/rules/levels.py): recorded, not copied
        if ct.dtype.kind == "c" and target.kind != "c":
            ct = np.real(ct)
        return ct if ct.dtype == target else np.astype(ct, target)
    ct_dtype = getattr(ct, "dtype", None)
    if ct_dtype is None:
        ct = np.asarray(ct)
        ct_dtype = ct.dtype
    if ct_dtype != target:
        if ct_dtype.kind == "c" and target.kind != "c":
            ct = np.real(ct)
        ct = np.asarray(ct).astype(target, copy=False)
    if isinstance(primal, np.ndarray):
        if type(ct) is not np.ndarray:
            ct = np.asarray(ct)  # a wrong shape is left for the engine's contract check
    elif type(ct) is np.ndarray and ct.shape == ():
        ct = ct[()]
    return ct

"""Concrete signatures: the exact type of each positional argument of a call.

A spec is computed for every argument of every recorded op, so it is a plain tuple or a type
object: cheap to build, cheap to hash. `SpecInfo` is the readable view adapters use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

_ndarray = np.ndarray
_dtype = np.dtype
_array_like = (np.ndarray, np.generic)

Spec = Any  # (dtype, ndim) | (cls, dtype, ndim) | (list|tuple, (spec, ...)) | type
#: The type of a signature: a plain tuple of the specs (`spec_of`) of a call's positional
#: arguments, cheap to build and hash on every recorded op. Its text form (`format_signature`) is
#: ``(float64[:, :], float64[:])``.
Signature = tuple

# The dtype kinds that carry a gradient: float and complex. Hot paths test `dtype.kind in
# INEXACT_KINDS` inline; everything else asks `is_differentiable`.
INEXACT_KINDS = frozenset("fc")


def is_differentiable(x: Any) -> bool:
    """Whether a value can carry a gradient: the one answer the API, the tape, the checks and
    the adapters give.

    Parameters
    ----------
    x : object
        Any value.

    Returns
    -------
    bool
        True for an array or scalar whose dtype is float or complex (NumPy's, or any array type
        with a NumPy dtype) and for a Python float or complex; False otherwise (ints, bools,
        strings, object arrays).
    """
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return getattr(dtype, "kind", None) in INEXACT_KINDS
    return isinstance(x, (float, complex))


def spec_of(x: Any) -> Spec:
    """The spec of one argument: the concrete type rules are keyed on.

    Parameters
    ----------
    x : object
        A plain value (not a traced one).

    Returns
    -------
    spec
        ``(dtype, ndim)`` for an exact ndarray, ``(cls, dtype, ndim)`` for an ndarray subclass,
        ``(list or tuple, (spec, ...))`` for a list or tuple holding arrays, and ``type(x)`` for
        anything else (a scalar, a shape, an axis, None). Read it with `SpecInfo.of`.
    """
    cls = type(x)
    if cls is _ndarray:
        return (x.dtype, x.ndim)
    if isinstance(x, _ndarray):
        return (cls, x.dtype, x.ndim)
    if (cls is list or cls is tuple) and x and any(isinstance(item, _array_like) for item in x):
        return (cls, tuple(spec_of(item) for item in x))
    return cls


def signature_of(args: tuple) -> Signature:
    """The signature of a call: the spec of each positional argument.

    Parameters
    ----------
    args : tuple
        The call's positional arguments, plain values.

    Returns
    -------
    Signature
        ``tuple(spec_of(a) for a in args)``.
    """
    # Runs for every recorded op: exact ndarrays, the common case, are spelled out inline.
    if len(args) == 1:
        x = args[0]
        return ((x.dtype, x.ndim),) if type(x) is _ndarray else (spec_of(x),)
    return tuple([(x.dtype, x.ndim) if type(x) is _ndarray else spec_of(x) for x in args])


@dataclass(frozen=True)
class SpecInfo:
    """A readable view of a spec, for adapters and error messages."""

    kind: str  # "array", "subclass", "sequence" or "other"
    dtype: np.dtype | None = None
    ndim: int | None = None
    type: type | None = None  # the subclass, the sequence type, or the scalar/static type
    items: tuple = ()

    @classmethod
    def of(cls, spec: Spec) -> "SpecInfo":
        if isinstance(spec, tuple):
            if len(spec) == 2 and isinstance(spec[0], _dtype):
                return cls("array", dtype=spec[0], ndim=spec[1])
            if len(spec) == 3:
                return cls("subclass", dtype=spec[1], ndim=spec[2], type=spec[0])
            return cls("sequence", type=spec[0], items=tuple(cls.of(s) for s in spec[1]))
        return cls("other", type=spec)

    @property
    def is_inexact_array(self) -> bool:
        return self.kind == "array" and self.dtype.kind in INEXACT_KINDS


def format_spec(spec: Spec) -> str:
    """A spec as text, in Numba's spelling.

    Parameters
    ----------
    spec : spec
        From `spec_of`.

    Returns
    -------
    str
        ``float64[:, :]`` (a 2-d array), ``float64`` (0-d), ``matrix(float64[:, :])`` (a
        subclass), ``list[float64[:], float64[:]]``, or a type's name (``float``, ``int``).
    """
    info = SpecInfo.of(spec)
    if info.kind == "array":
        return _format_array(info.dtype, info.ndim)
    if info.kind == "subclass":
        return f"{info.type.__name__}({_format_array(info.dtype, info.ndim)})"
    if info.kind == "sequence":
        return f"{info.type.__name__}[{', '.join(format_spec(s) for s in spec[1])}]"
    return getattr(spec, "__name__", repr(spec))


def format_signature(signature: Signature) -> str:
    """A signature as text: its specs' texts in parentheses; `parse_signature` reads it back.

    Parameters
    ----------
    signature : Signature

    Returns
    -------
    str
        For example ``(float64[:, :], float64[:])``.
    """
    return "(" + ", ".join(format_spec(s) for s in signature) + ")"


def _format_array(dtype: np.dtype, ndim: int) -> str:
    if ndim == 0:
        return dtype.name
    return f"{dtype.name}[{', '.join(':' * ndim)}]"


_SCALAR_NAMES = {t.__name__: t for t in (bool, int, float, complex, str, slice, tuple, list,
                                         type(None))}


def parse_signature(text: "str | tuple") -> Signature:
    """Read a signature from its text: the inverse of `format_signature`.

    Parameters
    ----------
    text : str or tuple
        ``"(float64[:, :], float64[:])"``; one spec without parentheses (``"float32[:]"``) is a
        one-argument signature. A dtype name alone (``"float64"``) is a 0-d array; ``float``,
        ``int``, ``complex`` and ``bool`` are Python scalars. A tuple of spec texts or specs is
        accepted too.

    Returns
    -------
    Signature
    """
    if isinstance(text, tuple):
        return tuple(_parse_spec(s) if isinstance(s, str) else s for s in text)
    body = text.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    parts, depth, start = [], 0, 0
    for i, char in enumerate(body):
        depth += char == "["
        depth -= char == "]"
        if char == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return tuple(_parse_spec(p) for p in parts if p.strip())


def _parse_spec(text: str) -> Spec:
    text = text.strip()
    name, _, dims = text.partition("[")
    if not dims and name in _SCALAR_NAMES:
        return _SCALAR_NAMES[name]
    try:
        dtype = np.dtype(name)
    except TypeError:
        raise ValueError(f"cannot read {text!r} as a spec: expected a dtype with dimensions "
                         "such as 'float64[:, :]', a 0-d 'float32', or a scalar type such as "
                         "'float'") from None
    ndim = dims.count(":") if dims else 0
    if dims and (not dims.endswith("]") or dims[:-1].replace(":", "").replace(",", "").strip()):
        raise ValueError(f"cannot read the dimensions of {text!r}: write one ':' per dimension, "
                         "e.g. 'float64[:, :]'")
    return (dtype, ndim)

"""autograd's VJP makers, run without autograd's boxing layer.

A pullback never sees an autograd box, and an autograd primitive called without boxes does
exactly `f_raw(*args, **kwargs)` (autograd/tracer.py, `primitive`). So a VJP maker whose global
`anp` is swapped for a namespace of those raw functions computes the same arrays, bit for bit,
without the search for boxes in every call it makes (about 1.5 us a pullback on small arrays).
Only makers registered with `defvjp` qualify: autograd keeps their per-argument makers in the
`vjps_dict` closure cell of the `vjp_argnums` function it stores in `primitive_vjps`.
"""

from __future__ import annotations

import types
from typing import Callable


class RawNamespace:
    """`autograd.numpy` with every primitive replaced by the function it wraps."""

    def __init__(self, namespace) -> None:
        self._namespace = namespace

    def __getattr__(self, name: str):
        value = getattr(self._namespace, name)
        if getattr(value, "_is_autograd_primitive", False):
            value = value.fun
        setattr(self, name, value)  # looked up once per name
        return value


def per_argnum_makers(vjp_maker: Callable) -> dict[int, Callable] | None:
    """`{argnum: maker}` with each maker running on raw NumPy functions, or None when
    `vjp_maker` was not registered through `defvjp` (then it is used as it is)."""
    code = getattr(vjp_maker, "__code__", None)
    if code is None or vjp_maker.__closure__ is None or "vjps_dict" not in code.co_freevars:
        return None
    cells = dict(zip(code.co_freevars, vjp_maker.__closure__))
    return {argnum: _unboxed(maker) for argnum, maker in cells["vjps_dict"].cell_contents.items()}


_raw_globals: dict[int, dict] = {}  # id(module globals) -> the copy with a raw `anp`


def _unboxed(maker: Callable) -> Callable:
    import autograd.numpy as anp

    module_globals = getattr(maker, "__globals__", None)
    if module_globals is None or module_globals.get("anp") is not anp:
        return maker
    raw = _raw_globals.get(id(module_globals))
    if raw is None:
        raw = dict(module_globals)
        raw["anp"] = RawNamespace(anp)
        raw = _raw_globals.setdefault(id(module_globals), raw)
    unboxed = types.FunctionType(maker.__code__, raw, maker.__name__, maker.__defaults__,
                                 maker.__closure__)
    unboxed.__kwdefaults__ = maker.__kwdefaults__
    return unboxed

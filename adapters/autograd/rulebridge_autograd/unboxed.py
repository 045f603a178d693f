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


def raw_namespace(namespace: types.ModuleType) -> types.ModuleType:
    """A copy of the module `namespace` (`autograd.numpy`) with every primitive replaced by the
    function it wraps. A module, not an object with `__getattr__`: attribute reads on a module are
    the cheapest Python has, and a pullback makes several."""
    raw = types.ModuleType(namespace.__name__ + "[raw]")
    for name, value in vars(namespace).items():
        if getattr(value, "_is_autograd_primitive", False):
            value = value.fun
        setattr(raw, name, value)
    return raw


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
    from autograd.numpy import numpy_wrapper

    module_globals = getattr(maker, "__globals__", None)
    if module_globals is None:
        return maker
    # numpy_vjps.py imports the wrapper module as `anp`, the scipy VJPs import autograd.numpy.
    namespace = module_globals.get("anp")
    if namespace is not anp and namespace is not numpy_wrapper:
        return maker
    raw = _raw_globals.get(id(module_globals))
    if raw is None:
        raw = dict(module_globals)
        raw["anp"] = raw_namespace(namespace)
        raw = _raw_globals.setdefault(id(module_globals), raw)
    unboxed = types.FunctionType(maker.__code__, raw, maker.__name__, maker.__defaults__,
                                 maker.__closure__)
    unboxed.__kwdefaults__ = maker.__kwdefaults__
    return unboxed

"""autograd's VJP makers, run without autograd's boxing layer.

A pullback never sees an autograd box, and an autograd primitive called without boxes does
exactly `f_raw(*args, **kwargs)` (autograd/tracer.py, `primitive`). So a VJP maker whose
globals (its `anp`, and the helpers it calls) are swapped for copies on those raw functions
computes the same arrays, bit for bit, without the search for boxes in every call it makes
(about 1.5 us a pullback on small arrays).
Only makers registered with `defvjp` qualify: autograd keeps their per-argument makers in the
`vjps_dict` closure cell of the `vjp_argnums` function it stores in `primitive_vjps`.
"""

from __future__ import annotations

import threading
import types
from typing import Callable

import numpy as np

import rulebridge

# Modules whose functions a VJP maker may call: the makers themselves, their helpers
# (`unbroadcast_f`, `repeat_to_match_shape`, ...) and the namespace (`anp.where` is a plain
# function of autograd.numpy that calls a primitive).
_RULE_MODULES = ("autograd.numpy", "autograd.scipy")


def per_argnum_makers(vjp_maker: Callable) -> dict[int, Callable] | None:
    """`{argnum: maker}` with each maker running on raw NumPy functions, or None when
    `vjp_maker` was not registered through `defvjp` (then it is used as it is)."""
    vjps_dict = _closure_cells(vjp_maker).get("vjps_dict")
    if vjps_dict is None:
        return None
    return {argnum: _RAW.function(maker) for argnum, maker in vjps_dict.items()}


class _RawCopies:
    """Copies of autograd's rule modules that run on raw NumPy, each made once.

    A copy of a module's globals holds, for each name: a primitive's raw function; a plain
    function of a rule module rebound to that module's copy (so the helpers it calls are raw
    too); a rule namespace (`anp`) as a raw module; anything else as it is. Without this a helper
    such as `unbroadcast` searched for boxes in each NumPy call it made: about 6k instructions
    in the pullback of `s + x[n]`."""

    def __init__(self) -> None:
        self._globals: dict[int, dict] = {}  # id(a module's globals) -> its raw copy
        self._modules: dict[str, types.ModuleType] = {}
        self._lock = threading.RLock()

    def function(self, value):
        if getattr(value, "_is_autograd_primitive", False):
            raw = value.fun  # a helper primitive of the rules (`dot_adjoint_0`): raw too
            if isinstance(raw, types.FunctionType) and _is_rule_module(raw.__globals__):
                return _rebound(raw, self._globals_copy(raw.__globals__))
            return _dropin_of(raw) or raw
        if value is np:  # the rules' `onp`: NumPy, with an asarray that takes boxes
            return _numpy_for_boxes()
        if getattr(value, "_is_primitive", False):  # notrace_primitive keeps f_raw in its closure
            return _closure_cells(value).get("f_raw", value)
        if isinstance(value, types.FunctionType) and _is_rule_module(value.__globals__):
            return _rebound(value, self._globals_copy(value.__globals__))
        if isinstance(value, types.ModuleType) and _is_rule_module(vars(value)):
            return self._module_copy(value)
        return value

    def _globals_copy(self, module_globals: dict) -> dict:
        with self._lock:
            raw = self._globals.get(id(module_globals))
            if raw is None:
                raw = self._globals[id(module_globals)] = {}  # first, for cyclic references
                raw.update((name, self.function(value)) for name, value in module_globals.items())
            return raw

    def _module_copy(self, module: types.ModuleType) -> types.ModuleType:
        # A module, not an object with `__getattr__`: attribute reads on a module are the
        # cheapest Python has, and a pullback makes several.
        with self._lock:
            raw = self._modules.get(module.__name__)
            if raw is None:
                raw = self._modules[module.__name__] = types.ModuleType(module.__name__ + "[raw]")
                for name, value in vars(module).items():
                    setattr(raw, name, self.function(value))
            return raw


def _numpy_for_boxes() -> types.ModuleType:
    """NumPy as autograd's rules call it (`onp`), except `asarray`: a rule's helper ends with
    `onp.asarray(out, dtype=...)` (`dot_adjoint_0`), which under nested differentiation gets
    rulebridge's box of an enclosing level, an array for which asarray changes nothing but the
    dtype; it is the box itself, or `astype`, so that rulebridge records it."""
    global _NUMPY
    if _NUMPY is None:
        module = types.ModuleType("numpy[boxes]")
        vars(module).update(vars(np))
        real = np.asarray

        def asarray(a, dtype=None, *args, **kwargs):
            if type(a) is rulebridge.Traced and not args and not kwargs:
                return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
            return real(a, dtype, *args, **kwargs)

        module.asarray = asarray
        _NUMPY = module
    return _NUMPY


_NUMPY: types.ModuleType | None = None


def _dropin_of(function) -> Callable | None:
    """rulebridge's drop-in for a SciPy function a rule calls (`norm.cdf`'s VJP calls
    `scipy.stats.norm.pdf`): SciPy's own function on plain values, and under nested
    differentiation, on an enclosing level's boxes, an op that level records with a rule of its
    own (SciPy's function would convert the boxes). None for anything else."""
    module = getattr(function, "__module__", None) or ""
    owner = getattr(function, "__self__", None)
    name = getattr(function, "__name__", None)
    if name is None or not (module.startswith("scipy.") or type(owner).__module__.startswith(
            "scipy.stats")):
        return None
    import rulebridge.scipy

    if owner is not None and hasattr(owner, "name"):  # a distribution's method: norm.pdf
        found = getattr(getattr(rulebridge.scipy.stats, owner.name, None), name, None)
    else:
        found = next((getattr(getattr(rulebridge.scipy, m), name) for m in rulebridge.scipy.MODULES
                      if module.startswith(f"scipy.{m}")
                      and hasattr(getattr(rulebridge.scipy, m), name)), None)
    return found if getattr(found, "scipy_function", None) is not None and (
        found.scipy_function == function) else None


def _is_rule_module(module_globals: dict) -> bool:
    name = module_globals.get("__name__")
    return isinstance(name, str) and name.startswith(_RULE_MODULES)


def _closure_cells(function) -> dict:
    code = getattr(function, "__code__", None)
    if code is None or not function.__closure__:
        return {}
    return {name: cell.cell_contents for name, cell in zip(code.co_freevars, function.__closure__)}


def _rebound(function: types.FunctionType, new_globals: dict) -> types.FunctionType:
    rebound = types.FunctionType(function.__code__, new_globals, function.__name__,
                                 function.__defaults__, function.__closure__)
    rebound.__kwdefaults__ = function.__kwdefaults__
    return rebound


_RAW = _RawCopies()

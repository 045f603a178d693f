"""JAX as a rulebridge rule source.

The forward is NumPy's own function, so values are NumPy's to the bit; its residuals are just the
call's arguments. The pullback is JAX's VJP of the same-named JAX function (or of the program in
semantics.py that means what NumPy means), compiled once per static configuration by
`JitPullbacks` and shared by every signature of that function.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Callable, Iterable

import jax
import numpy as np

import rulebridge
from rulebridge import (Declined, Rule, SpecInfo, decline_unsupported, format_signature,
                        function_name)

from .catalog import catalog
from .imports import JaxImports
from .pullback import JitPullbacks, numpy_forward
from .pushforward import JitPushforwards
from .semantics import Meaning
from . import staging  # noqa: F401  (installs rulebridge.jit's "jax" back end)

BESIDE = " with bool/int arrays and static arguments (axes, shapes) beside them"
SIGNATURE_FAMILIES = ["(float32[...] | float64[...] | complex128[...] | float | complex, ...)"
                      + BESIDE]
REAL_FAMILIES = ["(float32[...] | float64[...] | float, ...)" + BESIDE]


class JaxAdapter(JaxImports, rulebridge.Adapter):
    name = "jax"

    def version(self) -> str:
        return jax.__version__

    def use_cache(self, folder: Path) -> None:
        # JAX's persistent compilation cache keys an executable by the program, the compile
        # options and flags, the backend and JAX's version: a hit is the executable a compile
        # would give. Compiling is most of a check's cost here (about 0.1 s a pullback).
        jax.config.update("jax_compilation_cache_dir", str(folder))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

    def release(self) -> None:
        # The compiled pullbacks (ours, and JAX's caches of traces and executables).
        self.__dict__.pop("_pullbacks", None)
        self.__dict__.pop("_imported_pullbacks", None)
        jax.clear_caches()

    @cached_property
    def table(self) -> dict[Callable, Meaning]:
        return catalog()

    def functions(self) -> Iterable[Callable]:
        return [f for f, meaning in self.table.items() if not meaning.declined]

    def signatures(self, function: Callable) -> list[str]:
        meaning = self.table.get(function)
        if meaning is None or meaning.declined:
            return []
        return list(REAL_FAMILIES if meaning.real_only else SIGNATURE_FAMILIES)

    @cached_property
    def _pullbacks(self) -> dict[Callable, JitPullbacks]:
        return {}

    @cached_property
    def _pushforwards(self) -> dict[Callable, JitPushforwards]:
        return {}

    def build_rule(self, function: Callable, signature: tuple) -> Rule:
        meaning = self.table.get(function)
        if meaning is None:
            raise Declined(f"JAX has no differentiable counterpart of {function_name(function)}")
        if meaning.declined:
            raise Declined(f"not offered for {function_name(function)}: {meaning.declined}")
        decline_unsupported(signature)
        if meaning.real_only and any(_complex(spec) for spec in signature):
            raise Declined(f"not offered for complex arguments: {meaning.real_only}")
        if not any(_inexact(spec) for spec in signature):
            raise Declined(f"{format_signature(signature)} has no float or complex argument to "
                           "differentiate")
        pullbacks = self._pullbacks.get(function)
        if pullbacks is None:
            pullbacks = self._pullbacks[function] = JitPullbacks(
                meaning.jax, function_name(function), operands=isinstance(function, np.ufunc),
                numpy_function=function)
        pullback = pullbacks.rule_pullback(meaning.prepare)
        pullback_rule = pullbacks.rule_pullback_rule(meaning.prepare)
        pushforwards = self._pushforwards.get(function)
        if pushforwards is None:
            pushforwards = self._pushforwards[function] = JitPushforwards(
                meaning.jax, function_name(function), operands=isinstance(function, np.ufunc),
                numpy_function=function)
        jvp = pushforwards.rule_jvp(meaning.prepare)
        if rulebridge.reads_one_triangle(function):
            # (its pushforward would need the same conversion: forward mode uses the pullback)
            pullback, jvp = _one_triangle(pullback, function), None
            pullback_rule = _one_triangle_rule(pullback_rule, function)
        # The pullback is jitted: it cannot take an enclosing level's boxes (under nesting the
        # engine goes to `pullback_rule` at once, without calling it on them).
        return Rule(function, signature, numpy_forward(function), pullback, source=self.name,
                    source_version=self.version(), jvp=jvp, pullback_rule=pullback_rule,
                    pullback_takes_boxes=False)


def _one_triangle(pullback: Callable, function: Callable) -> Callable:
    """JAX's functions symmetrise the matrix (their gradient is right for Hermitian tangents
    only); NumPy's read one triangle: run the pullback at the matrix NumPy reads, convert."""
    def pullback_of_triangle(residuals, g, argnums):
        args, kwargs = residuals
        call = rulebridge.one_triangle_call(function, args, kwargs)
        if call is None:
            return pullback(residuals, g, argnums)
        return call.cotangents(pullback((call.args, kwargs), g, argnums), argnums)

    return pullback_of_triangle


def _one_triangle_rule(pullback_rule: Callable, function: Callable) -> Callable:
    """The pullback offered as a rule, for a second derivative, with `_one_triangle`'s
    conversion around it: the Hermitian matrix NumPy reads and the cotangent's conversion are
    NumPy code on the enclosing level's boxes (recorded there), and between them JAX's pullback
    at that matrix is one op of its own rule (again.py). That rule's function symmetrises its
    matrix as JAX's eigh and cholesky do, so its check in every entry holds."""
    def pullback_rule_of_triangle(residuals, g, argnums):
        args, kwargs = residuals
        call = rulebridge.one_triangle_call(function, args, kwargs)
        if call is None:
            return pullback_rule(residuals, g, argnums)
        inner = pullback_rule((call.args, kwargs), g, argnums)
        assemble = inner.assemble or (lambda outputs: outputs)
        return rulebridge.PullbackCall(
            inner.rule, inner.args, lambda outputs: call.cotangents(assemble(outputs), argnums))

    return pullback_rule_of_triangle


def _complex(spec) -> bool:
    info = SpecInfo.of(spec)
    if info.kind == "sequence":
        return any(_complex(item) for item in spec[1])
    if info.kind == "array":
        return info.dtype.kind == "c"
    return issubclass(info.type, (complex, np.complexfloating))


def _inexact(spec) -> bool:
    """Can an argument of this spec carry a gradient (a float or complex array or scalar)?"""
    info = SpecInfo.of(spec)
    if info.kind == "sequence":
        return any(_inexact(item) for item in spec[1])
    if info.kind == "array":
        return info.dtype.kind in "fc"
    return issubclass(info.type, (float, complex, np.floating, np.complexfloating))

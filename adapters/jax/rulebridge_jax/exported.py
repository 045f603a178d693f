"""The JAX back end's program handed out as a JAX function: `jax_function(jitted, *args)`.

    step = rulebridge.jit(rulebridge.grad(loss), backend="jax")
    g = jax_function(step, w, x)                 # records (or replays) at these arguments
    per_example = jax.vmap(g, in_axes=(0, None))(ws, x)   # jax arrays in, jax arrays out

`g` takes the arguments `step` takes, with jax arrays (or tracers, under `jax.vmap`, `jax.jit`,
sharded across devices) where the recorded call had float arrays and scalars, and returns what
`step` returns, as jax arrays, in the same structures. It is `jax.jit` of the staged program
for the key of `args` (their structures, shapes and dtypes; every other argument and leaf is
fixed at its value in `args`). A JAX function cannot stop on the host to check a guard, so a
program that took a decision on a traced value (a branch, a loop count, a mask) is refused with
JitError; its shapes and dtypes are the key's. float64 needs `jax_enable_x64`: a float64
program called with float32 arrays (what `jnp.asarray` makes without it) is refused.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

import rulebridge
from rulebridge.tree import LEAF, tree_flatten

from .staging import _LAST


def jax_function(jitted, *args: Any, **kwargs: Any) -> Callable:
    """The staged program of `jitted` (a `rulebridge.jit(..., backend="jax")`) at the key of
    these arguments, as a jax-jitted function of the same arguments (see the module)."""
    jitted(*args, **kwargs)
    staged = _LAST.get(jitted)
    if staged is None or getattr(jitted, "backend", None) != "jax":
        raise rulebridge.UsageError(
            f"jax_function takes a function jitted with the JAX back end, got {jitted!r}.",
            fix='step = rulebridge.jit(f, backend="jax"); g = jax_function(step, *args)')
    variant = staged.variant
    flat = [[a] if type(a) is np.ndarray else tree_flatten(a)[0] for a in args]
    program = staged.ensure(flat)
    if program.dynamic:
        kinds = ", ".join(sorted({program.decisions[d].kind for d, _ in program.dynamic}))
        raise rulebridge.JitError(
            f"jax_function cannot hand out {rulebridge.function_name(variant.spec.f)} as a JAX "
            f"function: its program took {len(program.dynamic)} decision(s) on traced values "
            f"({kinds}: a branch, a loop count, a mask or an index from the values), which a JAX "
            "function cannot check on the host.",
            fix="jnp.where(cond, a, b)  # a branch as a select; or call the jitted function, "
                "which checks every decision and records the other path")
    spec, traced = variant.spec, variant.traced
    where = {var: n for n, var in enumerate(program.wanted)}

    def function(*new_args: Any) -> Any:
        inputs = []
        for (i, k), (_, dtype, shape) in zip(variant.slots, program.leaves):
            leaf = new_args[i] if traced[i].structure is LEAF else \
                tree_flatten(new_args[i])[0][k]
            got = np.result_type(getattr(leaf, "dtype", None) or np.result_type(leaf))
            if got != dtype or np.shape(leaf) != shape:
                raise rulebridge.UsageError(
                    f"jax_function: argument {i} has a leaf of dtype {got} and shape "
                    f"{np.shape(leaf)} where the program was recorded with {dtype} {shape}.",
                    fix='jax.config.update("jax_enable_x64", True)  # float64 stays float64; '
                        "or record the program at these dtypes and shapes",
                    details="Without jax_enable_x64, jnp.asarray makes float32 arrays.")
            inputs.append(leaf)
        with jax.enable_x64(True):
            outputs, _, derivative = program.core(inputs)
        by_var = dict(zip(program.inputs, inputs))
        by_var.update(zip(program.outputs, outputs))
        result = _rebuild(variant.outputs, by_var)
        if spec.has_aux:
            aux = _rebuild(variant.aux, by_var)
        if spec.kind == "plain":
            return result
        if spec.kind == "jacobian":
            raise rulebridge.UsageError("jax_function does not hand out jacobians yet.",
                                        fix="jax.jacrev(jax_function(rulebridge.jit(f, "
                                            'backend="jax"), *args))')
        grads = []
        for i in variant.positions:
            arg = traced[i]
            leaves = [None if var is None else derivative[where[var]] for var in arg.variables]
            grads.append(leaves[0] if arg.structure is LEAF else arg.structure.unflatten(leaves))
        grads = grads[0] if isinstance(spec.argnums, int) else tuple(grads)
        if spec.kind == "grad":
            return (grads, aux) if spec.has_aux else grads
        return ((result, aux) if spec.has_aux else result), grads

    return jax.jit(function)


def _rebuild(layout: tuple, by_var: dict) -> Any:
    structure, leaves = layout
    values = [by_var[leaf] if type(leaf) is int else leaf.value for leaf in leaves]
    return values[0] if structure is LEAF else structure.unflatten(values)

"""The JAX back end's program handed out as a JAX function: `jax_function(jitted, *args)`.

    step = rulebridge.jit(rulebridge.grad(loss), backend="jax")
    g = jax_function(step, w, x)                 # records (or replays) at these arguments
    per_example = jax.vmap(g, in_axes=(0, None))(ws, x)   # jax arrays in, jax arrays out

`g` takes the arguments `step` takes, with jax arrays (or tracers, under `jax.vmap`, `jax.jit`,
sharded across devices) where the recorded call had float arrays and scalars, and returns what
`step` returns, as jax arrays, in the same structures. It is `jax.jit` of the staged program
for the key of `args` (their structures, shapes and dtypes; every other argument and leaf is
fixed at its value in `args`). A program that took a decision on a traced value (a branch, a
loop count, a mask) holds one path: each such decision is computed inside and checked on the
host by a `jax.debug.callback`, which raises `JitError` when a value decides otherwise (JAX
hands it on as the error of the call, a `JaxRuntimeError` whose message ends with it; under
`jax.vmap` each example is checked). A staged value is never that of another path. Its shapes
and dtypes are the key's. Jacobians come in the eager call's structure: per output leaf, per
differentiated argument, blocks of shape `output.shape + leaf.shape`. float64 needs
`jax_enable_x64`: a float64 program called with float32 arrays (what `jnp.asarray` makes
without it) is refused.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import jax
import jax.numpy as jnp
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
    name = rulebridge.function_name(variant.spec.f)
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
            outputs, extras, derivative = program.core(inputs)
        for (d, kind), value in zip(program.dynamic, extras):
            jax.debug.callback(partial(_guard, program, d, kind, name), value)
        by_var = dict(zip(program.inputs, inputs))
        by_var.update(zip(program.outputs, outputs))
        result = _rebuild(variant.outputs, by_var)
        if spec.has_aux:
            aux = _rebuild(variant.aux, by_var)
        if spec.kind == "plain":
            return result
        if spec.kind == "jacobian":
            jac = _jacobian(program, variant, new_args, by_var, derivative, where)
            return (jac, aux) if spec.has_aux else jac
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


def _guard(program, d: int, kind: str, name: str, value: Any) -> None:
    """On the host, at each call of the handed-out function: decision d as recorded, or
    JitError (its path is not the recorded one, and no value of it may be returned)."""
    if not program.decided(d, kind, value):
        position, var, _, outcome, call = program.decisions[d]
        what = kind if call is None else rulebridge.function_name(call[0].function)
        raise rulebridge.JitError(
            f"the JAX function jax_function made of {name} took decision {d} ({what}, recorded "
            f"as {outcome!r}) otherwise at these values: they take a path its program does not "
            "hold (a branch, a loop count, a mask from the values).",
            fix="step(*args)  # the jitted function itself checks each decision and records "
                "the other path; or jnp.where(cond, a, b) in place of a branch",
            details=f"Got {np.asarray(value)!r}.")


def _jacobian(program, variant, args: tuple, by_var: dict, derivative, where: dict) -> Any:
    """The eager jacobian's structure (rulebridge/call.py's `jacobian_block`) from jax.jacrev's
    rows: per output leaf, per differentiated argument, that argument's structure of blocks
    `output.shape + leaf.shape` (zeros for a leaf or output no op connects)."""
    structure, leaves = variant.outputs
    blocks = []
    for leaf in leaves:
        shape = np.shape(by_var[leaf] if type(leaf) is int else leaf.value)
        rows = derivative[program.seeded.index(leaf)] \
            if type(leaf) is int and leaf in program.seeded else None
        per_position = []
        for i in variant.positions:
            arg = variant.traced[i]
            new = [args[i]] if arg.structure is LEAF else tree_flatten(args[i])[0]
            mine = [rows[where[var]] if rows is not None and var is not None else
                    jnp.zeros(shape + np.shape(x), np.result_type(x))
                    for var, x in zip(arg.variables, new)]
            per_position.append(mine[0] if arg.structure is LEAF else arg.structure.unflatten(mine))
        blocks.append(per_position[0] if isinstance(variant.spec.argnums, int)
                      else tuple(per_position))
    return blocks[0] if structure is LEAF else structure.unflatten(blocks)


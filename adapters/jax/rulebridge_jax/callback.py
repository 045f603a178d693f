"""A recorded op with no JAX counterpart, staged as a call back to NumPy with its own rule.

An imported rule's function (`rulebridge.import_rule`), a SciPy function JAX does not have, or
one whose JAX namesake means something else (the catalog declines it) runs on the host inside
the staged program: `jax.pure_callback` calls the op's own forward, as the eager tape called it
(its values are NumPy's), and its gradient is the op's rulebridge rule, as `jax.custom_vjp`
whose backward is a second callback to the rule's pullback (on residuals the forward makes again
from the saved arguments). The output's shape and dtype are the recorded op's, found by one
NumPy pass over the program at staging. Under `jax.vmap` the callbacks run one example after
another. Not staged (JitError): an op with several outputs or a list of arrays as an argument,
and a second derivative through a callback (JAX cannot differentiate a callback's pullback).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

import rulebridge


def numpy_values(entries, inputs: list, values: list, needed: set) -> dict:
    """The NumPy value of every variable the ops in `needed` (positions) read or write: the
    program's forward run as the eager tape ran it, up to the last of them."""
    env = dict(zip(inputs, values))
    last = max(needed)
    for position, (rule, args, kwargs, ins, outs, structure, _) in enumerate(entries):
        if position > last:
            break
        spelled = [env[v] if type(v) is int else
                   type(a)(env[u] if type(u) is int else b for b, u in zip(a, v))
                   if type(v) is tuple else a for a, v in zip(args, ins)]
        forward = rule.forward
        if type(forward) is rulebridge.CallForward:
            out = forward.function(*spelled, **dict(kwargs or {}))
        else:
            out = forward(tuple(spelled), kwargs)[0]
        if isinstance(structure, type):
            for k, var in enumerate(outs):
                if var is not None:
                    env[var] = out[k]
        else:
            env[outs[0]] = out
    return env


def _refuse(rule, why: str) -> Exception:
    name = rulebridge.function_name(rule.function)
    return rulebridge.JitError(
        f"rulebridge.jit(backend=\"jax\") cannot stage {name}: JAX has no counterpart of it and "
        f"{why}.",
        fix='rulebridge.jit(f, backend="numpy")  # replays it with NumPy and its rule')


def _struct(value: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(np.shape(value), np.result_type(value))


def callback_op(rule, args: tuple, kwargs: dict, inputs: tuple, outputs: tuple, structure,
                env: dict):
    """A JAX function of the op's traced arguments (positional order) computing it on the
    host with its rule as its VJP."""
    if isinstance(structure, type) or any(type(v) is tuple for v in inputs):
        raise _refuse(rule, "it has several outputs or a list of arrays as an argument, which "
                            "a callback does not stage yet")
    traced = [i for i, v in enumerate(inputs) if type(v) is int]
    shapes = [_struct(env[inputs[i]]) for i in traced]
    out_shape = _struct(env[outputs[0]])
    forward, kwargs = rule.forward, dict(kwargs or {})

    def numpy_forward(values) -> tuple:
        spelled = list(args)
        for i, value, shape in zip(traced, values, shapes):
            spelled[i] = np.asarray(value, dtype=shape.dtype)
        if type(forward) is rulebridge.CallForward:
            out = forward.function(*spelled, **kwargs)
            return out, (out, tuple(spelled), kwargs)
        return forward(tuple(spelled), kwargs)

    def value(*values):
        out = numpy_forward(values)[0]
        return np.asarray(out, dtype=out_shape.dtype).reshape(out_shape.shape)

    def cotangents(values, g):
        residuals = numpy_forward(values)[1]
        g = np.asarray(g, dtype=out_shape.dtype)
        cts = (rule.sparse_pullback or rule.pullback)(residuals, g, tuple(traced))
        dense = []
        for ct, shape in zip(cts, shapes):
            if ct is None:
                ct = np.zeros(shape.shape, shape.dtype)
            elif type(ct) is rulebridge.SparseCotangent:
                total = np.zeros(shape.shape, shape.dtype)
                ct.add_into(total)
                ct = total
            ct = np.asarray(ct, dtype=shape.dtype)
            if ct.shape != shape.shape:
                raise rulebridge.RuleContractError(
                    f"the pullback of {rulebridge.function_name(rule.function)} returned a "
                    f"cotangent of shape {ct.shape} for an argument of shape {shape.shape}")
            dense.append(ct)
        return tuple(dense)

    @jax.custom_vjp
    def op(*values):
        return jax.pure_callback(value, out_shape, *values, vmap_method="sequential")

    def op_forward(*values):
        return op(*values), values

    def op_backward(values, g):
        return jax.pure_callback(cotangents, tuple(shapes), values, g,
                                 vmap_method="sequential")

    op.defvjp(op_forward, op_backward)

    def staged(*spelled):
        return op(*[spelled[i] for i in traced])

    return staged

"""A recorded program's forward ops as one jax.numpy function (the JAX back end's lowering).

Each op of `Program.entries` becomes its JAX counterpart, found where the adapter already keeps
it: the catalog's `Meaning.jax` (JAX's same-named function, or the program in semantics.py that
means what NumPy means), then JAX's same-named function for the NumPy ufuncs and functions the
catalog leaves out because they carry no gradient (comparisons, `floor`). The engine's own ops:

- a write `x' = setitem(x, index, v)` becomes `x.at[index].set(v)`;
- an allocation (`np.zeros`, `np.ones_like`, `np.full`, `np.empty`...) the `jnp` allocation
  (`np.empty` as `jnp.zeros`: its values are never read before a write);
- a copy `jnp.array(x)`, an index read `x[index]` (boolean masks as the integer indices they
  select, as the adapter's pullbacks read them), `untake` a scatter-add into zeros.

An op with no counterpart (an imported rule's function, a SciPy function JAX does not have, a
function the catalog declines because JAX's means something else) is refused with JitError
naming it.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import jax.numpy as jnp
import numpy as np

import rulebridge

from .catalog import catalog
from .semantics import _traceable_index

_ALLOCATIONS = {np.zeros: jnp.zeros, np.ones: jnp.ones, np.empty: jnp.zeros, np.full: jnp.full,
                np.zeros_like: jnp.zeros_like, np.ones_like: jnp.ones_like,
                np.empty_like: jnp.zeros_like, np.full_like: jnp.full_like}
_NUMPY_ONLY_KEYWORDS = ("order", "like", "subok", "casting")
_TABLE: dict | None = None


def _table() -> dict:
    global _TABLE
    if _TABLE is None:
        _TABLE = catalog()
    return _TABLE


def _write(x, index, value):
    (_, index), _ = _traceable_index((x, index), {})
    return jnp.asarray(x).at[index].set(value)


def _getitem(x, index):
    (_, index), _ = _traceable_index((x, index), {})
    return jnp.asarray(x)[index]


def _untake(g, index, shape, dtype):
    (_, index), _ = _traceable_index((g, index), {})
    return jnp.zeros(shape, dtype).at[index].add(g)


def _copy(a, *args, **kwargs):
    return jnp.array(a, copy=True)


def _allocation(function: Callable) -> Callable:
    def allocate(*args, **kwargs):
        kept = {k: v for k, v in kwargs.items() if k not in _NUMPY_ONLY_KEYWORDS}
        return function(*args, **kept)

    return allocate


def counterpart(rule) -> Callable:
    """The JAX function computing what `rule.function` computes with NumPy's arguments, or
    JitError naming the function."""
    function = rule.function
    if rule.source == "rulebridge":
        if function is operator.setitem:
            return _write
        if function in _ALLOCATIONS:
            return _allocation(_ALLOCATIONS[function])
        if function is np.copy:
            return _copy
        if getattr(function, "__rulebridge_name__", "") == "rulebridge.untake":
            return _untake
    if function is operator.getitem:
        return _getitem
    meaning = _table().get(function)
    if meaning is not None:
        if meaning.declined:
            raise _refusal(function, f"the JAX adapter declines it: {meaning.declined}")
        if meaning.jax is not None:
            return meaning.jax
    name = getattr(function, "__name__", "")
    if isinstance(function, np.ufunc) or getattr(function, "__module__", "").startswith(
            "numpy") and meaning is None:
        jax_function = getattr(jnp, name, None)
        if callable(jax_function) and not isinstance(jax_function, type):
            return jax_function
    raise _refusal(function, "JAX has no counterpart the adapter knows of")


def _refusal(function, why: str) -> Exception:
    name = rulebridge.function_name(function)
    return rulebridge.JitError(
        f"rulebridge.jit(backend=\"jax\") cannot stage {name}: {why}, so the program cannot "
        "be handed to jax.jit.",
        fix=f'rulebridge.jit(f, backend="numpy")  # replays {name} with NumPy; or write that '
            "step with functions JAX has",
        details="The JAX back end maps each recorded op to its jax.numpy counterpart "
                "(rulebridge_jax/lowering.py); see docs/jit.md.")


def _spelled(value: Any, var: Any, env: dict) -> Any:
    """An op's argument: a variable's value, a constant, or a list/tuple of those."""
    if var is None:
        return value
    if type(var) is int:
        return env[var]
    items = [_spelled(a, v, env) for a, v in zip(value, var)]
    return items if type(value) is list else tuple(items)


class Lowered:
    """`Lowered(program)(values)`: the values of every variable of the program's forward, a dict
    computed with jax.numpy from one value per tape input."""

    def __init__(self, program) -> None:
        self.inputs = list(program.inputs)
        self.steps = []
        for rule, args, kwargs, inputs, outputs, structure, _ in program.entries:
            self.steps.append((counterpart(rule), args, dict(kwargs or {}), inputs, outputs,
                               structure))

    def __call__(self, values) -> dict:
        env = dict(zip(self.inputs, values))
        for function, args, kwargs, inputs, outputs, structure in self.steps:
            out = function(*[_spelled(a, v, env) for a, v in zip(args, inputs)], **kwargs)
            if not isinstance(structure, type):  # one output (None, or the engine's UNARY)
                env[outputs[0]] = out
            else:
                for k, var in enumerate(outputs):
                    if var is not None:
                        env[var] = out[k]
        return env

    def call(self, call: tuple, var: Any, env: dict) -> Any:
        """A decision's op (rule, args, kwargs) run on the lowered values."""
        rule, args, kwargs = call
        return counterpart(rule)(*[_spelled(a, v, env) for a, v in zip(args, var)],
                                 **dict(kwargs or {}))

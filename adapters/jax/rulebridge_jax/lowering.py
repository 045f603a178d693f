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
function the catalog declines because JAX's means something else) calls back to NumPy with its
own rule as its VJP (callback.py), or is refused with JitError naming it.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

import rulebridge

from .callback import callback_op, numpy_values
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

    def __init__(self, program, values: list) -> None:
        self.inputs = list(program.inputs)
        self.steps = []
        missing = {}
        for position, (rule, args, kwargs, inputs, outputs, structure, _) in enumerate(
                program.entries):
            try:
                function = counterpart(rule)
            except rulebridge.JitError:
                function = missing[position] = None
            self.steps.append((function, args, dict(kwargs or {}), inputs, outputs,
                               structure))
        # NumPy's dtype of every float or complex intermediate: JAX's promotion is not
        # NumPy's (a Python number is weakly typed through every op in JAX, in NumPy only
        # where it is an operand itself; float32 with int64 is float32 in JAX, float64 in
        # NumPy), so each op's output is cast to the dtype NumPy gave it.
        env = numpy_values(program.entries, self.inputs, values,
                           set(range(len(program.entries)))) if program.entries else {}
        self.dtypes = {var: np.result_type(v) for var, v in env.items()
                       if var not in self.inputs and isinstance(v, (np.ndarray, np.generic,
                                                                     float, complex))
                       and np.result_type(v).kind in "fc"}
        if missing:  # each a call back to NumPy with its rule (callback.py)
            for position in missing:
                rule, args, kwargs, inputs, outputs, structure, _ = program.entries[position]
                function = callback_op(rule, args, kwargs, inputs, outputs, structure, env)
                self.steps[position] = (function, args, {}, inputs, outputs, structure)

    def __call__(self, values) -> dict:
        env = dict(zip(self.inputs, values))
        for function, args, kwargs, inputs, outputs, structure in self.steps:
            spelled = [_spelled(a, v, env) for a, v in zip(args, inputs)]
            try:
                out = function(*spelled, **kwargs)
            except rulebridge.RulebridgeError:
                raise
            except Exception as exc:  # at staging only: JAX's counterpart refused NumPy's call
                raise _refusal(getattr(function, "__wrapped__", function),
                               f"its JAX counterpart failed on NumPy's arguments "
                               f"({type(exc).__name__}: {str(exc).splitlines()[0][:120]})"
                               ) from exc
            if not isinstance(structure, type):  # one output (None, or the engine's UNARY)
                env[outputs[0]] = self._as_numpy(out, outputs[0])
            else:
                for k, var in enumerate(outputs):
                    if var is not None:
                        env[var] = self._as_numpy(out[k], var)
        return env

    def _as_numpy(self, value: Any, var: int) -> Any:
        """`value` in the dtype NumPy gave variable `var` at staging (and not weakly typed)."""
        dtype, aval = self.dtypes.get(var), getattr(value, "aval", None)
        if dtype is not None and aval is not None and (aval.dtype != dtype or aval.weak_type):
            return jax.lax.convert_element_type(value, dtype)
        return value

    def call(self, call: tuple, var: Any, env: dict, outcome: Any) -> Any:
        """A decision's op (rule, args, kwargs) run on the lowered values: a comparison with
        JAX's (exact in both), any other op NumPy's own, called back on the host, so an index
        or an order (argsort's ties) is NumPy's."""
        rule, args, kwargs = call
        # (its answer carries no gradient: the values it reads are constants to a derivative)
        spelled = [jax.lax.stop_gradient(_spelled(a, v, env)) if type(v) is int
                   else _spelled(a, v, env) for a, v in zip(args, var)]
        function = rule.function
        if isinstance(function, np.ufunc) and all(
                t.endswith("->?") for t in function.types if "O" not in t):
            return counterpart(rule)(*spelled, **dict(kwargs or {}))
        if not isinstance(outcome, (np.ndarray, np.generic)):
            raise _refusal(function, "its answer, which the program decided on, is not an "
                                     "array a call back to NumPy can return")
        if any(type(v) is tuple for v in var):
            raise _refusal(function, "a list of arrays as an argument is not called back yet")
        traced = [i for i, v in enumerate(var) if type(v) is int]
        shape = jax.ShapeDtypeStruct(np.shape(outcome), outcome.dtype)

        def host(*values):
            host_args = list(args)
            for i, value in zip(traced, values):
                host_args[i] = np.asarray(value)
            return np.asarray(function(*host_args, **dict(kwargs or {})), dtype=outcome.dtype)

        return jax.pure_callback(host, shape, *[spelled[i] for i in traced],
                                 vmap_method="sequential")

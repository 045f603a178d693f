"""The one pipeline every transformation runs: `f` traced at its arguments (boxes in, `f`
called, aux split off), its outputs' values and variables, then sweeps from seeds to each
differentiated argument's cotangent, in the argument's structure and owned by the caller.
`grad`, `vjp`, `trace`, `elementwise_grad` and `jacobian` (rulebridge/api.py) differ only in
their seeds and in what they build from the cotangents."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .boundary import Ownership, Run, name_of, positions_of
from .seeds import undefined_where_nan
from .engine.box import Traced
from .errors import UsageError
from .rules.levels import primal
from .rules.signature import is_differentiable


_ndarray = np.ndarray
_zeros = np.zeros  # NumPy's own, bound before any trace: never a buffer a trace follows


class Call:
    """`f` traced at `args`, the pipeline every transformation here shares: the run (boxes in,
    `f` called), aux split off, the outputs' values and variables; then `gradients(seeds)`,
    the sweep from those seeds to each differentiated argument's cotangent, in its structure
    and owned by the caller."""

    __slots__ = ("run", "positions", "aux", "structure", "values", "variables")

    def __init__(self, f, args: tuple, kwargs, positions, has_aux: bool, source,
                 strict: bool = True, own: bool = False, reverse_only: bool = False,
                 also: tuple = (), replayed: bool = True) -> None:
        self.positions = tuple(positions)
        self.run = run = Run(f, args, kwargs, self.positions, strict, source, reverse_only,
                             also, replayed)
        self.aux = run.split_aux(own) if has_aux else None  # own: as Run.owned makes them
        self.structure, self.values, self.variables = run.outputs()

    def gradients(self, seeds: dict, *held: Any) -> tuple:
        """One gradient per position for the sweep from `seeds`; `held`: what else the caller
        holds (its values, cotangents, aux), which no returned array may alias."""
        run = self.run
        cts = run.sweep(seeds)
        owner = Ownership(run.args, *held)
        return tuple(run.gradient(i, cts, owner) for i in self.positions)


class Transform(NamedTuple):
    """What a function returned by `grad`, `value_and_grad`, `jacobian` or `hessian` computes,
    kept on it as `__rulebridge_transform__` so that `rulebridge.jit` can record `f` once and
    replay the transformation's sweeps (rulebridge/jit)."""

    kind: str  # "grad", "value_and_grad", "jacobian" or "hessian"
    f: Callable
    argnums: Any
    has_aux: bool
    source: str | None


def transformed(function: Callable, kind: str, f: Callable, argnums, has_aux: bool,
                source) -> Callable:
    """`function`, marked as the transformation `kind` of `f`."""
    function.__rulebridge_transform__ = Transform(  # type: ignore[attr-defined]
        kind, f, argnums, has_aux, source)
    return function


def one_or_tuple(argnums, items: tuple) -> Any:
    return items if isinstance(argnums, (tuple, list)) else items[0]


def real_call(f, what: str, argnums, has_aux, source, args, kwargs, also: tuple = (),
              reverse_only: bool = True) -> Call:
    """`f` traced at `args` for `what` (elementwise_grad, jacobian), its outputs real;
    `reverse_only=False` for a tape that is replayed (jit), which keeps its decisions."""
    call = Call(f, args, kwargs, positions_of(f, argnums, len(args)), has_aux, source,
                also=also, reverse_only=reverse_only)
    structure, paths = call.structure, None
    for k, v in enumerate(call.values):
        if is_differentiable(v) and np.result_type(primal(v)).kind == "c":
            paths = paths or structure.paths("output")
            raise UsageError(f"{what} of {name_of(f)}: {paths[k]} is complex "
                             f"({np.result_type(primal(v))}); {what} is defined here for real "
                             "outputs.", fix="lambda *a: (np.real(f(*a)), np.imag(f(*a)))  # "
                             "its real and imaginary parts as two outputs; or rulebridge.vjp")
    return call


def jacobian_block(call: Call, k: int) -> tuple:
    """The Jacobian of output leaf k with respect to each argument in `call.positions`."""
    run, positions = call.run, call.positions
    value = primal(call.values[k])  # (an enclosing differentiation's box: its value underneath)
    shape = np.shape(value)
    rows = {i: [[] for _ in run.traced[i].leaves] for i in dict.fromkeys(positions)}
    var = call.variables[k]
    if var is not None:
        seed = _zeros(shape, np.result_type(value))
        ones = undefined_where_nan(np.ones_like(value), call.values[k])  # NaN: no derivative
        for j in range(seed.size):
            seed.flat[j] = ones.flat[j]
            # A copy per row: the sweep may hand the seed back as a cotangent, and its next
            # row must not change what this one returned.
            cts = run.sweep({var: seed.copy() if type(value) is _ndarray else seed[()]})
            seed.flat[j] = 0
            for i in rows:
                for row, v in zip(rows[i], run.traced[i].variables):
                    row.append(cts.get(v))
    blocks = []
    for n, i in enumerate(positions):
        leaves = run.traced[i].leaves
        mine = [_stacked(row, shape, primal(leaf)) for row, leaf in zip(rows[i], leaves)]
        blocks.append(run.traced[i].structure.unflatten(mine))  # (argnums=(0, 0): new arrays)
    return tuple(blocks)


def _stacked(row: list, shape: tuple, leaf) -> Any:
    """One Jacobian block from its rows (one cotangent or None per output entry). Under nesting
    the rows are boxes of the enclosing differentiation, stacked by a recorded op; plain rows
    fill an array NumPy's own `zeros` made (one `rulebridge` does not follow as a buffer)."""
    leaf_shape, dtype = np.shape(leaf), np.result_type(leaf)
    if not any(type(ct) is Traced for ct in row):
        block = _zeros(shape + leaf_shape, dtype)
        for j, ct in enumerate(row):
            if ct is not None:
                block[np.unravel_index(j, shape)] = ct
        return block
    items = [_zeros((1,) + leaf_shape, dtype) if ct is None else np.reshape(ct, (1,) + leaf_shape)
             for ct in row]
    return np.reshape(np.concatenate(items), shape + leaf_shape)

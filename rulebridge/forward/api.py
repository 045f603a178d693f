"""The forward-mode entry points: `jvp`, `linearize` and `jacfwd` (JAX's conventions).

Each records `f` once on a tape, as `grad` does (rulebridge/boundary.py's `Run`), and pushes
tangents forward over it (sweep.py); `linearize` keeps the tape and pushes again at every call.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from ..boundary import Ownership, Run, name_of, positions_of
from ..engine.box import Traced
from ..engine.collector import collector_paused
from ..rules.levels import primal
from ..rules.signature import is_differentiable
from ..seeds import undefined_where_nan
from ..spellings import other_spellings
from ..tree import LEAF
from .sweep import forward

_ndarray = np.ndarray


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], *,
        argnums: int | Sequence[int] | None = None, has_aux: bool = False,
        source: str | None = None) -> tuple[Any, ...]:
    """`(y, ydot)`: `y = f(*primals)` and the Jacobian-vector product `J ydot` along
    `tangents` (`jax.jvp`'s convention); `(y, ydot, aux)` with `has_aux`.

    Parameters
    ----------
    f : callable
        A function of NumPy code returning an array, a scalar or a container of them.
    primals : tuple or list
        Its positional arguments (containers too).
    tangents : tuple or list
        One tangent per primal (per entry of `argnums` when it is given), in the primal's
        structure, each leaf of its leaf's shape (cast to its dtype). Leaves that are not float
        or complex are constants and their tangents are ignored.
    argnums : int or sequence of int, optional
        Which primals carry tangents; default all. The others are constants.
    has_aux : bool
        `f` returns `(y, aux)`; aux's values come back third and carry no tangent.
    source : str, optional
        The adapter whose rules to use; None lets rulebridge choose.

    Returns
    -------
    tuple
        `(y, ydot)` with `ydot` in `y`'s structure: each leaf's tangent of its shape and dtype
        (zeros for an output that does not depend on the tangents, None for one that is not
        float or complex). Every returned array is new and writable.
    """
    primals, tangents = tuple(primals), tuple(tangents)
    positions = (tuple(range(len(primals))) if argnums is None
                 else positions_of(f, argnums, len(primals)))
    if len(tangents) != len(positions):
        raise TypeError(f"jvp of {name_of(f)}: {len(tangents)} tangent(s) for {len(positions)} "
                        f"differentiated primal(s); give one tangent per primal"
                        + ("" if argnums is None else " in argnums"))
    with collector_paused:
        run = Run(f, primals, {}, positions, False, source)
        aux = run.split_aux() if has_aux else None
        structure, values, variables = run.outputs()
        seeds = _seeds(f, run, positions, tangents)
        out = forward(run.tape, seeds)
    y = structure.unflatten(values)
    owner = Ownership(primals, tangents, y, aux)
    ydot = structure.unflatten([_tangent(out, var, v, owner) for var, v in zip(variables, values)])
    return (y, ydot, aux) if has_aux else (y, ydot)


def linearize(f: Callable[..., Any], *primals: Any, has_aux: bool = False,
              source: str | None = None) -> tuple[Any, ...]:
    """`(y, f_jvp)`: `y = f(*primals)` and `f_jvp(*tangents) -> ydot`, the linear map `jvp`
    applies, recorded once (`jax.linearize`); `(y, f_jvp, aux)` with `has_aux`.

    Parameters
    ----------
    f, has_aux, source
        As for `jvp`.
    *primals
        The point to linearize at: every float or complex leaf is traced.

    Returns
    -------
    tuple
        `y`, and `f_jvp`, which takes one tangent per primal and returns `ydot` in `y`'s
        structure; it can be called any number of times.
    """
    with collector_paused:
        run = Run(f, primals, {}, range(len(primals)), False, source)
    aux = run.split_aux() if has_aux else None
    structure, values, variables = run.outputs()
    y = structure.unflatten(values)
    positions = tuple(range(len(primals)))

    def f_jvp(*tangents: Any) -> Any:
        if len(tangents) != len(primals):
            raise TypeError(f"the linearization of {name_of(f)} takes {len(primals)} "
                            f"tangent(s), one per primal; got {len(tangents)}")
        with collector_paused:
            out = forward(run.tape, _seeds(f, run, positions, tangents))
        owner = Ownership(primals, tangents, y, aux)
        return structure.unflatten([_tangent(out, var, v, owner)
                                    for var, v in zip(variables, values)])

    return (y, f_jvp, aux) if has_aux else (y, f_jvp)


@other_spellings
def jacfwd(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
           source: str | None = None) -> Callable[..., Any]:
    """The Jacobian of `f` in forward mode (`jax.jacfwd`): one recording, then one forward
    sweep per entry of the differentiated arguments.

    Parameters
    ----------
    f : callable
        A function returning a real array or scalar, or a container of them; with `has_aux`,
        a pair `(out, aux)`.
    argnums, has_aux, source
        As for `rulebridge.jacobian`, whose layout the result has: for each output leaf of
        shape `S`, the argument's structure with each leaf of shape `S + leaf.shape` and the
        leaf's dtype (a tuple over `argnums` when it is a sequence). Arguments and outputs
        must be real.
    """

    @functools.wraps(f)
    def jacfwd_f(*args: Any, **kwargs: Any) -> Any:
        positions = positions_of(f, argnums, len(args))
        with collector_paused:
            run = Run(f, args, kwargs, positions, True, source)
            aux = run.split_aux() if has_aux else None
            structure, values, variables = run.outputs()
            _real(f, run, positions, values)
            blocks = [_block(run, i, values, variables) for i in positions]
        rows = []
        for k in range(len(values)):
            per_arg = tuple(run.traced[i].structure.unflatten(
                [b.copy() if n and i in positions[:n] else b for b in blocks[n][k]])
                for n, i in enumerate(positions))
            rows.append(per_arg if isinstance(argnums, (tuple, list)) else per_arg[0])
        jac = structure.unflatten(rows)
        return (jac, aux) if has_aux else jac

    return jacfwd_f


def _block(run: Run, i: int, values: list, variables: list) -> list:
    """For argument i: per output leaf k, the list of its leaves' Jacobian blocks."""
    arg = run.traced[i]
    blocks = [[np.zeros(np.shape(v) + np.shape(leaf), np.result_type(leaf))
               for leaf in arg.leaves] for v in values]
    for n, (leaf, var) in enumerate(zip(arg.leaves, arg.variables)):
        if var is None:
            continue
        basis = np.zeros(np.shape(leaf), np.result_type(leaf))
        for j in range(basis.size):
            basis.reshape(-1)[j] = 1
            seed = basis.copy() if type(leaf) is _ndarray else basis[()]
            basis.reshape(-1)[j] = 0
            out = forward(run.tape, {var: seed})
            index = (Ellipsis,) + np.unravel_index(j, np.shape(leaf))
            for k, (out_var, value) in enumerate(zip(variables, values)):
                t = out.get(out_var) if out_var is not None else None
                if t is not None:
                    blocks[k][n][index] = undefined_where_nan(np.asarray(t), value)
    return blocks


def _seeds(f, run: Run, positions: tuple, tangents: tuple) -> dict[int, Any]:
    seeds: dict[int, Any] = {}
    for i, tangent in zip(positions, tangents):
        arg = run.traced[i]
        where = f"tangent {positions.index(i)}"
        parts = [tangent] if arg.structure is LEAF else arg.structure.flatten_up_to(
            tangent, where, "the argument it is the tangent of")
        paths = None
        for k, (leaf, var, t) in enumerate(zip(arg.leaves, arg.variables, parts)):
            if var is None or t is None:
                continue
            dtype = np.result_type(primal(leaf))
            if type(t) is Traced:  # a tangent of an enclosing differentiation: recorded there
                if t.shape == np.shape(primal(leaf)) and (t.dtype.kind != "c" or dtype.kind == "c"):
                    seeds[var] = t if t.dtype == dtype else t.astype(dtype)
                    continue
            else:
                t = np.asarray(t)
            if t.shape != np.shape(primal(leaf)) or (t.dtype.kind == "c" and dtype.kind != "c"):
                paths = paths or ([where] if arg.structure is LEAF else
                                  arg.structure.paths(where))
                raise ValueError(f"jvp of {name_of(f)}: {paths[k]} is {t.dtype} of shape "
                                 f"{t.shape}, but its primal is {dtype} of shape "
                                 f"{np.shape(leaf)}; a tangent has its primal's shape and dtype")
            t = np.array(t, dtype=dtype, copy=True)  # ours: the caller may write into theirs
            t.flags.writeable = False
            seeds[var] = t if type(primal(leaf)) is _ndarray else t[()]
    return seeds


def _tangent(out: dict, var, value, owner: Ownership) -> Any:
    if not is_differentiable(value):
        return None
    t = out.get(var) if var is not None else None
    if type(t) is Traced or type(value) is Traced:  # an enclosing differentiation's: kept a box
        return t if t is not None else np.zeros(np.shape(primal(value)),
                                                np.result_type(primal(value)))
    if t is None:
        t = np.zeros(np.shape(value), np.result_type(value))
    else:  # an output whose value is NaN has no derivative (the reverse sweep's seeds too)
        t = undefined_where_nan(np.asarray(t), value)
    if isinstance(value, _ndarray):
        return owner.give(np.asarray(t))
    if isinstance(value, np.generic):
        return value.dtype.type(t)
    return type(value)(np.asarray(t)[()])


def _real(f, run: Run, positions: tuple, values: list) -> None:
    for v in values:
        if is_differentiable(v) and np.result_type(v).kind == "c":
            raise TypeError(f"jacfwd of {name_of(f)}: an output is complex "
                            f"({np.result_type(v)}); jacfwd is defined here for real outputs. "
                            "Take its real and imaginary parts as two outputs, or use "
                            "rulebridge.jvp.")
    for i in positions:
        for leaf in run.traced[i].leaves:
            if np.result_type(leaf).kind == "c":
                raise TypeError(f"jacfwd of {name_of(f)}: argument {i} has a complex leaf; "
                                "jacfwd is defined here for real arguments. Use rulebridge.jvp "
                                "with real and imaginary tangents.")

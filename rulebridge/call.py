"""The one pipeline every transformation runs: `f` traced at its arguments (boxes in, `f`
called, aux split off), its outputs' values and variables, then sweeps from seeds to each
differentiated argument's cotangent, in the argument's structure and owned by the caller.
`grad`, `vjp`, `trace`, `elementwise_grad` and `jacobian` (rulebridge/api.py) differ only in
their seeds and in what they build from the cotangents."""

from __future__ import annotations

from typing import Any

import numpy as np

from .boundary import Ownership, Run, name_of, positions_of
from .errors import UsageError
from .rules.levels import primal
from .rules.signature import is_differentiable


class Call:
    """`f` traced at `args`, the pipeline every transformation here shares: the run (boxes in,
    `f` called), aux split off, the outputs' values and variables; then `gradients(seeds)`,
    the sweep from those seeds to each differentiated argument's cotangent, in its structure
    and owned by the caller."""

    __slots__ = ("run", "positions", "aux", "structure", "values", "variables")

    def __init__(self, f, args: tuple, kwargs, positions, has_aux: bool, source,
                 strict: bool = True, own: bool = False) -> None:
        self.positions = tuple(positions)
        self.run = run = Run(f, args, kwargs, self.positions, strict, source)
        self.aux = run.split_aux(own) if has_aux else None  # own: as Run.owned makes them
        self.structure, self.values, self.variables = run.outputs()

    def gradients(self, seeds: dict, *held: Any) -> tuple:
        """One gradient per position for the sweep from `seeds`; `held`: what else the caller
        holds (its values, cotangents, aux), which no returned array may alias."""
        run = self.run
        cts = run.sweep(seeds)
        owner = Ownership(run.args, *held)
        return tuple(run.gradient(i, cts, owner) for i in self.positions)


def one_or_tuple(argnums, items: tuple) -> Any:
    return items if isinstance(argnums, (tuple, list)) else items[0]


def real_call(f, what: str, argnums, has_aux, source, args, kwargs) -> Call:
    """`f` traced at `args` for `what` (elementwise_grad, jacobian), its outputs real."""
    call = Call(f, args, kwargs, positions_of(f, argnums, len(args)), has_aux, source)
    structure, paths = call.structure, None
    for k, v in enumerate(call.values):
        if is_differentiable(v) and np.result_type(primal(v)).kind == "c":
            paths = paths or structure.paths("output")
            raise UsageError(f"{what} of {name_of(f)}: {paths[k]} is complex "
                             f"({np.result_type(primal(v))}); {what} is defined here for real "
                             "outputs.", fix="lambda *a: (np.real(f(*a)), np.imag(f(*a)))  # "
                             "its real and imaginary parts as two outputs; or rulebridge.vjp")
    return call



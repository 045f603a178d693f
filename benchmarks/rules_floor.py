"""The floor under any engine that differentiates with autograd's rules: those rules run alone.

A program is traced once with rulebridge (`source="autograd"`); each recorded op becomes a step
holding NumPy's function, its concrete arguments and output, the VJP makers autograd registered
for it, and the cotangent its output receives in a reverse sweep, computed once when the floor is
built (the real one, not ones: sum's VJP hands back a stride-0 broadcast, which the next VJP reads
far faster than a dense array; ones only where no cotangent reaches the op). `RulesFloor.run`
(what the benchmarks time) calls every op's NumPy forward in order, then, in reverse order, makes
each traced argument's VJP from (output, args, kwargs) and calls it on the stored cotangent. There
is no tape, no box, no accumulation and no dispatch: what is left is the imported rules' own cost (plus NumPy's
forwards), which no engine using those rules can avoid. A ratio such as "25x primal" or "0.3x
autograd" below this floor is out of reach without other rules.

The makers are autograd's, in their cheapest form: a primitive registered with `defvjp` runs its
per-argument maker on raw NumPy (`rulebridge_autograd.unboxed.per_argnum_makers`, as the adapter
does); one registered otherwise (`einsum`, `concatenate`) is called through autograd's
`vjp_argnums` maker; a composite (an autograd function written with primitives, or one of the
adapter's corrections such as `np.where`) runs `autograd.core.make_vjp` on it, autograd's tracer
included, as the adapter does. An index read's VJP is made and called, and its SparseObject is
left sparse. Ops whose rule is not autograd's (the engine's own buffer and write rules of a program
that mutates arrays) are left out and listed in `left_out`: the figure is then a lower bound.

`RulesFloor.gradient` returns what that sweep over the same steps leaves on the inputs, to prove
that the floor runs the rules a gradient needs (tests/project/test_rules_floor.py); it is never timed.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

import rulebridge as rb

SOURCE = "autograd"
RULES_ALONE = "autograd rules alone"  # the benchmarks' name for this floor


class Step:
    """One recorded op: `out = function(*args, **kwargs)` and the VJPs of its traced arguments.

    `forward()` is the call; `vjps` holds `(make, many)`: `make()` runs autograd's maker on
    (out, args, kwargs) and returns a VJP taking the output's cotangent and returning one
    argument's cotangent, or (`many`) a tuple of them for `traced_argnums` in order. Both are
    bound with `functools.partial`, whose call costs less than a `*args, **kwargs` call."""

    __slots__ = ("name", "forward", "out", "cotangent", "inputs", "outputs", "several",
                 "traced_argnums", "vjps")

    def __init__(self, op: rb.Op, entry) -> None:
        self.name = rb.function_name(op.rule.function)
        self.forward = partial(op.rule.function, *op.args, **op.kwargs)
        self.out = self.forward()
        self.inputs = op.inputs
        self.outputs = op.outputs
        self.several = op.structure is not None  # `out` is a tuple of outputs
        self.traced_argnums = tuple(i for i, var in enumerate(op.inputs) if var is not None)
        self.cotangent = None  # set by RulesFloor from its sweep
        self.vjps = [(partial(maker, self.out, *op.args, **op.kwargs), many)
                     for maker, many in _vjp_makers(entry, self.traced_argnums, self.name)]


class RulesFloor:
    """`RulesFloor(program, *args)`: `program` traced once on `args`, as steps (see the module)."""

    def __init__(self, program: Callable, *args: Any) -> None:
        _, tape = rb.trace(program, *args, source=SOURCE)
        table = rb.REGISTRY.adapter(SOURCE).table
        self.steps: list[Step] = []
        self.left_out: list[str] = []  # ops whose rule is not autograd's: not in the floor
        for op in tape.ops:
            entry = table.get(op.rule.function) if op.rule.source == SOURCE else None
            if entry is None:
                self.left_out.append(f"{rb.function_name(op.rule.function)} "
                                     f"[{op.rule.source}: {op.rule.notes or 'no autograd rule'}]")
            else:
                self.steps.append(Step(op, entry))
        self._tape = tape
        self._gradient, received = self._sweep()
        for step, g in zip(self.steps, received):
            step.cotangent = _ones_like(step.out) if g is None else g
        self._forwards = tuple(s.forward for s in self.steps)
        self._backwards = tuple((make, s.cotangent)
                                for s in reversed(self.steps) for make, _ in s.vjps)

    def run(self) -> None:
        """The timed floor: every forward, then every VJP made and called, nothing kept."""
        for forward in self._forwards:
            forward()
        for make, cotangent in self._backwards:
            make()(cotangent)

    def gradient(self) -> tuple:
        """The gradient with respect to each traced argument, from the sweep over the same steps
        (seed: ones of the result). A check, never timed; refused when ops were left out, since
        the sweep then missed their rules."""
        if self.left_out:
            raise ValueError(f"the floor leaves out {', '.join(self.left_out)}: its sweep is not "
                             "a gradient")
        if self._gradient is None:
            raise ValueError("RulesFloor.gradient needs a program with one traced result")
        return self._gradient

    def _sweep(self) -> tuple[tuple | None, list]:
        """A reverse sweep with accumulated cotangents: (the inputs' cotangents, or None for a
        program without one traced result; the cotangent each step received, None if none)."""
        tape = self._tape
        values = dict(tape.values)
        for step in self.steps:
            outs = step.out if step.several else (step.out,)
            values.update((var, value) for var, value in zip(step.outputs, outs) if var is not None)
        seeded = type(tape.outputs) is int
        cotangents = {tape.outputs: _ones_like(values[tape.outputs])} if seeded else {}
        received: list = [None] * len(self.steps)
        for index in range(len(self.steps) - 1, -1, -1):
            step = self.steps[index]
            g = tuple(cotangents.pop(var, None) if var is not None else None
                      for var in step.outputs)
            if all(gi is None for gi in g):
                continue
            if not step.several:
                g = g[0]
            else:
                g = tuple(np.zeros_like(o) if gi is None else gi for gi, o in zip(g, step.out))
            received[index] = g
            # A `many` maker is the step's only one: zip pairs it with the first argument.
            for (make, many), argnum in zip(step.vjps, step.traced_argnums):
                ct = make()(g)
                for i, c in (zip(step.traced_argnums, ct) if many else ((argnum, ct),)):
                    _accumulate(cotangents, step.inputs[i], c)
        if not seeded:
            return None, received
        return tuple(_dense(cotangents.get(var), values[var]) for var in tape.inputs), received

    def describe(self) -> str:
        made = sum(len(s.vjps) for s in self.steps)
        text = f"{len(self.steps)} ops, {made} VJPs"
        if self.left_out:
            text += f"; left out (a lower bound): {', '.join(sorted(set(self.left_out)))}"
        return text


def _vjp_makers(entry, argnums: tuple, name: str) -> list[tuple[Callable, bool]]:
    """`(maker, many)` pairs for the op's traced arguments (see `Step`): one per argument for a
    `defvjp` primitive, one for all of them otherwise; none for a function autograd declares
    constant."""
    from autograd.core import primitive_vjps
    from rulebridge_autograd.unboxed import per_argnum_makers

    if entry.kind == "nograd" or not argnums:
        return []
    if entry.kind == "composite":
        return [(_composite_maker(entry.wrapped, argnums), True)]
    vjp_maker = primitive_vjps[entry.wrapped]
    makers = per_argnum_makers(vjp_maker)
    if makers is None:
        return [(_argnums_maker(vjp_maker, argnums), True)]
    missing = [i for i in argnums if i not in makers]
    if missing:
        raise NotImplementedError(f"autograd defines no VJP of {name} with respect to "
                                  f"argument(s) {missing}; the floor cannot run it")
    return [(makers[i], False) for i in argnums]


def _argnums_maker(vjp_maker: Callable, argnums: tuple) -> Callable:
    def make(out, *args, **kwargs):
        return vjp_maker(argnums, out, args, kwargs)

    return make


def _composite_maker(wrapped: Callable, argnums: tuple) -> Callable:
    """autograd's tracer over the composition, as the adapter's composite rule runs it."""
    from autograd.core import make_vjp
    from autograd.wrap_util import subvals

    def make(out, *args, **kwargs):
        def of_traced(traced):  # the traced arguments substituted into the recorded call
            return wrapped(*subvals(args, zip(argnums, traced)), **kwargs)

        vjp, _ = make_vjp(of_traced, tuple(args[i] for i in argnums))
        return vjp

    return make


def _ones_like(out):
    """A cotangent for `out`: ones of its shape and dtype, a tuple of them for several outputs
    (zeros for an output that carries no gradient, as autograd expects one there too)."""
    if isinstance(out, (tuple, list)):
        return tuple(np.ones_like(o) if np.result_type(o).kind in "fc" else np.zeros_like(o)
                     for o in out)
    return np.ones_like(out)


def _accumulate(cotangents: dict, var, ct) -> None:
    if var is None or ct is None:
        return
    if type(var) is tuple:  # a list/tuple argument: one cotangent per item
        for item_var, item_ct in zip(var, ct):
            _accumulate(cotangents, item_var, item_ct)
        return
    ct = _densified(ct)
    held = cotangents.get(var)
    cotangents[var] = ct if held is None else held + ct


def _densified(ct):
    from autograd.core import SparseObject

    if type(ct) is SparseObject:
        return ct.mut_add(ct.vs.zeros())
    return ct


def _dense(ct, value):
    return np.zeros_like(value) if ct is None else np.asarray(ct, dtype=np.result_type(value))


def available() -> bool:
    """Is autograd's adapter installed and loading (the floor reads its catalog)?"""
    try:
        rb.REGISTRY.adapter(SOURCE)
    except rb.AdapterError:
        return False
    return True

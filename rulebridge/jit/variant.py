"""One recorded program of a jitted function at one key: traced once, replayed on new inputs.

`trace(spec, args, kwargs)` runs the transformation as `rulebridge.grad` (or `value_and_grad`,
`jacobian`, or the function alone) would, on a tape whose inputs are every float or complex
leaf of every non-static argument (the differentiated ones and the others: new data is a new
input, not a new program), and compiles the tape into a `Program` before the sweep. It returns
the eager result and the `Variant` that replays it: `variant.replay(args, kwargs)` calls the
program on the new leaves and builds the result as the eager call builds it (the outputs' and
gradients' structures, the caller's ownership of every returned array).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..boundary import Ownership, as_argument, boxable, positions_of
from ..seeds import one_like, scalar_output
from ..call import Call, jacobian_block, one_or_tuple, real_call
from ..engine.collector import collector_paused
from ..engine.detached import plain
from ..engine.protect import read_only
from ..tree import LEAF, tree_flatten
from .program import Mismatch, Program

_ndarray = np.ndarray


class Spec:
    """What a jitted function computes: `kind` ("plain", "grad", "value_and_grad" or
    "jacobian") of `f`, with its argnums, has_aux and source."""

    __slots__ = ("kind", "f", "argnums", "has_aux", "source")

    def __init__(self, fun: Callable) -> None:
        transform = getattr(fun, "__rulebridge_transform__", None)
        if transform is None:
            self.kind, self.f, self.argnums, self.has_aux, self.source = (
                "plain", fun, None, False, None)
        else:
            self.kind, self.f, self.argnums, self.has_aux, self.source = transform


class Variant:
    """A program and how to feed it: which argument leaf is which tape input, and how to build
    the result from what the program returns."""

    def __init__(self, spec: Spec, call: Call, program: Program, slots: list, outputs: tuple,
                 aux: Any) -> None:
        self.spec, self.program = spec, program
        # What a replay needs of the traced call, not the call itself (its tape holds every
        # value of the first call): the differentiated positions, each traced argument's
        # structure and variables, and the arrays its writes wrote into (checked once).
        self.positions = call.positions
        self.traced = {i: _Leaves(arg, None) for i, arg in call.run.traced.items()}
        effects = call.run.tape.effects
        writes = getattr(effects, "writes", ())  # (rulebridge/writes/write.py's state)
        self.written = [op.residuals.target for op in writes]
        self.slots = slots  # per tape input: (argument position, leaf index)
        self.outputs = outputs  # the result's structure and its leaves: variables or constants
        self.aux = aux  # has_aux: (structure, leaves) likewise
        self.verified = False  # compared once with a second eager trace (jitted.py)
        self.staged: Any = None  # another back end's form of the program (jitted.BACKENDS)
        self.replays = 0

    def inputs(self, flat: list) -> list:
        values = []
        for i, k in self.slots:
            value = flat[i][k]
            values.append(read_only(value) if type(value) is _ndarray else value)
        return values

    def replay(self, args: tuple, flat: list) -> Any:
        """The result for these arguments (`flat`: each argument's leaves), as the eager call
        gives it. Raises GuardFailed when they take another path, Mismatch when a cotangent
        does not conform."""
        inputs = self.inputs(flat)
        kind = self.spec.kind
        values, backward = self.program.run(inputs)
        by_var = dict(zip(self.program.outputs, values))
        originals = {var: flat[i][k] for var, (i, k) in zip(self.program.inputs, self.slots)}
        result = _rebuild(self.outputs, by_var, originals)
        aux = _rebuild(self.aux, by_var, originals) if self.aux is not None else None
        if kind == "plain":
            return result
        if kind == "jacobian":
            return self._jacobian(args, flat, backward, result, aux)
        structure, leaves = self.outputs
        var = leaves[0] if type(leaves[0]) is int else None
        seeds = {var: one_like(result)} if var is not None else {}
        cts = backward(seeds) if seeds else {}
        owner = Ownership(args, result, aux)
        grads = tuple(_gradient(self.traced[i], flat[i], cts, owner) for i in self.positions)
        value = (result, aux) if self.spec.has_aux else result
        grads = one_or_tuple(self.spec.argnums, grads)
        if kind == "grad":
            return (grads, aux) if self.spec.has_aux else grads
        return value, grads

    def _jacobian(self, args, flat, backward, result, aux) -> Any:
        structure, leaves = self.outputs
        run = _Replayed(self, flat, backward)
        values = [result] if structure is LEAF else tree_flatten(result)[0]
        replayed: Any = run.as_call(values, leaves)  # what jacobian_block reads of a Call
        blocks = [jacobian_block(replayed, k) for k in range(len(values))]
        jac = structure.unflatten([one_or_tuple(self.spec.argnums, b) for b in blocks])
        return (jac, aux) if self.spec.has_aux else jac


class _Replayed:
    """What `jacobian_block` reads of a `Call`, over a replay: its sweep is the program's."""

    def __init__(self, variant: Variant, flat: list, backward: Callable) -> None:
        self.positions = variant.positions
        self.traced = {i: _Leaves(arg, flat[i]) for i, arg in variant.traced.items()}
        self.leaves = {var: leaf for arg in self.traced.values()
                       for var, leaf in zip(arg.variables, arg.leaves) if var is not None}
        self.backward = backward
        self.run = self

    def sweep(self, seeds: dict) -> dict:
        """The program's sweep, its cotangents checked as `_conforming` checks a gradient's."""
        cts = self.backward(seeds)
        for var, ct in cts.items():
            if ct is not None and var in self.leaves:
                _conforming(as_argument(ct, self.leaves[var]), self.leaves[var])
        return cts

    def as_call(self, values: list, leaves: list) -> "_Replayed":
        self.values = values
        self.variables = [v if type(v) is int else None for v in leaves]
        return self


class _Leaves:
    """An `Argument` (rulebridge/boundary.py) with this call's leaves."""

    def __init__(self, arg: Any, leaves: list | None) -> None:
        self.structure, self.variables, self.leaves = arg.structure, arg.variables, leaves


def _gradient(arg, leaves: list, cts: dict, owner: Ownership) -> Any:
    grads = [None if var is None else owner.give(_conforming(as_argument(cts.get(var), leaf),
                                                             leaf))
             for leaf, var in zip(leaves, arg.variables)]
    return grads[0] if arg.structure is LEAF else arg.structure.unflatten(grads)


def _conforming(ct: Any, leaf: Any) -> Any:
    """A gradient of the leaf's type, shape and dtype, or Mismatch: the replay's sweep does not
    check each cotangent (program.py), so what it returns is checked here."""
    if type(ct) is not type(leaf) or np.shape(ct) != np.shape(leaf) or (
            isinstance(leaf, (_ndarray, np.generic)) and ct.dtype != leaf.dtype):
        raise Mismatch
    return ct


class _Held:
    """A result leaf no op computed: given back as it was (an array as a copy of its own)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = np.array(value, copy=True) if type(value) is _ndarray else value


def _rebuild(layout: tuple, by_var: dict, originals: dict) -> Any:
    structure, leaves = layout
    values = []
    for leaf in leaves:
        if type(leaf) is _Held:
            v = leaf.value
            values.append(np.array(v, copy=True) if type(v) is _ndarray else v)
        elif leaf in originals:  # f returned its argument: the caller's own array
            values.append(originals[leaf])
        else:
            values.append(by_var[leaf])
    return values[0] if structure is LEAF else structure.unflatten(values)


def _layout(call: Call, tree: Any) -> tuple:
    """(structure, leaves) of a traced result: each leaf its variable, or `_Held`."""
    leaves, structure = tree_flatten(tree)
    values, variables = call.run.tape._unbox_sequence(call.run.f, [plain(x) for x in leaves])
    return structure, [var if var is not None else _Held(value)
                       for value, var in zip(values, variables)]


def trace(spec: Spec, args: tuple, kwargs: dict, static: frozenset,
          lifted: bool = True) -> tuple[Any, Variant]:
    """The eager result of `spec` at these arguments, and the variant that replays it; with
    `lifted`, the arguments it does not differentiate are traced too (else they are constants
    of the program, and part of its key by value)."""
    f, kind = spec.f, spec.kind
    others = tuple(i for i in range(len(args)) if i not in static) if lifted else ()
    with collector_paused:
        if kind == "plain":
            call = Call(f, args, kwargs, others, False, None, strict=False)
        else:
            positions = positions_of(f, spec.argnums, len(args))
            also = tuple(i for i in others if i not in positions)
            if kind == "jacobian":
                # replayed: a tape that sheds as it records drops its decisions (the guards)
                call = real_call(f, "jacobian", spec.argnums, spec.has_aux, spec.source, args,
                                 kwargs, also, reverse_only=False)
            else:
                call = Call(f, args, kwargs, positions, spec.has_aux, spec.source, also=also)
        tape = call.run.tape
        outputs = (call.structure, [var if var is not None else _Held(value)
                                    for value, var in zip(call.values, call.variables)])
        aux = _layout(call, call.run.boxed_aux) if spec.has_aux else None
        wanted = [] if kind == "plain" else [
            v for i in dict.fromkeys(call.positions) for v in call.run.traced[i].variables
            if v is not None]
        leaves = [v for layout in (outputs, aux) if layout is not None
                  for v in layout[1] if type(v) is int]
        produced = [v for v in dict.fromkeys(leaves) if v not in tape.inputs]
        seeded = [v for v in outputs[1] if type(v) is int]
        program = Program(tape, produced, wanted, seeded, name=_identifier(f))
        slots = []
        for var in tape.inputs:
            for i, arg in call.run.traced.items():
                if var in arg.variables:
                    slots.append((i, arg.variables.index(var)))
                    break
        variant = Variant(spec, call, program, slots, outputs, aux)
        value = _eager(spec, call)
    return value, variant


def _eager(spec: Spec, call: Call) -> Any:
    """What the transformation returns at the traced call (as rulebridge/api.py computes it)."""
    kind, f = spec.kind, spec.f
    if kind == "plain":
        return call.structure.unflatten(call.values) if call.structure is not LEAF \
            else call.values[0]
    call.run.tape.shed_large_values()
    if kind == "jacobian":
        blocks = [jacobian_block(call, k) for k in range(len(call.values))]
        jac = call.structure.unflatten([one_or_tuple(spec.argnums, b) for b in blocks])
        return (jac, call.aux) if spec.has_aux else jac
    value = scalar_output(f, call.structure, call.values)
    var = call.variables[0]
    grads = call.gradients({var: one_like(value)} if var is not None else {}, value, call.aux)
    grads = one_or_tuple(spec.argnums, grads)
    if kind == "grad":
        return (grads, call.aux) if spec.has_aux else grads
    return ((value, call.aux) if spec.has_aux else value), grads


def _identifier(f: Callable) -> str:
    name = getattr(f, "__name__", "program")
    return name if name.isidentifier() else "program"


def differentiated(spec: Spec, n_args: int) -> frozenset:
    """The positions `spec` differentiates at a call with `n_args` positional arguments."""
    if spec.kind == "plain":
        return frozenset()
    return frozenset(positions_of(spec.f, spec.argnums, n_args))


def traced_leaf(x: Any) -> bool:
    """Is this leaf of a traced argument a tape input (else part of the key by value)?"""
    return boxable(x)

"""Values crossing the public API, once per call and never per op: containers of arguments in
(boxed leaf by leaf), results and cotangents out (unboxed, in the caller's structure), and the
caller's ownership of every array that comes back.

`Run` is one traced call of the user's function: which leaves of which arguments are traced
(their tape variables, read when they were boxed: a write rebinds a box to a new variable, and
the gradient belongs to the variable the argument had on entry), the outputs' variables (read
when the function returned), and the sweep from seeds to the arguments' cotangents.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .checking.debug import CheckingRegistry, enabled as debug_enabled
from .engine.box import Traced
from .engine.detached import plain
from .engine.sweep import backward
from .engine.tape import Tape
from .engine.protect import frozen_copy, same
from .ownership import Ownership, as_argument  # noqa: F401 (boundary.Ownership: the API's)
from .errors import MutationError, NestedDifferentiationError, UsageError
from .rules.levels import primal
from .rules.registry import REGISTRY
from .rules.signature import is_differentiable
from .writes import ROUTES
from .writes.follow import following
from .tree import LEAF, Structure, describe, is_container, tree_flatten

_ndarray = np.ndarray


def name_of(f: Any) -> str:
    return getattr(f, "__qualname__", None) or repr(f)


def nested(f: Any) -> NestedDifferentiationError:
    return NestedDifferentiationError(
        f"{name_of(f) if f else 'a function'} returned or received a traced value of a "
        "differentiation that has finished or is nested inside this one (kept in a global, a "
        "closure or a cache after its grad/vjp returned).",
        fix="return y  # return results from the differentiated function instead of keeping "
            "them; nesting itself (rulebridge.grad(rulebridge.grad(f))) is supported")


def new_tape(source: str | None = None) -> Tape:
    """A tape that records writes, looking rules up in the process's registry (through debug
    mode's checks when it is on: read once per tape, so the per-op path is the same either
    way)."""
    registry = CheckingRegistry(REGISTRY) if debug_enabled() else REGISTRY
    return Tape(source, registry, ROUTES)


def boxable(x: Any) -> bool:
    """A differentiable value of a type the rules are keyed by: an exact ndarray (not
    np.matrix or a masked array, whose semantics NumPy's functions do not follow, nor another
    library's array), a NumPy scalar or a Python float or complex."""
    if type(x) is Traced:  # a box of an enclosing differentiation (rulebridge/rules/levels.py)
        x = primal(x)
    return (type(x) is _ndarray or isinstance(x, (np.generic, float, complex))) \
        and is_differentiable(x)


class Argument:
    """One positional argument as traced: its structure, its leaves, and each leaf's tape
    variable (None for a leaf passed through as a constant)."""

    __slots__ = ("structure", "leaves", "variables")

    def __init__(self, structure: Structure, leaves: list, variables: list) -> None:
        self.structure, self.leaves, self.variables = structure, leaves, variables


class Run:
    """One call of `f` on boxes of a new tape: `Run(f, args, kwargs, positions, strict, source)`
    boxes every float/complex leaf of `args[i]` for i in `positions` (with `strict`, any other
    leaf there is refused with its path, as grad refuses it), calls `f`, and keeps the result.
    The caller pauses the collector around it and around `sweep` (rulebridge/engine/collector.py)."""

    def __init__(self, f: Callable, args: tuple, kwargs: dict, positions, strict: bool,
                 source: str | None, reverse_only: bool = False, also: tuple = (),
                 replayed: bool = True) -> None:
        self.f, self.args = f, args
        tape = self.tape = new_tape(source)
        tape.sheds_as_recorded = reverse_only  # only the reverse sweep reads it: shedding.py
        tape.keeps_decisions = replayed  # False: never replayed, so no decision is kept
        boxed = list(args)
        self.traced: dict[int, Argument] = {}
        for i in positions:
            if i not in self.traced:
                boxed[i], self.traced[i] = _box_argument(f, i, args[i], tape, strict)
        for i in also:  # traced too, never strictly (a recorded program's other inputs: jit)
            if i not in self.traced:
                boxed[i], self.traced[i] = _box_argument(f, i, args[i], tape, False)
        if tape.protected.views:  # plain arguments that alias a traced one are passed read-only
            boxed = [_shielded(tape, a, f"positional argument {i}") for i, a in enumerate(boxed)]
            kwargs = {k: _shielded(tape, v, f"keyword argument {k!r}") for k, v in kwargs.items()}
        entry = self.seal()  # the traced arguments' bytes on entry (`check_unseen_writes`)
        try:
            with following(tape):  # np.zeros(n) in f's code: a buffer the tape follows
                self.result = f(*boxed, **kwargs)
        except ValueError as exc:  # a write through one of them: say why it is read-only
            tape.protected.plain_write_refused(exc, name_of(f))
            raise
        finally:
            tape.close()
        if entry:
            self.check_unseen_writes(entry)

    def split_aux(self, own: bool = False) -> Any:
        """For has_aux=True: `f` returned `(output, aux)`; keep the output, return aux's
        values (no gradient flows through aux, as in JAX); with `own`, as `owned` makes
        them."""
        result = self.result
        if type(result) not in (tuple, list) or len(result) != 2:
            raise UsageError(f"has_aux=True: {name_of(self.f)} must return a pair (output, aux), "
                             f"but it returned {describe(result)}.",
                             fix="return out, aux  # or drop has_aux")
        self.result, aux = result
        self.boxed_aux = aux  # as f returned it (a recorded program reads its variables)
        return self.unbox(aux, own)

    def outputs(self) -> tuple[Structure, list, list]:
        """`(structure, values, variables)` of the result: each leaf's value, and its tape
        variable as it stands now (None for a leaf that is not traced)."""
        result = self.result
        tape = self.tape
        if type(result) is Traced and tape.effects is None and result._tape is tape:
            # the usual result, without a tree (a buffer set free is `plain` below)
            return LEAF, [tape.protected.unprotected(result._value)], [result._var]
        leaves, structure = tree_flatten(result)
        leaves = [plain(leaf) for leaf in leaves]
        if tape.effects is not None:
            tape.effects.check_result(leaves)  # a stale box would seed a wrong variable
        values, variables = tape._unbox_sequence(self.f, leaves)
        if values is None:  # a box of a higher level's trace: it escaped that one
            raise nested(self.f)
        # f returned its argument: the caller's array, not the read-only view rules saw
        values = [tape.protected.unprotected(v) if var is not None else v
                  for v, var in zip(values, variables)]
        return structure, values, list(variables)

    def unbox(self, tree: Any, own: bool = False) -> Any:
        leaves, structure = tree_flatten(tree)
        if not any(type(leaf) is Traced for leaf in leaves):
            return tree
        leaves = [plain(leaf) for leaf in leaves]
        for leaf in leaves:
            if type(leaf) is Traced and leaf._tape.level > self.tape.level:
                raise nested(None)
        values = [self.tape.protected.unprotected(leaf._value) if type(leaf) is Traced else leaf
                  for leaf in leaves]
        if own:
            values = self.owned(values, [type(leaf) is Traced for leaf in leaves])
        return structure.unflatten(values)

    # -- a pullback that outlives the call (vjp) -----------------------------------------------

    def owned(self, values: list, traced: list) -> list:
        """Traced values as the caller receives them when a pullback outlives the call: each
        array a copy of its own, since the tape's pullbacks may read the array itself (exp's
        reads its output) and the caller may write into what it gets (`r -= data`). A value
        that is the caller's own argument (f returned it) stays the caller's."""
        arguments = {id(leaf) for arg in self.traced.values() for leaf in arg.leaves}
        return [np.array(v, copy=True) if t and type(v) is _ndarray and id(v) not in arguments
                else v for v, t in zip(values, traced)]

    def seal(self) -> list:
        """Each traced argument array as it is now, copied, with its name: a pullback that
        outlives the call reads the caller's memory (the program's writes into an argument are
        the caller's, so the tape holds no copy of it), which `check_sealed` verifies."""
        sealed = []
        for i, arg in self.traced.items():
            names = ([f"argument {i}"] if arg.structure is LEAF
                     else arg.structure.paths(f"argument {i} "))
            for name, leaf, var in zip(names, arg.leaves, arg.variables):
                if var is not None and type(leaf) is _ndarray:
                    sealed.append((name, leaf, frozen_copy(leaf)))
        return sealed

    def check_unseen_writes(self, entry: list) -> None:
        """Raise MutationError naming each traced argument whose memory was written during the
        call through a name the tape never saw (a global, a closure's array, a view made before
        the call): its bytes, with the program's recorded writes undone, are not `entry`'s
        (`seal` on entry). Every op recorded after such a write read memory its history does
        not explain. One copy and one comparison per argument per call, never per op."""
        effects = self.tape.effects
        # undo the recorded writes, last first, each checking it finds what it left
        overwritten = None if effects is None else effects.undo_checking()
        try:
            changed = [(name, leaf) for name, leaf, copy in entry if not same(leaf, copy)
                       or (overwritten is not None and np.may_share_memory(leaf, overwritten))]
        finally:
            if effects is not None:
                effects.end_sweep()  # and redo them: the caller sees NumPy's result
        if changed:
            name, leaf = changed[0]
            raise MutationError(
                f"{name_of(self.f)} changed {', '.join(n for n, _ in changed)} "
                f"({describe(leaf)}), which is being differentiated, by a write through another "
                "name while it ran: a global, a closure's or a list's array, or a view made "
                "before the call, that holds the same memory. The tape records writes through "
                "the argument it passed in, not through names it never saw, so the gradient "
                "would be wrong.",
                fix="x[i] = v  # write through the argument f receives, not through a global or "
                    "closure alias of the caller's array; or read the alias's values from a copy "
                    "(alias = x.copy())",
                details="The check compares the argument's bytes at the end of the call, with "
                        "the program's own recorded writes undone, against a copy made on entry; "
                        "a write undone to the same bytes before the call returns is not seen "
                        "and changes nothing an op read after it.")

    def check_sealed(self, sealed: list, when: str) -> None:
        """Raise MutationError naming each sealed argument whose bytes changed."""
        changed = [(name, leaf) for name, leaf, copy in sealed if not same(leaf, copy)]
        if changed:
            raise MutationError(
                f"the pullback of {name_of(self.f)} {when}: "
                f"{', '.join(name for name, _ in changed)} ({describe(changed[0][1])}) was "
                "changed in place after vjp returned (x[i] = ..., x -= ..., or a write through a "
                "view of it or its base). The pullback differentiates at the values the forward "
                "saw and reads them from that array, so it would give the derivative at the new "
                "values. Call the pullback before changing it, or pass a copy: "
                "rulebridge.vjp(f, x.copy()).")

    def sweep(self, seeds: dict[int, Any]) -> dict[int, Any]:
        """The cotangents of the tape's inputs for these output seeds; may run again."""
        return backward(self.tape, seeds) if seeds else {}

    def gradient(self, i: int, cts: dict[int, Any], owner: Ownership,
                 constants: Any = None) -> Any:
        """Argument i's cotangent in its own structure: each traced leaf's in its shape and
        dtype (zeros where nothing flowed), `constants` in place of the other leaves."""
        arg = self.traced[i]
        if arg.structure is LEAF:  # the usual argument: one array or scalar
            var = arg.variables[0]
            return constants if var is None else owner.give(as_argument(cts.get(var), arg.leaves[0]))
        return arg.structure.unflatten([
            constants if var is None else owner.give(as_argument(cts.get(var), leaf))
            for leaf, var in zip(arg.leaves, arg.variables)])


def _box_argument(f, i: int, x: Any, tape: Tape, strict: bool) -> tuple[Any, Argument]:
    if type(x) is _ndarray or type(x) is float:  # the usual argument, without a tree
        if boxable(x):
            return tape.new_input(x), Argument(LEAF, [x], [tape.inputs[-1]])
    leaves, structure = tree_flatten(x)
    variables: list = []
    boxed = []
    for k, leaf in enumerate(leaves):
        if boxable(leaf):
            boxed.append(tape.new_input(leaf))
            variables.append(tape.inputs[-1])
        elif strict:
            raise _not_differentiable(f, i, x, structure, k, leaf)
        else:
            boxed.append(leaf)
            variables.append(None)
    return structure.unflatten(boxed), Argument(structure, leaves, variables)


def _shielded(tape: Tape, x: Any, name: str) -> Any:
    """`x` with each plain ndarray leaf that shares memory with a traced argument read-only
    (rulebridge/engine/protect.py: a write through it would change that argument unseen)."""
    if type(x) is _ndarray:
        return tape.protected.shield(x, name)
    if type(x) is Traced or not is_container(x):
        return x
    leaves, structure = tree_flatten(x)
    shielded = [tape.protected.shield(leaf, f"{name} (a leaf)") if type(leaf) is _ndarray
                else leaf for leaf in leaves]
    if all(a is b for a, b in zip(shielded, leaves)):
        return x
    return structure.unflatten(shielded)


def _not_differentiable(f, i: int, x: Any, structure: Structure, k: int, leaf: Any) -> UsageError:
    path = structure.paths(_parameter_name(f, i))[k] if structure is not LEAF else None
    where = f"argument {i}" if path is None else f"the leaf {path} of argument {i}"
    name = path or _parameter_name(f, i)
    if isinstance(leaf, _ndarray):
        what = (f"an {type(leaf).__name__}" if type(leaf) is not _ndarray
                else f"an array of dtype {leaf.dtype}")
        fix = (f"{name} = np.asarray({name})  # an np.matrix; {name}.filled() for a masked array"
               if type(leaf) is not _ndarray else f"{name} = {name}.astype(np.float64)")
    elif isinstance(leaf, (int, np.integer, np.bool_)):
        what, fix = describe(leaf), f"{name} = float({name})"
    else:
        what = describe(leaf)
        fix = (f"rulebridge.register_container({type(leaf).__name__}, flatten, unflatten)  # "
               "if it holds arrays")
    keep_out = ("leave this argument out of argnums" if structure is LEAF else
                "move it out of the differentiated container (a separate argument that is not "
                "in argnums, or a closure)")
    return UsageError(f"cannot differentiate {name_of(f)} with respect to {where}: it is {what}.",
                      fix=fix,
                      details=f"Gradients are defined for float and complex ndarrays and "
                              f"scalars; or {keep_out}.")


def _parameter_name(f, i: int) -> str:
    try:
        names = [p.name for p in inspect.signature(f).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return names[i] if i < len(names) else f"args[{i}]"


# -- what the API functions share ----------------------------------------------------------


def positions_of(f, argnums, n_args) -> tuple[int, ...]:
    positions = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    for i in positions:
        if not isinstance(i, int) or not -n_args <= i < n_args:
            raise UsageError(f"argnums={argnums!r} for {name_of(f)} called with {n_args} "
                             f"positional argument(s).",
                             fix=f"argnums={tuple(range(n_args))!r}  # positions of the arguments "
                                 "to differentiate")
    return tuple(i % n_args for i in positions)

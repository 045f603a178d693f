"""Containers through an imported function: `f(params)` with `params` any nesting of tuple,
list, dict, namedtuple and registered containers, or `f` returning one, is recorded as one op of
a `LeafCall`: the same function with its arguments' containers taken apart into positional
leaves and its result's put back, so that the tape, the adapters and the checks see arrays only.

A LeafCall stands for one function at one layout of its arguments, and its name says which
(`f[({'W': *, 'b': *},)]`): its rules are imported from the sources its function was imported
from (each import's `derive`), and its checks are its own, since a verdict at one layout says
nothing about another. Errors about a LeafCall's arguments name them by position among the
leaves; `paths` (and the note added to such an error) says which leaf each one is.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from .engine.box import Traced
from .engine.result import layout
from .errors import RulebridgeError
from .rules.registry import REGISTRY, Registry
from .rules.rule import function_name
from .rules.signature import is_differentiable
from .tree import LEAF, Structure, is_container, tree_flatten

_ndarray = np.ndarray


class LeafCall:
    """`function` at one layout of its arguments, as a function of their leaves:
    `LeafCall(...)(*leaves, **static)` rebuilds `(args, kwargs)` from `structure`, calls
    `function`, and returns its result's leaves as a tuple (the result itself when it is one
    array or scalar)."""

    def __init__(self, function: Callable, structure: Structure, spelled: str) -> None:
        self.function, self.structure, self.layout = function, structure, spelled
        self.__rulebridge_name__ = function_name(function) + spelled
        self.__module__ = getattr(function, "__module__", None)
        self.__name__ = self.__qualname__ = getattr(function, "__name__", "function") + spelled
        self.parents: dict[str, Any] = {}  # source -> the import this call's rule derives from
        self._result = threading.local()  # the result's structure, per thread, at the last call

    def __call__(self, *leaves: Any, **static: Any) -> Any:
        args, kwargs = self.structure.unflatten(leaves)
        return self._apart(self.function(*args, **kwargs, **static))

    def _apart(self, out: Any) -> Any:
        out_leaves, structure = tree_flatten(out)
        self._result.structure = structure
        return out if structure is LEAF else tuple(out_leaves)

    def over_leaves(self, equivalent: Callable) -> Callable:
        """`equivalent` (a source's function of the same meaning) as a function of the leaves."""
        structure = self.structure

        def equivalent_of_leaves(*leaves: Any, **static: Any) -> Any:
            args, kwargs = structure.unflatten(leaves)
            out = equivalent(*args, **kwargs, **static)
            out_leaves, out_structure = tree_flatten(out)
            return out if out_structure is LEAF else tuple(out_leaves)

        equivalent_of_leaves.__module__ = getattr(equivalent, "__module__", None)
        equivalent_of_leaves.__qualname__ = (getattr(equivalent, "__qualname__", None)
                                             or repr(equivalent)) + self.layout
        return equivalent_of_leaves

    def rebuild(self, out: Any) -> Any:
        """The result in `function`'s own structure, from what the recorded op returned."""
        structure = self._result.structure
        return out if structure is LEAF else structure.unflatten(out)

    @property
    def paths(self) -> list[str]:
        """Each leaf argument as the call spells it: `args[0]['W']`, `params['b'][1]`."""
        args, kwargs = self.structure.children
        return args.paths("args") + [p for k, child in zip(kwargs.aux, kwargs.children)
                                     for p in child.paths(str(k))]

    def output_paths(self) -> list[str]:
        """Each output leaf's path (`output['mean']`), as the last call's result was laid out."""
        structure = getattr(self._result, "structure", LEAF)
        return ["the output"] if structure is LEAF else structure.paths("output")

    def legend(self) -> str:
        """Which leaf each argument of this call is, for an error message."""
        listed = ", ".join(f"argument {k} is {p}" for k, p in enumerate(self.paths))
        return (f"{self.__rulebridge_name__} is {function_name(self.function)} with its "
                f"containers taken apart: {listed}")

    def sync(self, registry: Registry) -> None:
        """Import this call's rules from every source its function's rules are imported from
        now (an import added or replaced since, a source removed)."""
        parents = registry._imports.get(self.function, {})
        mine = registry._imports.get(self, {})
        for source, parent in list(parents.items()):
            derive = getattr(parent, "derive", None)
            if derive is not None and (self.parents.get(source) is not parent
                                       or source not in mine):
                builder, trusted = derive(self)
                registry.add_import(self, source, builder, trusted=trusted)
                self.parents[source] = parent
        for source in [s for s in self.parents if s not in parents]:
            registry.remove_import(self, source)
            del self.parents[source]


_CALLS: dict[tuple[Callable, Structure], LeafCall] = {}
_NAMES: dict[Callable, dict[str, Structure]] = {}
_LOCK = threading.Lock()


def leaf_call(function: Callable, structure: Structure, registry: Registry = REGISTRY) -> LeafCall:
    """The LeafCall of `function` at `structure` (the layout of `(args, kwargs)`), made once."""
    key = (function, structure)
    with _LOCK:
        call = _CALLS.get(key)
        if call is None:
            args, kwargs = structure.children
            spelled = ", ".join([layout(a) for a in args.children] +
                                [f"{k}={layout(c)}" for k, c in zip(kwargs.aux, kwargs.children)])
            spelled = base = f"[{spelled}]"
            n = 1
            while spelled in _NAMES.get(function, {}) and _NAMES[function][spelled] != structure:
                n += 1  # two layouts spelled alike (namedtuples of one name from two modules)
                spelled = f"{base}#{n}"
            _NAMES.setdefault(function, {})[spelled] = structure
            call = _CALLS[key] = LeafCall(function, structure, spelled)
    call.sync(registry)
    return call


def needs_leaves(value: Any) -> bool:
    """A positional argument the tape cannot take as it is: a container other than None and a
    flat list or tuple (which the tape records item by item)."""
    if type(value) is _ndarray or type(value) is Traced or value is None:
        return False
    if not is_container(value):
        return False
    if type(value) is list or type(value) is tuple:
        return any(item is not None and is_container(item) for item in value)
    return True


def traced_call(args: tuple, kwargs: dict) -> tuple[Any, bool]:
    """`(tape, apart)`: the tape of the first traced value among the arguments (None when there
    is none), and whether the call must be taken apart into leaves."""
    tape, apart = None, False
    for value in (*args, *kwargs.values()):
        if type(value) is Traced:
            tape = tape or value._tape
        elif type(value) is _ndarray or value is None or not is_container(value):
            continue
        elif not needs_leaves(value):
            for item in value:
                if type(item) is Traced:
                    tape = tape or item._tape
        else:
            # A container of plain values too: the tape (and a source) takes no dict as an
            # argument, positional or keyword (a keyword one is moved to its position).
            apart = True
            box = next((leaf for leaf in tree_flatten(value)[0] if type(leaf) is Traced), None)
            if box is not None:
                tape = tape or box._tape
    return tape, apart


def container_result(out: Any) -> bool:
    """A result the tape cannot take as it is: a container other than one flat tuple or list
    of arrays and scalars (a namedtuple of them included)."""
    if out is None or not is_container(out):
        return False
    if isinstance(out, (tuple, list)):
        return any(item is not None and is_container(item) for item in out)
    return True


def _leaves_of(value: Any) -> bool:
    """A keyword argument whose leaves are arguments of the LeafCall: a traced value, or a
    container (a flat list of arrays as well: the tape records it item by item)."""
    return type(value) is Traced or (value is not None and is_container(value))


def record_leaf_call(tape: Any, function: Callable, args: tuple, kwargs: dict) -> Any:
    """Record `function(*args, **kwargs)` on `tape` as one op of its LeafCall; keyword
    arguments that are traced or containers are leaves, the others static."""
    traced = {k: v for k, v in kwargs.items() if _leaves_of(v)}
    static = {k: v for k, v in kwargs.items() if k not in traced}
    leaves, structure = tree_flatten((tuple(args), traced))
    call = leaf_call(function, structure)
    try:
        out = tape.record(call, tuple(leaves), static)
    except RulebridgeError as exc:
        if call.legend() not in str(exc):
            exc.add_note(call.legend())
        raise
    return call.rebuild(out)


def _inexact(leaf: Any) -> bool:
    return isinstance(leaf, (_ndarray, np.generic, float, complex)) and is_differentiable(leaf)


def inexact_positions(leaves: tuple) -> tuple[int, ...]:
    """The leaves a check differentiates: float and complex arrays and scalars."""
    return tuple(k for k, leaf in enumerate(leaves) if _inexact(leaf))


def checked_call(function: Callable, args: tuple, kwargs: dict, argnums) -> tuple:
    """`check_rule`'s view of a call of an imported function: `(function, args, kwargs,
    argnums, names)` as they are, or as its LeafCall's when its arguments or result are
    containers (`names`: each leaf argument's path, else None)."""
    if not any(map(needs_leaves, (*args, *kwargs.values()))):
        with np.errstate(all="ignore"):
            try:
                out = function(*args, **kwargs)
            except Exception:
                out = None  # the check itself reports NumPy's own error
        if not container_result(out):
            return function, args, kwargs, argnums, None
    tree_kwargs = {k: v for k, v in kwargs.items() if _leaves_of(v)}
    static = {k: v for k, v in kwargs.items() if k not in tree_kwargs}
    leaves, structure = tree_flatten((tuple(args), tree_kwargs))
    call = leaf_call(function, structure)
    owners = [i for i, a in enumerate(args) for _ in tree_flatten(a)[0]]
    owners += [None] * (len(leaves) - len(owners))  # keyword leaves: differentiated by default
    positions = tuple(k for k in inexact_positions(tuple(leaves))
                      if argnums is None or owners[k] in argnums)
    return call, tuple(leaves), static, positions, call.paths

"""What a recorded program read without being told: the state a function can reach beyond its
arguments, and whether it is as it was.

A trace records the ops on traced values; everything else the function computed with (a closure
variable, a global, an array in a dict in a closure, an attribute of an object it holds) is
baked into the recorded ops as a constant. A replay is only the eager call if that state is
unchanged. `Environment(fun)` walks it once, at the trace:

- a Python function's closure cells, the globals its code names (also in nested code objects),
  its defaults, `__wrapped__`, `functools.partial`'s parts, a bound method's function and
  object; the functions found there in turn, when their code is the user's (rulebridge's own
  wrappers count as the user's: they hold the user's function). A library's function
  (NumPy's, SciPy's) is compared by identity;
- lists, tuples, dicts (their values) and the `__dict__` of plain objects (an instance of a
  user's class), up to `DEPTH` levels and `LEAVES` leaves; beyond, by identity;
- a module by identity, and for a user's module the attributes the code names (`config.SCALE`);
- an ndarray by identity and by its bytes (a read-only copy, compared byte for byte, so an
  in-place change is seen); a number, string or None by type and value; anything else by
  identity.

`changed()` walks again and says what differs (a readable path), or returns None: the check a
jitted call makes before each replay, O(the state's leaves) plus one comparison per byte of the
arrays in it. Random generators found on the way (`numpy.random.Generator`, `RandomState`,
`random.Random`), NumPy's and Python's global ones included, are kept apart: `drew()` says
whether the trace advanced one, which makes the recorded program a single draw.
"""

from __future__ import annotations

import functools
import os
import random
import sys
import types
from typing import Any

import numpy as np

from ..engine.protect import frozen_copy, same
from ..writes.sites import is_user_file

DEPTH = 8  # containers within containers before the rest is compared by identity
LEAVES = 20_000  # leaves per walk before the rest is compared by identity
_SCALARS = (bool, int, float, complex, str, bytes, type(None), np.generic)
_GENERATORS = (np.random.Generator, np.random.RandomState, random.Random)
_GLOBAL = ("numpy.random's global generator", "Python's random module")
_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "")


class Environment:
    """The reachable state of `fun` as it was when the walk ran (see the module's docstring)."""

    __slots__ = ("fun", "leaves", "generators", "states", "modules", "probes")

    def __init__(self, fun: Any) -> None:
        self.fun = fun  # a function, or a tuple of them
        self.generators: dict[int, Any] = {}
        walk = _Walk(self.generators, True)
        self.leaves = list(_visit(self.fun, "the function", 0, walk))
        self.probes = walk.probes
        self.states = _states(self.generators)
        self.modules = len(sys.modules)

    def changed(self) -> str | None:
        """The first piece of state that is not as it was (its path and what changed), or None.

        First the probes: each place the walk read from (a cell, a dict's or list's item, an
        attribute) still holds the very object it held, each array its bytes. That is what a
        replay pays (on the suite's one-line programs, 17 us for the walk, about 5 for them);
        only when one fails is the state walked again, to say what changed (an equal number
        rebound to another object is no change: the probes are then taken again)."""
        if _probes_hold(self.probes):
            return None
        what = self._walked_again()
        if what is None:
            walk = _Walk({}, True)
            self.leaves = list(_visit(self.fun, "the function", 0, walk))
            self.probes = walk.probes
        return what

    def _walked_again(self) -> str | None:
        again = _visit(self.fun, "the function", 0, _Walk({}, False))
        for (path, kind, expected), now in zip(self.leaves, again):
            if now[0] != path or now[1] != kind or not _equal(kind, expected, now[2]):
                return f"{path} ({_what(kind)})"
        if next(again, None) is not None:
            return "the state the function reaches (it holds more than it did)"
        return None

    def drew(self) -> list[str]:
        """The generators whose state differs from the walk's: what a trace drew from. The
        global ones only when no module was imported meanwhile (importing JAX draws from
        NumPy's); `undecided()` says when an import made that unknowable."""
        now = _states(self.generators)
        imported = len(sys.modules) != self.modules
        return [name for name, state in now.items() if self.states.get(name) != state
                and not (imported and name in _GLOBAL)]

    def undecided(self) -> bool:
        """Whether a global generator advanced while a module was imported, so that `drew()`
        cannot tell the function's draw from the import's (a second trace can)."""
        if len(sys.modules) == self.modules:
            return False
        now = _states(self.generators)
        return any(self.states.get(name) != now[name] for name in _GLOBAL)


def _what(kind: str) -> str:
    return {"array": "an array changed in place or rebound", "value": "rebound to another value",
            "object": "rebound to another object"}.get(kind, kind)


def _equal(kind: str, expected: Any, now: Any) -> bool:
    if kind == "array":
        (eid, ecopy), (nid, array) = expected, now
        return eid == nid and same(array, ecopy)
    return expected == now


def _states(generators: dict[int, Any]) -> dict[str, Any]:
    """Each generator's state, NumPy's and Python's global ones first."""
    states = dict(zip(_GLOBAL, (_state(np.random.mtrand._rand), random.getstate())))
    for gen in generators.values():
        states[f"the {type(gen).__name__} at {id(gen):#x}"] = _state(gen)
    return states


def _state(gen: Any) -> Any:
    if isinstance(gen, np.random.Generator):
        return repr(gen.bit_generator.state)
    if isinstance(gen, np.random.RandomState):
        kind, keys, pos, has_gauss, cached = gen.get_state()
        return (kind, keys.tobytes(), pos, has_gauss, cached)
    return gen.getstate()


class _Walk:
    """One walk's bookkeeping: what it has visited, how many leaves, the generators found, and
    whether it keeps copies of arrays (the first walk) or hands the arrays themselves (a check)."""

    __slots__ = ("seen", "count", "generators", "snapshot", "probes")

    def __init__(self, generators: dict, snapshot: bool) -> None:
        self.seen: set[int] = set()
        self.count = 0
        self.generators, self.snapshot = generators, snapshot
        self.probes: list[tuple] = []  # (kind, holder, key or None, what it held): _probes_hold


def _probes_hold(probes: list) -> bool:
    """Does every place the walk read from hold what it held (see Environment.changed)?"""
    try:
        for kind, holder, key, held in probes:
            if kind == "item":
                if holder[key] is not held:
                    return False
            elif kind == "cell":
                if holder.cell_contents is not held:
                    return False
            elif kind == "attr":
                if getattr(holder, key, _EMPTY) is not held:
                    return False
            elif kind == "len":
                if len(holder) != held:
                    return False
            elif kind == "keys":
                if tuple(holder) != held:
                    return False
            elif not same(holder, held):  # "array": its bytes
                return False
    except (KeyError, IndexError, ValueError):
        return False
    return True


def _visit(obj: Any, path: str, depth: int, walk: _Walk):
    """Yield (path, kind, fingerprint) for each leaf of the state under `obj`."""
    walk.count += 1
    if type(obj) is np.ndarray:
        copy = frozen_copy(obj) if walk.snapshot else obj
        walk.probes.append(("array", obj, None, copy))
        yield path, "array", (id(obj), copy)
        return
    if isinstance(obj, _SCALARS):
        yield path, "value", (type(obj), _value(obj))
        return
    if isinstance(obj, _GENERATORS):
        walk.generators[id(obj)] = obj
        yield path, "object", id(obj)
        return
    key = id(obj)
    if key in walk.seen or depth > DEPTH or walk.count > LEAVES:
        yield path, "object", key
        return
    walk.seen.add(key)
    yield path, "object", key
    if isinstance(obj, types.FunctionType):
        yield from _function(obj, path, depth, walk)
    elif isinstance(obj, types.MethodType):
        yield from _visit(obj.__func__, f"{path}.__func__", depth + 1, walk)
        yield from _visit(obj.__self__, f"{path}.__self__", depth + 1, walk)
    elif isinstance(obj, functools.partial):
        yield from _visit(obj.func, f"{path}.func", depth + 1, walk)
        yield from _visit(obj.args, f"{path}.args", depth + 1, walk)
        yield from _visit(obj.keywords, f"{path}.keywords", depth + 1, walk)
    elif type(obj) is list or type(obj) is tuple:
        yield path, "value", len(obj)
        mutable = type(obj) is list
        if mutable:
            walk.probes.append(("len", obj, None, len(obj)))
        for i, item in enumerate(obj):
            if mutable:
                walk.probes.append(("item", obj, i, item))
            yield from _visit(item, f"{path}[{i}]", depth + 1, walk)
    elif type(obj) is dict:
        yield path, "value", tuple(obj)  # its keys, in order
        walk.probes.append(("keys", obj, None, tuple(obj)))
        for k, item in obj.items():
            walk.probes.append(("item", obj, k, item))
            yield from _visit(item, f"{path}[{k!r}]", depth + 1, walk)
    elif isinstance(obj, (types.ModuleType, type, types.BuiltinFunctionType, np.ufunc)):
        return  # by identity (a user's module: through the names the code uses, _function)
    else:
        fields = getattr(obj, "__dict__", None)
        if type(fields) is dict and _users(type(obj)):
            walk.probes.append(("attr", obj, "__dict__", fields))
            yield from _visit(fields, f"{path}.__dict__", depth + 1, walk)
            call = getattr(type(obj), "__call__", None)
            if isinstance(call, types.FunctionType):
                yield from _visit(call, f"{path}.__call__", depth + 1, walk)


def _value(x: Any) -> Any:
    if isinstance(x, float) and x != x:
        return "nan"  # NaN is NaN
    if isinstance(x, np.generic):
        return (x.dtype.str, x.tobytes())
    return x


def _users(cls: type) -> bool:
    """Is `cls` defined in the user's code (not a library's class with C state)?"""
    module = getattr(cls, "__module__", "") or ""
    if module in ("builtins", "__main__"):
        return module == "__main__"
    import sys

    file = getattr(sys.modules.get(module), "__file__", None)
    return file is not None and is_user_file(file)


def _function(fn: types.FunctionType, path: str, depth: int, walk: _Walk):
    code = fn.__code__
    own = code.co_filename.startswith(_PACKAGE)
    if not own and not is_user_file(code.co_filename):
        return  # a library's function: by identity
    name = getattr(fn, "__qualname__", "<function>")
    if fn.__closure__:
        for var, cell in zip(code.co_freevars, fn.__closure__):
            try:
                content = cell.cell_contents
            except ValueError:  # an empty cell
                content = _EMPTY
            else:
                walk.probes.append(("cell", cell, None, content))
            yield from _visit(content, f"{name}'s closure variable {var!r}", depth + 1, walk)
    if own:  # rulebridge's wrapper of the user's function: what it closes over is the user's
        return
    names = _names(code)
    space = fn.__globals__
    for g in names:
        if g in space:
            value = space[g]
            walk.probes.append(("item", space, g, value))
            yield from _visit(value, f"the global {g!r} of {name}", depth + 1, walk)
            if isinstance(value, types.ModuleType) and _user_module(value):
                for attr in names:
                    if attr in vars(value):
                        walk.probes.append(("item", vars(value), attr, vars(value)[attr]))
                        yield from _visit(vars(value)[attr], f"{g}.{attr}", depth + 1, walk)
    for attribute in ("__defaults__", "__kwdefaults__"):
        walk.probes.append(("attr", fn, attribute, getattr(fn, attribute)))
    if fn.__defaults__:
        yield from _visit(fn.__defaults__, f"{name}'s defaults", depth + 1, walk)
    if fn.__kwdefaults__:
        yield from _visit(fn.__kwdefaults__, f"{name}'s keyword defaults", depth + 1, walk)
    wrapped = getattr(fn, "__wrapped__", _EMPTY)
    walk.probes.append(("attr", fn, "__wrapped__", wrapped))
    if wrapped is not _EMPTY:
        yield from _visit(wrapped, f"{name}.__wrapped__", depth + 1, walk)


_EMPTY = object()
_NAMES: dict[Any, tuple[str, ...]] = {}


def _names(code: types.CodeType) -> tuple[str, ...]:
    """The global and attribute names `code` and the code nested in it use, once per code."""
    names = _NAMES.get(code)
    if names is None:
        found = dict.fromkeys(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                found.update(dict.fromkeys(_names(const)))
        names = _NAMES[code] = tuple(found)
    return names


def _user_module(module: types.ModuleType) -> bool:
    file = getattr(module, "__file__", None)
    return file is not None and is_user_file(file)

"""`Jitted`: a function that records its program once per key and replays it after.

A call is answered, in order:

1. with `fun` itself when an argument holds a box of an enclosing differentiation (a jitted
   function inside `grad`): the enclosing trace records it as it records any code;
2. by a replay: the key (the arguments' structures, each traced leaf's type, dtype and shape,
   every other leaf by value, the static arguments) selects the variants recorded for it; the
   state the function reaches is checked unchanged (environment.py), then each variant's
   program runs until one's guards hold (program.py). A variant's first replay is compared,
   once, with a fresh trace of the same call: a difference means the function computes with
   something no guard sees (randomness drawn inside, a clock), and it is refused;
3. by a trace, which records a new variant (at most `max_variants` are kept, the least
   recently used dropped first) and returns the eager result.

A replay that raises runs the eager call instead, so an error is the eager call's own (and a
pullback that raises falls back to another source as it does eagerly).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from ..boundary import name_of
from ..engine.box import Traced
from ..errors import JitError, TracingError, UsageError
from ..tree import tree_flatten
from .environment import Environment
from .program import GuardFailed
from .variant import Spec, Variant, trace, traced_leaf
from .variant import differentiated as _differentiated

_ndarray = np.ndarray
#: Other back ends, installed by adapters: name -> stage(jitted function, variant), called once
#: per recorded variant, returning the object that answers its replays (`.replay(args, flat)`,
#: as `Variant.replay`, raising GuardFailed when a guard fails) and, optionally,
#: `.difference(a, b)`: how its first replay is compared with the eager call (default: to the
#: bit). The stage may raise JitError to refuse the program.
BACKENDS: dict[str, Callable] = {}


class Jitted:
    """`rulebridge.jit(fun)`: see the module's docstring and `rulebridge.jit`."""

    def __init__(self, fun: Callable, static_argnums: tuple[int, ...], max_variants: int,
                 backend: str) -> None:
        self.fun = fun
        self.spec = Spec(fun)
        self.static = frozenset(static_argnums)
        self.max_variants = max_variants
        self.backend = backend
        self.variants: OrderedDict[Any, list[Variant]] = OrderedDict()
        self.environment: Environment | None = None
        self.traces = 0
        self.replays = 0
        self.eager_calls = 0  # calls a replay could not answer (it raised): the eager call did
        self.last_fallback: BaseException | None = None
        self.retraced: list[str] = []  # why earlier programs were dropped, latest last
        # Whether the arguments it does not differentiate are traced (new data, same program).
        # A program that turns one into a Python number (`range(int(n))`) cannot be traced so:
        # from its first TracingError on, they are constants keyed by value.
        self.lifted = True
        self._lock = threading.RLock()
        functools.update_wrapper(self, fun)

    def __repr__(self) -> str:
        return f"<rulebridge.jit of {name_of(self.fun)}: {self.n_variants} program(s)>"

    @property
    def n_variants(self) -> int:
        return sum(len(v) for v in self.variants.values())

    @property
    def programs(self) -> list:
        """The recorded programs, oldest key first (`print(p)` shows one's code)."""
        return [variant.program for variants in self.variants.values() for variant in variants]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        keyed = self._key(args, kwargs)
        if keyed is None:  # inside an enclosing differentiation: it records fun's ops
            return self.fun(*args, **kwargs)
        key, flat = keyed
        with self._lock:
            environment = self.environment
            if environment is not None:
                changed = environment.changed()
                if changed is not None:
                    self._forget(f"{changed} since the program was recorded")
            variants = self.variants.get(key)
            if variants:
                self.variants.move_to_end(key)
                for variant in variants:
                    try:
                        result = (variant.staged or variant).replay(args, flat)
                    except GuardFailed:
                        continue
                    except Exception as exc:  # Mismatch too: the eager call says why
                        self.eager_calls += 1
                        self.last_fallback = exc  # what made it run eagerly, for the user
                        return self.fun(*args, **kwargs)  # its error, or its fallback
                    self.replays += 1
                    if not variant.verified:
                        self._verify(variant, args, kwargs, result)
                    return result
            return self._trace(key, args, kwargs)

    # -- keys ------------------------------------------------------------------------------------

    def _key(self, args: tuple, kwargs: dict) -> tuple | None:
        """(key, each argument's leaves), or None when a leaf is a box."""
        parts: list = [len(args)]
        flat: list = []
        differentiated = None if self.lifted else _differentiated(self.spec, len(args))
        for i, a in enumerate(args):
            if i in self.static:
                parts.append(("static", _hashable(self.fun, i, a)))
                flat.append(None)
                continue
            if type(a) is _ndarray:
                leaves, structure = [a], None
            else:
                leaves, structure = tree_flatten(a)
            flat.append(leaves)
            parts.append(structure)
            traced = differentiated is None or i in differentiated
            for leaf in leaves:
                if type(leaf) is Traced:
                    return None
                parts.append(_leaf_key(leaf) if traced else _constant_key(leaf))
        for name in sorted(kwargs):
            leaves, structure = tree_flatten(kwargs[name])
            if any(type(leaf) is Traced for leaf in leaves):
                return None
            parts.append((name, structure, tuple(_constant_key(leaf) for leaf in leaves)))
        return tuple(parts), flat

    # -- recording -------------------------------------------------------------------------------

    def _trace(self, key, args: tuple, kwargs: dict) -> Any:
        environment = Environment((self.fun, self.spec.f))
        try:
            value, variant = trace(self.spec, args, kwargs, self.static, self.lifted)
        except TracingError:
            if not self.lifted or self.spec.kind != "plain" and len(
                    _differentiated(self.spec, len(args))) == len(args) - len(self.static):
                raise  # the differentiated arguments' own: the eager call's error
            self.lifted = False  # a Python number made of an argument it does not differentiate
            self._forget("an argument it does not differentiate became a Python number")
            return self(*args, **kwargs)
        self.traces += 1
        if environment.undecided():  # the trace imported a module: once more, without one
            environment = Environment((self.fun, self.spec.f))
            value, variant = trace(self.spec, args, kwargs, self.static, self.lifted)
            self.traces += 1
        self._refuse_draws(environment)
        changed = environment.changed()
        if changed is not None:
            raise JitError(
                f"rulebridge.jit cannot replay {name_of(self.spec.f)}: it changes state outside "
                f"itself ({changed} while it ran), which a replay would not do.",
                fix="return the new state instead of storing it; or call it unjitted")
        _refuse_writes_into_arguments(self.spec.f, variant, args)
        self.environment = environment
        variants = self.variants.setdefault(key, [])
        variants.append(variant)
        self.variants.move_to_end(key)
        while self.n_variants > self.max_variants:
            oldest = next(iter(self.variants))
            self.variants[oldest].pop(0)
            if not self.variants[oldest]:
                del self.variants[oldest]
        stage = BACKENDS.get(self.backend)
        if stage is not None:
            variant.staged = stage(self, variant)
        return value

    def _forget(self, why: str) -> None:
        self.variants.clear()
        self.environment = None
        self.retraced.append(why)

    def _refuse_draws(self, environment: Environment) -> None:
        drew = environment.drew()
        if drew:
            raise JitError(
                f"rulebridge.jit cannot replay {name_of(self.spec.f)}: it draws random numbers "
                f"inside ({', '.join(drew)} advanced while it was traced), and a replay would "
                "repeat the same draw on every call.",
                fix="noise = rng.normal(size=shape); step(params, noise)  # draw outside, pass "
                    "the draw in as an argument (a new one each call); or call it unjitted")

    def _verify(self, variant: Variant, args: tuple, kwargs: dict, result: Any) -> None:
        """The variant's first replay against a fresh trace of the same call: equal to the bit,
        or the function is refused (it computes with something no guard sees)."""
        environment = Environment((self.fun, self.spec.f))
        again, _ = trace(self.spec, args, kwargs, self.static, self.lifted)
        self.traces += 1
        self._refuse_draws(environment)  # a global draw the first trace's imports hid
        difference = getattr(variant.staged, "difference", _difference)(result, again)
        if difference is not None:
            raise JitError(
                f"rulebridge.jit cannot replay {name_of(self.spec.f)}: a replay gave another "
                f"result than the function itself on the same arguments ({difference}), so it "
                "computes with something its recorded program cannot see: random numbers drawn "
                "inside (a generator made in the function without a fixed seed), the time, or "
                "state reached through an object rulebridge does not look into.",
                fix="pass what changes between calls in as an argument; or call it unjitted",
                details="A replay is compared once with the function's own result, at its first "
                        "replay; see docs/jit.md.")
        variant.verified = True


def _refuse_writes_into_arguments(f: Callable, variant: Variant, args: tuple) -> None:
    """A write into an argument's memory is the caller's to see; a replay computes writes as new
    arrays, so it would not make it."""
    written, variant.written = variant.written, []
    arrays = [leaf for a in args for leaf in tree_flatten(a)[0] if type(leaf) is _ndarray]
    for target in written:
        for array in arrays:
            if np.may_share_memory(target, array):
                raise JitError(
                    f"rulebridge.jit cannot replay {name_of(f)}: it writes into an argument "
                    f"(an array of shape {array.shape}) in place, which the caller would see "
                    "after every call, and a replay computes that write as a new array.",
                    fix="x = x.copy()  # at the top of the function, then write into the copy; "
                        "or call it unjitted")


def _hashable(fun, i: int, value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise UsageError(
            f"rulebridge.jit of {name_of(fun)}: static argument {i} is a {type(value).__name__}, "
            "which is not hashable; a static argument's value is part of the program's key.",
            fix="pass a tuple instead of a list (or a frozen dataclass), or leave it out of "
                "static_argnums") from None
    return (type(value), value)


def _leaf_key(leaf: Any) -> Any:
    if type(leaf) is _ndarray and traced_leaf(leaf):
        return (leaf.dtype, leaf.shape)
    if traced_leaf(leaf):
        return (type(leaf), getattr(leaf, "dtype", None))
    return _constant_key(leaf)


def _constant_key(leaf: Any) -> Any:
    """A leaf that is not traced: part of the key by value."""
    if isinstance(leaf, _ndarray):
        return ("array", type(leaf), leaf.dtype.str, leaf.shape, leaf.tobytes())
    if isinstance(leaf, np.generic):
        return ("scalar", leaf.dtype.str, leaf.tobytes())
    try:
        hash(leaf)
    except TypeError:
        return ("object", id(leaf))
    return (type(leaf), leaf)


def _difference(a: Any, b: Any) -> str | None:
    """Where two results differ (a readable path), or None when they are equal to the bit."""
    la, sa = tree_flatten(a)
    lb, sb = tree_flatten(b)
    if sa != sb:
        return "their structures"
    paths = sa.paths("result")
    for path, x, y in zip(paths, la, lb):
        if type(x) is not type(y):
            return f"{path}: {type(x).__name__} vs {type(y).__name__}"
        if isinstance(x, (_ndarray, np.generic)):
            if x.shape != y.shape or x.dtype != y.dtype or x.tobytes() != y.tobytes():
                return f"{path}"
        elif x != y and not (x != x and y != y):
            return f"{path}: {x!r} vs {y!r}"
    return None

"""Splitting a call's arguments into what a jitted function takes as inputs and what it bakes in.

Arrays and float/complex scalars become *leaves*: inputs of the jitted pullback, so one compiled
function serves every value (and `jax.jit` itself specialises on shapes and dtypes). Everything
else (ints, bools, axes, shapes, slices, strings, dtypes, None) is *static*: part of the cache key
and of the traced program, as JAX's own functions expect (`axis`, `keepdims`, integer powers).
Python floats stay weakly typed leaves, so `float32_array * 2.5` stays float32 in JAX as in NumPy.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

import rulebridge

_ndarray = np.ndarray
LEAF = "leaf"  # the static description of a leaf; its value is the next item of the leaves
_LEAF_SCALARS = (float, complex, np.floating, np.complexfloating)
_STATIC_SCALARS = (bool, int, str, bytes, type(None), type(Ellipsis), np.integer, np.bool_,
                   np.dtype, type)


class Concrete:
    """A value JAX needs concrete (`delete`'s index array, `repeat`'s counts, `norm`'s `ord`):
    static, hashed by its contents, handed to JAX as the value itself."""

    __slots__ = ("array", "key")

    def __init__(self, value: Any) -> None:
        self.array = value
        if isinstance(value, np.ndarray):
            self.key = (value.dtype.str, value.shape, value.tobytes())
        else:
            self.key = (type(value), value)

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: Any) -> bool:
        return type(other) is Concrete and other.key == self.key


def freeze(value: Any, leaves: list, boxes: bool = False) -> Any:
    """The hashable static description of `value`; its leaves are appended to `leaves`. With
    `boxes`, an enclosing differentiation's box is a leaf too (a pullback offered as a rule)."""
    cls = type(value)
    if cls is _ndarray:
        leaves.append(value)
        return LEAF
    if cls is tuple or cls is list:
        return (cls, tuple(freeze(item, leaves, boxes) for item in value))
    if isinstance(value, _LEAF_SCALARS):
        leaves.append(value)
        return LEAF
    if isinstance(value, _STATIC_SCALARS):
        return value
    if cls is slice:
        return (slice, (value.start, value.stop, value.step))
    if isinstance(value, _ndarray):
        raise TypeError(f"an ndarray subclass ({cls.__name__}) cannot be passed to JAX as NumPy "
                        "means it")
    if boxes and cls is rulebridge.Traced:
        leaves.append(value)
        return LEAF
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"an argument of type {cls.__name__} is neither an array, a scalar nor "
                        "a hashable static value, so it cannot be compiled into a JAX "
                        "pullback") from None
    return value


def thaw(static: Any, leaves: Iterator) -> Any:
    """Inverse of `freeze`: the value rebuilt from its static description and its leaves."""
    if static is LEAF:
        return next(leaves)
    if type(static) is Concrete:
        return static.array
    if type(static) is tuple and len(static) == 2:
        kind = static[0]
        if kind is tuple or kind is list:
            return kind(thaw(item, leaves) for item in static[1])
        if kind is slice:
            return slice(*static[1])
    return static


def freeze_call(args: tuple, kwargs: dict, operands: bool = False,
                boxes: bool = False) -> tuple[tuple, tuple, list, list]:
    """(static args, static kwargs, leaves, leaf count per positional argument). With `operands`
    (a ufunc's positional arguments are all values, never axes), Python and NumPy integers are
    leaves too, so `x * i` in a loop over `i` compiles once."""
    leaves: list = []
    counts = []
    static_args = []
    for a in args:
        before = len(leaves)
        if operands and isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)):
            leaves.append(a)
            static_args.append(LEAF)
        else:
            static_args.append(freeze(a, leaves, boxes))
        counts.append(len(leaves) - before)
    static_kwargs = tuple((k, freeze(v, leaves, boxes)) for k, v in sorted(kwargs.items()))
    return tuple(static_args), static_kwargs, leaves, counts


def thaw_call(static_args: tuple, static_kwargs: tuple, leaves) -> tuple[tuple, dict]:
    it = iter(leaves)
    args = tuple(thaw(s, it) for s in static_args)
    kwargs = {k: thaw(s, it) for k, s in static_kwargs}
    return args, kwargs


is_inexact = rulebridge.is_differentiable

"""Trace levels, as every layer reads them: a box's value may be a box of a lower level.

Nested differentiation (`grad(grad(f))`, a gradient step inside a loss) runs one trace inside
another. Each trace (a `Tape`) has a `level`, an int drawn from one process-wide counter when it
is made, so a trace started inside another always has the higher level. The engine's box
(`rulebridge.Traced`) subclasses `Box`: `box._value` is the value at the level below, which is
a plain array, a NumPy or Python scalar, or a box of a lower level (autograd's tracer.py, JAX's
tracers). An op goes to the highest-level tape among its arguments; a box of a lower level is a
constant there, and the op's forward, called on it, is recorded by the lower tape.

Keys, signatures and checks read a call through to its innermost primal (`primal`): the rule a
level uses is the one verified for the plain values underneath. This module is below the engine
and the checks, so both read levels the same way without importing each other.
"""

from __future__ import annotations

import itertools
from typing import Any

_levels = itertools.count(1)


def new_level() -> int:
    """The level of a new trace: higher than that of every trace made before it."""
    return next(_levels)


class Box:
    """The base of the engine's box. `_value` is the value one level down (see the module)."""

    __slots__ = ()


def primal(x: Any) -> Any:
    """The innermost plain value under `x`: what a box of a nested differentiation stands for.

    Parameters
    ----------
    x : object
        A traced value (`rulebridge.Traced`), whose value may be a box of an enclosing
        differentiation in turn, or any other value.

    Returns
    -------
    object
        The plain array or scalar under every level of boxes (`x` itself when it is not a
        box): what keys, signatures and checks read (an adapter's `pullback_rule` spells its
        rule's signature from it).
    """
    while isinstance(x, Box):
        x = x._value
    return x


def holds_box(args: Any) -> bool:
    """Does `args` (a value, or a list or tuple of them, nested) hold a box?"""
    if isinstance(args, Box):
        return True
    if type(args) is list or type(args) is tuple:
        return any(holds_box(a) for a in args)
    return False


def primals(args: tuple) -> tuple:
    """`args` with every box (also inside lists and tuples) replaced by its innermost primal."""
    return tuple(_primals(a) for a in args)


def _primals(a: Any) -> Any:
    if isinstance(a, Box):
        return primal(a)
    if (type(a) is list or type(a) is tuple) and holds_box(a):
        return type(a)(_primals(item) for item in a)
    return a

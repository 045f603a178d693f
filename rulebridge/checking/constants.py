"""The values a verdict on an imported rule holds for.

An imported rule is the pullback of an equivalent the user (or a drop-in) names; whether it
means the same as the function can depend on the value of an argument the call does not trace:
`import_rule(lambda v, a: np.sin(v) * a, "jax", equivalent=lambda v, a: jnp.sin(v) * a**2)`
agrees at `a=1.0` and is three times off at `a=3.0`; SciPy's `geom.pmf` at `k=1.5` is 0, JAX's
is not. So the verification of an import (rulebridge/import_rule.py) is kept per value of every
untraced float or complex argument (a Python or NumPy scalar, an array: by a digest of its
bytes), beside the signature and the static ints and strings (`rules/keys.static_values`).
Arguments the user declares continuous (`import_rule(..., continuous=("a",))`: the equivalent
computes with their value, so a verdict at one holds at every other) are left out, and a rule
verified at one of their values is never checked again for another.

`Verdicts` keeps at most `KEPT` of them, the least recently used forgotten first (and checked
again if they come back), so a loop over a million values holds a bounded cache.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any, Callable, Iterable

import numpy as np

from ..rules.keys import plan_for
from ..rules.signature import is_differentiable
from ..rules.arguments import differentiable_argnums

KEPT = 256  # verdicts an import keeps, by value


def constant_values(args: tuple, kwargs, traced, continuous: tuple) -> tuple:
    """The values of the call's untraced float and complex arguments that a verdict depends on:
    `(position or name, value)` for each; `traced`: the traced positions (None: the float and
    complex arrays, which a check perturbs by default: a scalar is held at its value there);
    `continuous`: `(positions, names)` declared continuous."""
    if traced is None:
        traced = differentiable_argnums(args)
    positions, names = continuous
    found = tuple((i, _value(a)) for i, a in enumerate(args)
                  if i not in traced and i not in positions and _inexact(a))
    if kwargs:
        found += tuple((k, _value(v)) for k, v in kwargs.items()
                       if k not in names and _inexact(v) and not isinstance(v, (float, complex)))
    return found  # float keywords: `static_values` holds them by value already


def declared(function: Callable, continuous: Iterable[int | str] | int | str | None) -> tuple:
    """`(positions, names)` of the arguments declared continuous, each named both ways where
    the function's signature says which position a name has."""
    if continuous is None:
        return frozenset(), frozenset()
    if isinstance(continuous, (int, str)):
        continuous = (continuous,)
    spelled = plan_for(function).names
    positions, names = set(), set()
    for item in continuous:
        if isinstance(item, str):
            names.add(item)
            if item in spelled:
                positions.add(spelled.index(item))
        elif isinstance(item, int) and not isinstance(item, bool):
            positions.add(item)
            if item < len(spelled):
                names.add(spelled[item])
        else:
            raise TypeError(f"continuous= takes argument positions and names, got {item!r}")
    return frozenset(positions), frozenset(names)


def _inexact(value: Any) -> bool:
    if isinstance(value, (float, complex, np.inexact)):
        return True
    if type(value) in (list, tuple):
        return any(_inexact(v) for v in value)
    return isinstance(value, np.ndarray) and is_differentiable(value)


def _value(value: Any) -> Any:
    if type(value) in (list, tuple):
        return tuple(_value(v) for v in value)
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value).tobytes()
        return value.dtype.str, value.shape, hashlib.blake2b(data, digest_size=16).digest()
    if isinstance(value, (np.generic, float, complex)):
        return type(value).__name__, complex(value)
    return repr(value)


class Verdicts:
    """A bounded set of the keys an import was verified at (least recently used forgotten)."""

    def __init__(self, kept: int = KEPT) -> None:
        self._keys: OrderedDict = OrderedDict()
        self.kept = kept

    def __contains__(self, key: Any) -> bool:
        if key in self._keys:
            self._keys.move_to_end(key)
            return True
        return False

    def add(self, key: Any) -> None:
        self._keys[key] = None
        self._keys.move_to_end(key)
        while len(self._keys) > self.kept:
            self._keys.popitem(last=False)

    def __len__(self) -> int:
        return len(self._keys)

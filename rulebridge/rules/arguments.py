"""Which arguments a check of a call differentiates: by default every float or complex array
(and list of them); at first use, the ones the call traces, the others being constants at their
values, and the text of the key such a verdict is kept under."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .signature import is_differentiable


def traced_argnums(args: tuple, traced: Sequence[int] | None) -> tuple[int, ...] | None:
    """The arguments a check of a call differentiates, as `check_call`'s `argnums`.

    Parameters
    ----------
    args : tuple
        The call's positional arguments (plain values).
    traced : sequence of int or None
        The positions of the arguments traced in the call (None: every one).

    Returns
    -------
    tuple of int or None
        None when the traced arguments are the default's (every float or complex array, whose
        verdict holds for every subset of them); else the traced positions, the others being
        constants (a traced scalar is always named: the default leaves scalars out).
    """
    if traced is None:
        return None
    # None only when the traced arguments are exactly the default's: a traced scalar (a Python
    # float, a NumPy scalar) is no array the default differentiates, and a check without it
    # would have nothing to differentiate and pass
    if set(differentiable_argnums(args)) == set(traced):
        return None
    return tuple(traced)


def with_traced(key: str, argnums: Sequence[int] | None) -> str:
    """The text of a key for a verdict at these traced arguments (`traced_argnums`)."""
    if argnums is None:
        return key
    return f"{key} traced in argument{'s' if len(argnums) > 1 else ''} " + \
        ", ".join(map(str, argnums))


def differentiable_argnums(args: tuple) -> tuple[int, ...]:
    """The positions a check differentiates by default: float and complex arrays, and lists or
    tuples of them."""
    def differentiable(a):
        if type(a) in (list, tuple):
            return bool(a) and all(differentiable(item) for item in a)
        return type(a) is np.ndarray and is_differentiable(a)

    return tuple(i for i, a in enumerate(args) if differentiable(a))

"""The seeds of a sweep: the cotangents a transformation starts from at the traced function's
outputs (grad's 1, a vjp's cotangent, a Jacobian's rows), checked against the outputs they seed,
NaN on an output whose value is NaN (it has no derivative)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .boundary import name_of
from .engine.box import Traced
from .errors import ArgumentError, UsageError
from .rules.levels import primal
from .rules.signature import is_differentiable
from .tree import LEAF

_ndarray = np.ndarray


def scalar_output(f, structure, values):
    result = values[0] if structure is LEAF else structure.unflatten(values)
    value = primal(result)  # an enclosing differentiation's box: its plain value underneath
    # Attribute reads, not np.shape / np.iscomplexobj: NumPy's dispatch on a NumPy scalar costs
    # more than a small program's whole sweep.
    if isinstance(value, (_ndarray, np.generic)):
        size, is_complex = value.size, value.dtype.kind == "c"
    elif isinstance(value, (float, int, complex)):
        size, is_complex = 1, type(value) is complex
    else:
        size, is_complex = None, False
    if size != 1:
        kind = (f"an array of shape {value.shape}" if size is not None
                else f"a {type(value).__name__}")
        raise UsageError(f"grad requires {name_of(f)} to return a scalar (or an array of size "
                         f"1), but it returned {kind}.",
                         fix="rulebridge.grad(lambda *a: np.sum(f(*a)))  # reduce it; or "
                             "rulebridge.vjp / rulebridge.jacobian for non-scalar outputs",
                         details="has_aux=True returns more beside the scalar.")
    if is_complex:
        raise UsageError(f"grad requires {name_of(f)} to return a real scalar, but it returned a "
                         f"complex {np.result_type(value)}.",
                         fix="rulebridge.grad(lambda *a: np.real(f(*a)))  # or abs, abs**2; or "
                             "rulebridge.vjp")
    return result


def one_like(value):
    """The seed 1 for a scalar output's sweep (NaN where its value is NaN: `undefined_where_nan`)."""
    output, value = value, primal(value)
    if isinstance(value, _ndarray):
        return undefined_where_nan(np.ones_like(value), output)
    # (np.generic, or a Python float or int: a complex result was refused above)
    one = value.dtype.type(1) if isinstance(value, np.generic) else np.float64(1.0)
    return one if value == value or type(output) is Traced else one * np.nan


def undefined_where_nan(seed, output):
    """`seed` with NaN where the value of `output` is NaN and the seed is not 0.

    An output whose value is NaN has no derivative, but the rules' conventions at NaN inputs
    give finite numbers (`clip`'s VJP at NaN is 1 in autograd's rule, 0 in JAX's). A NaN seed
    says so through the sweep: it reaches every input that output reads, and no other, as the
    VJPs multiply it (docs/architecture.md, "Where NumPy's function has no derivative"). Forward
    mode applies it to the tangents it returns (rulebridge/forward/api.py).

    An output that is an enclosing differentiation's box keeps its seed: a NaN constant there
    would leave the enclosing level's first-use checks nothing finite to decide at (a hessian
    at a NaN input was refused), and the enclosing level's own seeds carry the policy."""
    if type(output) is Traced:
        return seed
    value = np.asarray(output)
    if is_differentiable(value):
        nan = np.isnan(value)
        if nan.any():
            return np.where(nan & (seed != 0), np.nan, seed).astype(seed.dtype, copy=False)
    return seed


# The dtype kinds a cotangent may have, by the kind of its output: casting it to the output's
# dtype loses nothing a derivative means (a complex cotangent for a real output would lose its
# imaginary part, which JAX's vjp refuses too; booleans, strings and objects are not cotangents).
_COTANGENT_KINDS = {"f": "fiu", "c": "cfiu"}


def _cotangent_kind_error(f, path: str, given: np.dtype, dtype: np.dtype) -> str:
    if given.kind == "c":
        fix, lost = (f"pass {path}.real if the imaginary part is meant to be dropped, or make "
                     "that output complex (y + 0j)", "drop its imaginary part")
    else:
        fix, lost = f"pass an array of {dtype}", "make a number of what is not one"
    return (f"the cotangent {path} given to the pullback of {name_of(f)} is {given}, but that "
            f"output is {dtype}: {fix}. Casting it would {lost} silently.")


def seeds_of(f, structure, values, variables, ybars: list) -> dict[int, Any]:
    """The sweep's seeds from the cotangents of the output's leaves (None: no cotangent)."""
    paths = None
    seeds: dict[int, Any] = {}
    for k, (var, value, g) in enumerate(zip(variables, values, ybars)):
        if var is None or g is None:
            continue
        if np.shape(primal(g)) != np.shape(primal(value)):
            paths = paths or (["ybar"] if structure is LEAF else structure.paths("ybar"))
            raise ArgumentError(f"the cotangent {paths[k]} given to the pullback of "
                                f"{name_of(f)} has shape {np.shape(g)}, but that output has "
                                f"shape {np.shape(value)}.",
                                fix=f"pullback(np.ones({np.shape(primal(value))!r}))  # one "
                                    "cotangent per output, of that output's shape")
        output, value = value, primal(value)  # (under nesting: the plain value underneath)
        dtype = np.result_type(value)
        if type(g) is Traced:  # a cotangent of an enclosing differentiation: recorded there
            if g.dtype.kind not in _COTANGENT_KINDS.get(dtype.kind, "fiu"):
                paths = paths or (["ybar"] if structure is LEAF else structure.paths("ybar"))
                raise TypeError(_cotangent_kind_error(f, paths[k], g.dtype, dtype))
            if g.dtype != dtype:
                g = np.astype(g, dtype)
        else:
            given = np.asarray(g)
            if given.dtype.kind not in _COTANGENT_KINDS.get(dtype.kind, "fiu"):
                paths = paths or (["ybar"] if structure is LEAF else structure.paths("ybar"))
                raise TypeError(_cotangent_kind_error(f, paths[k], given.dtype, dtype))
            g = undefined_where_nan(np.asarray(given, dtype=dtype), output)
            if isinstance(value, (np.generic, float, complex)):
                g = g[()]
        # One box returned twice (`return y, y`) is one variable: its cotangents add up.
        seeds[var] = g if var not in seeds else seeds[var] + g
    return seeds

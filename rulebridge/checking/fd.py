"""Directional derivatives of NumPy's own function by central differences with Richardson
extrapolation, always in float64/complex128.

`directional(f, x, xdot)` returns two estimates of `J xdot` from two step sizes (h and h/2, each
Richardson-extrapolated from a pair of central differences), so the caller can tell an accurate
reference from one that depends on the step (a kink, a tie, a branch cut): that is "inconclusive",
never "pass" or "fail".
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..rules.phases import PHASES, align_outputs, phase_invariant

# Step relative to the size of the inputs. Richardson makes the truncation error O(h^4); with
# h ~ 1e-3 that is ~1e-12 in float64, and the rounding error ~eps/h ~ 1e-13.
RELATIVE_STEP = 1e-3


def widen(x: Any) -> Any:
    """`x` in float64/complex128 (float32 and complex64 arrays and scalars are widened; lists of
    arrays item by item; anything else is returned as is)."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f" and x.dtype != np.float64:
            return x.astype(np.float64)
        if x.dtype.kind == "c" and x.dtype != np.complex128:
            return x.astype(np.complex128)
        return x
    if isinstance(x, np.floating):
        return np.float64(x)
    if isinstance(x, np.complexfloating):
        return np.complex128(x)
    if type(x) in (list, tuple):
        return type(x)(widen(item) for item in x)
    return x


def flat_outputs(out: Any) -> list:
    """The outputs of one call as a list (one item for a single array or scalar)."""
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


# The directions of the dot-product test and its pairing (check.py, gradcheck.py).
def _random_like(x, rng: np.random.Generator):
    if type(x) in (list, tuple):
        return [_random_like(item, rng) for item in x]
    dtype = np.result_type(x)
    values = rng.standard_normal(np.shape(x))
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(np.shape(x))
    values = np.asarray(values).astype(dtype)
    return values if isinstance(x, np.ndarray) else values[()]


def _pair(a, b) -> float:
    if type(a) in (list, tuple):
        return sum(_pair(x, y) for x, y in zip(a, b))
    return float(np.real(np.sum(widen(np.asarray(a)) * widen(np.asarray(b)))))


def _moved(args: tuple, argnums: Sequence[int], xdot: Sequence[Any], t: float) -> tuple:
    moved = list(args)
    for i, d in zip(argnums, xdot):
        if isinstance(args[i], (list, tuple)):
            moved[i] = type(args[i])(a + t * di for a, di in zip(args[i], d))
        else:
            moved[i] = args[i] + t * d
    return tuple(moved)


def step_for(args: tuple, argnums: Sequence[int], xdot: Sequence[Any],
             room: float = np.inf) -> float:
    """The check's first step along `xdot`: 1e-3 of the largest input, in the largest entry of
    `xdot`, and no more than `room` (a domain's tangent space: rules/tangents.py)."""
    size = max([_max_abs(args[i]) for i in argnums] + [1.0])
    direction = max([_max_abs(d) for d in xdot] + [1e-300])
    return min(RELATIVE_STEP * size / direction, room)


def _max_abs(x: Any) -> float:
    if isinstance(x, (list, tuple)):
        return max([_max_abs(item) for item in x] + [0.0])
    return float(np.max(np.abs(x))) if np.size(x) else 0.0


def directional(function: Callable, args: tuple, kwargs: dict, argnums: Sequence[int],
                xdot: Sequence[Any], selected: Sequence[int],
                room: float = np.inf) -> tuple[list, list]:
    """Two Richardson estimates of the directional derivative of the outputs at positions
    `selected` of `function(*args, **kwargs)` along `xdot` (one tangent per argnum), with steps
    within `room`. `args` must already be widened; each estimate is a list of complex128/float64
    arrays."""
    h = step_for(args, argnums, xdot, room)

    def central(step: float) -> list:
        plus = flat_outputs(function(*_moved(args, argnums, xdot, step), **kwargs))
        minus = flat_outputs(function(*_moved(args, argnums, xdot, -step), **kwargs))
        return [(np.asarray(plus[k]) - np.asarray(minus[k])) / (2 * step) for k in selected]

    d1, d2, d4 = central(h), central(h / 2), central(h / 4)
    coarse = [(4 * b - a) / 3 for a, b in zip(d1, d2)]
    fine = [(4 * b - a) / 3 for a, b in zip(d2, d4)]
    return coarse, fine


def at_a_kink(function: Callable, args: tuple, kwargs: dict, argnums: Sequence[int],
              xdot: Sequence[Any], selected: Sequence[int], ybar: Sequence[Any],
              tolerance: float, room: float = np.inf) -> bool:
    """Do the forward and backward differences along `xdot` (paired with the cotangents `ybar`
    of the outputs `selected`) stay apart by more than `tolerance` as the step shrinks from h to
    h/8? Where the function is smooth their gap is about h times its curvature, so it shrinks
    eightfold; at a kink (`abs` at 0, a norm at 0) it stays, at a jump it grows. Central
    differences are symmetric and look smooth there, so a disagreement with them decides
    nothing: the check asks this before it fails a rule. `args` must already be widened."""
    try:
        coarse, fine = _kink_gaps(function, args, kwargs, argnums, xdot, selected, ybar, room)
    except Exception:
        return False  # the central differences ran at these steps: the verdict is theirs
    return fine > tolerance and fine > 0.5 * coarse


def _kink_gaps(function, args, kwargs, argnums, xdot, selected, ybar, room) -> tuple:
    h = step_for(args, argnums, xdot, room)
    base = flat_outputs(function(*args, **kwargs))

    def gap(step: float) -> float:
        plus = flat_outputs(function(*_moved(args, argnums, xdot, step), **kwargs))
        minus = flat_outputs(function(*_moved(args, argnums, xdot, -step), **kwargs))
        return abs(sum(_pair(y, (np.asarray(plus[k]) - 2 * np.asarray(base[k])
                                 + np.asarray(minus[k])) / step)
                       for y, k in zip(ybar, selected)))

    return gap(h), gap(h / 8)


def phase_fixed(function: Callable, at: Any) -> Callable:
    """`function`, with the vectors it declares fixed up to phases (`rules/phases.py`) aligned
    to `at`'s (its outputs at the point differentiated): finite differences of it follow the
    vectors at the point. A function declaring none is returned as it is."""
    phases = getattr(function, PHASES, None)
    if phases is None:
        return function
    return lambda *args, **kwargs: align_outputs(function(*args, **kwargs), at, phases)


def phase_free(function: Callable, cotangent: Any, out: Any) -> Any:
    """A random output `cotangent` with the part that moves the phases of the complex vectors
    `function` declares removed (`rules/phases.py`): a program of such vectors has a derivative
    only if it does not depend on their phases, and the check tests those programs."""
    phases = getattr(function, PHASES, None)
    aligned = phases.aligned(out) if phases is not None else {}
    if not aligned or not isinstance(cotangent, tuple):
        return cotangent
    return tuple(phase_invariant(g, out[k], aligned[k]) if k in aligned and g is not None
                 else g for k, g in enumerate(cotangent))

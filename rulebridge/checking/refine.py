"""Finite differences again, where the check's two step sizes disagree (rulebridge/checking/
check.py): a direction scaled to each input element's magnitude, a ladder of steps, and
Richardson extrapolation across it with its own error estimate (Ridders' method).

The check's first estimate (fd.py `directional`) steps every element by the same amount, 1e-3
times the largest input: an element much smaller than the largest (`g / c` with c from 1.0 to
110, the divide inside tanh's VJP under a Hessian) is then stepped by a tenth of itself, and the
two step sizes disagree although the function is smooth there. Here the direction is
`xdot * |x|` element by element (an element at 0 takes the array's smallest nonzero magnitude,
or 1), so each element moves relative to itself; the step runs down from `FIRST_STEP` by halves,
each central difference is extrapolated in h^2 as far as the ladder allows, and the estimate
kept is the one whose error estimate (its distance from its neighbours in the tableau) is least.

`refined` returns that estimate with its error, so the caller can decide only where the error
leaves no doubt: a pass when `|rule - estimate| + error` is within the tolerance. Never a
failure: at a jump (`np.round`, whose rules rightly give 0) the error estimate of a ladder that
crosses the jump can look small about a wrong estimate, and a failure would stand for the key;
a rule that is off stays undecided here, as before.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..rules.signature import is_differentiable
from .fd import _moved, _pair, flat_outputs
from .result import AT_AN_EDGE, NOT_FINITE_INPUTS

FIRST_STEP = 0.1  # relative to each element, along the scaled direction
STEPS = 10  # halvings: down to about 2e-4 relative
SAFE = 2.0  # stop once the error grows this much past the best (rounding took over)
STEPS_DISAGREE = ("finite differences with steps h and h/2 disagree beyond the tolerance, and "
                  "a ladder of steps scaled to each element cannot bound its error within it: "
                  "the function is not smooth enough at these inputs to decide")


def scaled(args: tuple, argnums: Sequence[int], xdot: Sequence[Any]) -> list:
    """`xdot` with each element multiplied by its input element's magnitude."""
    return [_scaled(args[i], d) for i, d in zip(argnums, xdot)]


def _scaled(x, d):
    if type(x) in (list, tuple):
        return [_scaled(a, b) for a, b in zip(x, d)]
    magnitude = np.abs(np.asarray(x)).astype(np.float64)
    nonzero = magnitude[(magnitude > 0) & np.isfinite(magnitude)]
    floor = float(np.min(nonzero)) if nonzero.size else 1.0
    weights = np.where((magnitude > 0) & np.isfinite(magnitude), magnitude, floor)
    out = np.asarray(d) * weights
    return out if isinstance(x, np.ndarray) else out[()]


def refined(function: Callable, args: tuple, kwargs: dict, argnums: Sequence[int],
            xdot: Sequence[Any], selected: Sequence[int],
            ybar: Sequence[Any], first_step: float = FIRST_STEP) -> tuple[float, float, float]:
    """`(estimate, error, magnitude)`: Re<ybar, J xdot> of the outputs `selected` by Ridders'
    extrapolation, its error estimate, and sum |ybar| |J xdot| at the step kept (what the
    check's tolerance is relative to). `args` widened; `xdot` already scaled (`scaled`); the
    ladder starts at `first_step`."""

    def central(step: float) -> tuple[float, float]:
        plus = flat_outputs(function(*_moved(args, argnums, xdot, step), **kwargs))
        minus = flat_outputs(function(*_moved(args, argnums, xdot, -step), **kwargs))
        columns = [(np.asarray(plus[k]) - np.asarray(minus[k])) / (2 * step) for k in selected]
        return (sum(_pair(y, j) for y, j in zip(ybar, columns)),
                sum(float(np.sum(np.abs(y) * np.abs(j))) for y, j in zip(ybar, columns)))

    step = first_step
    value, magnitude = central(step)
    best, error, size = value, float("inf"), magnitude
    previous = [value]
    for _ in range(STEPS):
        step /= 2
        value, magnitude = central(step)
        row = [value]
        factor = 1.0
        for j, before in enumerate(previous):
            factor *= 4.0
            row.append((factor * row[j] - before) / (factor - 1.0))
            spread = max(abs(row[j + 1] - row[j]), abs(row[j + 1] - before))
            if spread <= error:
                best, error, size = row[j + 1], spread, magnitude
        if not np.isfinite(value) or abs(row[-1] - previous[-1]) >= SAFE * error:
            break  # (a step the function gave no finite value at ends the ladder too)
        previous = row
    return best, error, size


def undecided_why(rhs: float, coarse: float, scale: float, rtol: float,
                  args: tuple) -> tuple[str, str] | None:
    """Why the check's two estimates `rhs` (step h/2) and `coarse` (step h) cannot decide, as
    `(reason, measured)`; None when they can. Estimates that are not finite at finite inputs mean
    an input at the edge of the domain or an infinite derivative (`AT_AN_EDGE`: refused, as at a
    kink); at inputs that are not finite themselves, NaN or inf propagating (`NOT_FINITE_INPUTS`)."""
    if not (np.isfinite(rhs) and np.isfinite(coarse)):
        return (NOT_FINITE_INPUTS if not all_finite(args) else AT_AN_EDGE), ""
    if abs(rhs - coarse) > rtol * scale:
        return STEPS_DISAGREE, f"relative {abs(rhs - coarse) / scale:.1e} > {rtol:.0e}"
    return None


def all_finite(args) -> bool:
    """Is every differentiable value in `args` (one list or tuple deep too) finite?"""
    for a in args:
        if type(a) in (list, tuple):
            if not all_finite(a):
                return False
        elif is_differentiable(a) and not np.all(np.isfinite(a)):
            return False
    return True


def finite_stand_in(args: tuple, argnums: Sequence[int]) -> tuple | None:
    """`args` with each NaN or inf entry of the arguments `argnums` replaced by a finite value:
    the median of that argument's finite entries (so the stand-in stays where the argument's
    values are, inside the function's domain as far as they are), else 0.5. None when nothing
    is replaced. A check there is a check of the key: the same function, signature and
    configuration, at finite values of the traced arguments (constants keep theirs)."""
    out, replaced = list(args), False
    for i in argnums:
        value = _finite(args[i])
        replaced = replaced or value is not args[i]
        out[i] = value
    return tuple(out) if replaced else None


def _finite(x):
    if type(x) in (list, tuple):
        items = [_finite(a) for a in x]
        return type(x)(items) if any(a is not b for a, b in zip(items, x)) else x
    if not is_differentiable(x) or np.all(np.isfinite(x)):
        return x
    a = np.array(x, copy=True)
    parts = (a.real, a.imag) if a.dtype.kind == "c" else (a,)
    for part in parts:
        bad = ~np.isfinite(part)
        good = part[~bad]
        part[bad] = np.median(good) if good.size else 0.5
    return a if isinstance(x, np.ndarray) else a[()] if isinstance(x, np.generic) else type(x)(a)


def decide_again(function: Callable, args: tuple, kwargs: dict, argnums: Sequence[int],
                 xdot: Sequence[Any], selected: Sequence[int], ybar: Sequence[Any],
                 cts: Sequence[Any], rtol: float, atol: float, norm: Callable,
                 space: Any = None) -> tuple | None:
    """After the check's two steps disagreed along `xdot`: `(lhs, rhs, scale, direction)` along
    the scaled direction when the refined estimate passes the rule (its `lhs = Re<cts, xdot>`
    within the tolerance of the estimate beyond the estimate's error); None when it does not
    (undecided, never a failure: see the module's docstring). `norm` is the check's; `space`,
    the call's tangent space (rules/tangents.py), which the directions and steps keep to."""
    # each element stepped relative to itself; then every element by the same absolute amount
    # (a function of differences, like logsumexp, at inputs far from 0: x - 370)
    for direction in (scaled(args, argnums, xdot), list(xdot)):
        first_step = FIRST_STEP
        if space is not None:
            direction = space.project(args, direction)
            first_step = min(first_step, space.room(args, direction))
        found = _decided_along(function, args, kwargs, argnums, direction, selected, ybar, cts,
                               rtol, atol, norm, first_step)
        if found is not None:
            return found
    return None


def _decided_along(function, args, kwargs, argnums, direction, selected, ybar, cts, rtol, atol,
                   norm, first_step) -> tuple | None:
    lhs = sum(_pair(ct, d) for ct, d in zip(cts, direction))
    try:
        estimate, error, size = refined(function, args, kwargs, argnums, direction, selected,
                                        ybar, first_step)
    except Exception:  # a step NumPy rejects (off a domain's edge): undecided, as before
        return None
    scale = (atol / rtol) * norm(ybar) * norm(direction) + size
    bound, gap = rtol * scale, abs(lhs - estimate)
    if not (np.isfinite(estimate) and np.isfinite(error)):
        return None
    if np.isfinite(lhs) and gap + error <= bound:
        return lhs, estimate, scale, direction
    return None

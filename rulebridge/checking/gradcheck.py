"""The numbers behind `rulebridge.check_grads`: a dot-product test of a whole user function's
gradient against float64 central differences of the function itself.

The same test `check_rule` runs on one rule (rulebridge/checking/check.py), here on the leaves of
container arguments and outputs: for random tangents `xdot` over every float or complex leaf of
the differentiated arguments and random cotangents `ybar` over every float or complex output leaf,
`Re<xbar, xdot>` (xbar from the gradient under test) must equal `Re<ybar, J xdot>` from
`fd.directional`, within `atol*|ybar||xdot| + rtol*sum_i |ybar_i||(J xdot)_i|`. On a failure the
leaves are tried one at a time, so the error can say which leaf's gradient is off.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..errors import GradientCheckError
from ..rules.signature import is_differentiable
from ..tree import tree_flatten
from .check import TOLERANCES, _norm
from .fd import _pair, _random_like, directional, widen

_WHOLE_FUNCTION_CHECK: list[Callable[..., float]] = []  # rulebridge.check_grads, once installed


def install(check_grads: Callable[..., float]) -> None:
    """The package hands down its `check_grads` (the API, a layer above this one) for the
    pytest plugin's fixture."""
    _WHOLE_FUNCTION_CHECK[:] = [check_grads]


def installed() -> Callable[..., float]:
    """`rulebridge.check_grads` (the package installs it when it is imported)."""
    return _WHOLE_FUNCTION_CHECK[0]


# (y, pullback) of the function at the given arguments: pullback(ybar) gives one cotangent per
# differentiated argument, each in the argument's structure.
PullbackAt = Callable[[tuple], tuple[Any, Callable[[Any], tuple]]]


def check_gradient(name: str, f: Callable, args: tuple, positions: Sequence[int],
                   pullback_at: PullbackAt, *, directions: int, seed: int,
                   rtol: float | None, atol: float | None) -> float:
    """The worst relative error over `directions` random directions; raises
    GradientCheckError when it exceeds `rtol` or when finite differences cannot decide."""
    # Each differentiated argument's leaves, and which of them are float or complex.
    flat = [tree_flatten(args[i]) for i in positions]
    where = [(p, k) for p, (leaves, _) in enumerate(flat)
             for k, leaf in enumerate(leaves) if is_differentiable(leaf)]
    paths = [flat[p][1].paths(f"argument {positions[p]}")[k] for p, k in where]
    x = [flat[p][0][k] for p, k in where]
    with np.errstate(all="ignore"):
        y, pullback = pullback_at(args)
    y_leaves, y_structure = tree_flatten(y)
    selected = [k for k, leaf in enumerate(y_leaves) if is_differentiable(leaf)]
    precision = "float32" if any(np.result_type(v) in (np.float32, np.complex64)
                                 for v in x + [y_leaves[k] for k in selected]) else "float64"
    default_rtol, default_atol = TOLERANCES[precision]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if not x or not selected:
        missing = "in the arguments checked" if not x else "among its outputs"
        raise GradientCheckError(f"check_grads({name}): nothing to check: no float or complex "
                                 f"value {missing}", None, rtol)
    for k in selected:
        if not np.all(np.isfinite(y_leaves[k])):
            raise GradientCheckError(f"check_grads({name}): {y_structure.paths('output')[k]} "
                                     "is not finite at these inputs, so finite differences "
                                     "cannot decide", None, rtol)

    def at(*leaves: Any) -> list:
        """f on the float64 leaves, its float or complex outputs as a list."""
        moved = [list(leaves_) for leaves_, _ in flat]
        for (p, k), leaf in zip(where, leaves):
            moved[p][k] = leaf
        call = list(args)
        for p, i in enumerate(positions):
            call[i] = flat[p][1].unflatten(moved[p])
        out = tree_flatten(f(*call))[0]
        return [out[k] for k in selected]

    wide_x = [widen(v) for v in x]
    rng = np.random.default_rng(seed)
    worst = 0.0
    for d in range(directions):
        ybar = [_random_like(y_leaves[k], rng) for k in selected]
        full = [None] * len(y_leaves)
        for k, g in zip(selected, ybar):
            full[k] = g
        cts = pullback(y_structure.unflatten(full))
        # flatten_up_to, not tree_flatten: a leaf that is not traced has None as its cotangent.
        ct_leaves = [flat[p][1].flatten_up_to(ct) for p, ct in enumerate(cts)]
        xbar = [ct_leaves[p][k] for p, k in where]
        xdot = [_random_like(v, rng) for v in wide_x]
        error, lhs, rhs = _compare(at, wide_x, xbar, xdot, ybar, rtol, atol, name)
        worst = max(worst, error)
        if error > rtol:
            culprit = _worst_leaf(at, wide_x, xbar, xdot, ybar, rtol, atol, name, paths)
            raise GradientCheckError(
                f"check_grads({name}): the gradient disagrees with central differences of "
                f"{name} in float64: relative error {error:.2e} > rtol {rtol:.0e} in direction "
                f"{d + 1} of {directions} (seed {seed}): Re<xbar, xdot> = {lhs:.9g} from the "
                f"gradient, Re<ybar, J xdot> = {rhs:.9g} from finite differences.{culprit}",
                error, rtol)
    return worst


def _compare(at, x, xbar, xdot, ybar, rtol, atol, name) -> tuple[float, float, float]:
    lhs = sum(_pair(ct, t) for ct, t in zip(xbar, xdot) if ct is not None)
    with np.errstate(all="ignore"):
        coarse, fine = directional(at, tuple(x), {}, range(len(x)), xdot, range(len(ybar)))
    wide_ybar = [widen(np.asarray(g)) for g in ybar]
    rhs = sum(_pair(g, j) for g, j in zip(wide_ybar, fine))
    rhs_coarse = sum(_pair(g, j) for g, j in zip(wide_ybar, coarse))
    scale = (atol / rtol) * _norm(wide_ybar) * _norm(xdot) + sum(
        float(np.sum(np.abs(g) * np.abs(j))) for g, j in zip(wide_ybar, fine))
    if not (np.isfinite(rhs) and np.isfinite(rhs_coarse)):
        raise GradientCheckError(f"check_grads({name}): finite differences are not finite at "
                                 "these inputs, so they cannot decide", None, rtol)
    if abs(rhs - rhs_coarse) > rtol * scale:
        raise GradientCheckError(
            f"check_grads({name}): finite differences cannot decide at these inputs: {name} is "
            "not smooth enough there (a kink, a tie, a branch).", None, rtol,
            fix="rulebridge.check_grads(f, x + 0.1)  # check at inputs away from kinks and ties",
            details=f"Steps h and h/2 disagree (relative {abs(rhs - rhs_coarse) / scale:.1e} > "
                    f"{rtol:.0e}).")
    if not np.isfinite(lhs):
        return float("inf"), lhs, rhs
    return (abs(lhs - rhs) / scale if scale > 0 else abs(lhs - rhs)), lhs, rhs


def _worst_leaf(at, x, xbar, xdot, ybar, rtol, atol, name, paths) -> str:
    """Which leaf's gradient is off: the test again, moving one leaf at a time."""
    if len(x) == 1:
        return ""
    errors = []
    for k in range(len(x)):
        only = [t if j == k else np.zeros_like(t) for j, t in enumerate(xdot)]
        try:
            errors.append(_compare(at, x, xbar, only, ybar, rtol, atol, name)[0])
        except GradientCheckError:
            errors.append(0.0)  # undecided along this leaf alone
    k = int(np.argmax(errors))
    return (f" Moving one leaf at a time, the worst is {paths[k]} (relative error "
            f"{errors[k]:.2e})." if errors[k] > rtol else "")

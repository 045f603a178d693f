"""`check_pushforward`: test a rule's pushforward (`Rule.jvp`) against finite differences.

The test is the JVP's own: for random tangents `xdot` of the differentiated arguments, the rule's
`J xdot` must equal the central difference of NumPy's own function along `xdot` (in float64 or
complex128, Richardson-extrapolated: rulebridge/checking/fd.py), output by output, within
`atol*|xdot| + rtol*|J xdot|` (the tolerances of `check_rule`, by the lowest precision involved).
Around that: each tangent has its output's shape and dtype, the inputs and tangents are not
mutated, and a non-finite number is never a pass. When the two step sizes of the finite
differences disagree beyond the tolerance, or NumPy's value is not finite, the verdict is
"inconclusive", never "pass".
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

import numpy as np

from ..rules.keys import configuration, format_settings
from ..rules.levels import primals
from ..rules.rule import Rule, function_name
from ..rules.signature import format_signature, is_differentiable, signature_of
from ..rules.arguments import differentiable_argnums
from ..rules.selection import JVP, install_check
from .check import TOLERANCES, case_seed
from .fd import _random_like, directional, flat_outputs, phase_fixed, widen
from .result import CheckResult

DIRECTIONS = 2


class _Verdict(Exception):
    def __init__(self, status: str, reason: str, error: float | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.error = status, reason, error


def check_pushforward(rule: Rule, args: tuple, kwargs: dict | None = None,
                      argnums: Sequence[int] | None = None, *, seed: int = 0,
                      directions: int = DIRECTIONS, jvp: Callable | None = None) -> CheckResult:
    """Check `rule`'s pushforward at these inputs against central differences of NumPy's own
    function (`rule.function`).

    Parameters
    ----------
    rule : Rule
        A rule with a `jvp` (or pass `jvp`); its forward makes the residuals the jvp reads.
    args : tuple
        The call's positional arguments (plain values); `kwargs` its keywords.
    argnums : sequence of int, optional
        The arguments to differentiate; default every differentiable one.
    seed, directions
        The random tangents: how they are seeded (per function and signature) and how many.

    Returns
    -------
    CheckResult
        "pass", "fail", "error" (no pushforward, it raised, or it broke the contract) or
        "inconclusive"; the signature is followed by " jvp" to name the mode.
    """
    kwargs = kwargs or {}
    # the rule itself, not a check-at-first-use wrapper standing for it (firstuse.py)
    rule = getattr(getattr(rule, "policy", None), "original", None) or rule
    jvp = jvp or rule.jvp
    name = function_name(rule.function)
    signature = format_signature(signature_of(args))
    argnums = differentiable_argnums(args) if argnums is None else tuple(argnums)
    precision = "float32" if any(getattr(a, "dtype", None) in (np.float32, np.complex64)
                                 for a in _leaves(args)) else "float64"
    rtol, atol = TOLERANCES[precision]
    try:
        static = format_settings(configuration(rule.function, args, kwargs))
    except Exception:
        static = ""

    def result(status: str, error: float | None, reason: str) -> CheckResult:
        return CheckResult(name, rule.source, signature + " jvp", status, error, rtol, seed,
                           directions, reason, static)

    if jvp is None:
        return result("error", None, "the rule has no pushforward")
    try:
        with np.errstate(all="ignore"):
            rng = np.random.default_rng(case_seed(seed, name + " jvp", signature, kwargs))
            error = _check(rule, jvp, args, kwargs, argnums, rtol, atol, directions, rng)
    except _Verdict as verdict:
        return result(verdict.status, verdict.error, verdict.reason)
    return result("pass", error, "" if error is not None else "nothing differentiable flows")


def _check(rule, jvp, args, kwargs, argnums, rtol, atol, directions, rng) -> float | None:
    function = rule.function
    try:
        expected = function(*args, **kwargs)
    except Exception as exc:
        raise _Verdict("error", f"NumPy's own {name_of(function)} raised "
                                f"{type(exc).__name__} at these inputs: {exc}") from None
    outputs = flat_outputs(expected)
    selected = [k for k, o in enumerate(outputs) if is_differentiable(o)]
    if not selected or not argnums:
        return None
    if not all(np.all(np.isfinite(outputs[k])) for k in selected):
        raise _Verdict("inconclusive", "NumPy's value is not finite at these inputs")
    snapshot = copy.deepcopy(args)
    try:
        _, residuals = rule.forward(args, kwargs)
    except Exception as exc:
        raise _Verdict("error", f"its forward raised {type(exc).__name__}: {exc}") from None
    residuals = rule.chosen(residuals)[1]  # the residuals the pushforward takes
    wide = widen(args)
    worst = 0.0
    for _ in range(directions):
        xdot = tuple(_random_like(args[i], rng) for i in argnums)
        before = copy.deepcopy(xdot)
        try:
            got = jvp(residuals, xdot, argnums)
        except Exception as exc:
            raise _Verdict("error", f"its pushforward raised {type(exc).__name__}: {exc}") \
                from None
        if not (_equal(snapshot, args) and _equal(before, xdot)):
            raise _Verdict("error", "its pushforward wrote into its inputs or tangents")
        got = flat_outputs(got) if len(outputs) > 1 or isinstance(expected, (tuple, list)) \
            else [got]
        if len(got) != len(outputs):
            raise _Verdict("error", f"its pushforward returned {len(got)} tangent(s) for "
                                    f"{len(outputs)} output(s)")
        for k in selected:
            _conforms(got[k], outputs[k], k)
        try:
            coarse, fine = directional(phase_fixed(function, expected), wide, kwargs, argnums,
                                       [widen(x) for x in xdot], selected)
        except Exception as exc:
            raise _Verdict("inconclusive", f"NumPy's function raised at a finite-difference "
                                           f"step ({type(exc).__name__}: {exc})") from None
        scale = (atol / rtol) * _norm(xdot) + _norm(fine)
        for k, c, f in zip(selected, coarse, fine):
            if not (np.all(np.isfinite(c)) and np.all(np.isfinite(f))):
                raise _Verdict("inconclusive", "finite differences are not finite here")
            if _norm([c - f]) > rtol * scale:
                raise _Verdict("inconclusive", "finite differences with steps h and h/2 "
                                               "disagree beyond the tolerance")
            t = np.zeros_like(f) if got[k] is None else widen(np.asarray(got[k]))
            if not np.all(np.isfinite(t)):
                raise _Verdict("fail", "its tangent is not finite where NumPy's function is "
                                       "smooth", float("inf"))
            error = _norm([t - f]) / scale if scale > 0 else _norm([t - f])
            worst = max(worst, error)
            if error > rtol:
                raise _Verdict("fail", f"J xdot of output {k} differs from central differences "
                                       f"beyond the tolerance (relative {error:.1e})", error)
    return worst


def _conforms(tangent: Any, primal: Any, k: int) -> None:
    if tangent is None:
        return
    if np.shape(tangent) != np.shape(primal) or \
            np.result_type(tangent) != np.result_type(primal):
        raise _Verdict("error", f"the tangent of output {k} is {np.result_type(tangent)} of "
                                f"shape {np.shape(tangent)}; the output is "
                                f"{np.result_type(primal)} of shape {np.shape(primal)}")


def _norm(items) -> float:
    return float(np.sqrt(sum(float(np.sum(np.abs(widen(np.asarray(x))) ** 2)) for x in
                             _leaves(items))))


def _leaves(items) -> list:
    out: list = []
    for a in items:
        out.extend(_leaves(a) if type(a) in (list, tuple) else [a])
    return out


def _equal(a, b) -> bool:
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    return a is b or a == b or (a != a and b != b)


def name_of(function: Callable) -> str:
    return function_name(function)


def check_at_first_use(rule: Rule, args: tuple, kwargs, argnums: tuple) -> tuple[str, str]:
    """`(status, reason)` of `rule`'s pushforward at an op's own inputs, where no status settles
    its key (rules/selection.py asks): at the innermost primals, since under nesting the op's
    arguments are an enclosing level's boxes (reverse over forward)."""
    result = check_pushforward(rule, primals(args), dict(kwargs or {}), argnums)
    return result.status, result.reason


def install() -> None:
    install_check(JVP, check_at_first_use)

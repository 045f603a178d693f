"""`check_rule`: test one rule against finite differences of NumPy's own function.

The dot-product test: for a random tangent `xdot` and a random output cotangent `ybar`,
`Re<xbar, xdot>` with `xbar` from the rule's pullback must equal `Re<ybar, J xdot>` with `J xdot`
from central differences of NumPy's function in float64/complex128 (pairings are bilinear,
`Re(sum(a * b))`, the JAX/autograd convention). The error is held to
`atol*|ybar||xdot| + rtol*sum_i |ybar_i||(J xdot)_i|` with `rtol, atol` set by the lowest
precision among the inputs and outputs (where steps h and h/2 disagree, refine.py tries again).
Around that: the primal must be NumPy's, cotangents must have their argument's shape and dtype,
nothing may be mutated, a second call gives the same cotangents, a non-finite number never passes.
Where the function is defined on part of its arguments' space only (x on the simplex, a
positive-definite covariance: the table of rules/tangents.py), the tangents are projected onto
that domain's tangent space and the steps kept inside it; a pass then says so in its reason.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import zlib
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ImportRuleError
from ..rules.keys import configuration, format_settings, normalise
from ..rules.registry import REGISTRY
from ..rules.rule import CallForward, Rule, function_name
from ..rules.signature import INEXACT_KINDS, format_signature, is_differentiable, signature_of
from ..rules.arguments import differentiable_argnums
from ..rules.tangents import tangent_space
from .fd import (_pair, _random_like, at_a_kink, directional, flat_outputs, phase_fixed,
                 phase_free, step_for, widen)
from .refine import all_finite, decide_again, undecided_why
from .result import (AT_A_KINK, AT_A_POLE, NOT_FINITE_INPUTS, RAISED, SQUEEZED_STEPS,
                     CheckResult)

# (rtol, atol) by the lowest precision involved. float32 rules compute in float32, so their
# cotangents carry ~1e-7 relative rounding amplified by the conditioning of the function.
TOLERANCES = {"float64": (1e-6, 1e-8), "float32": (2e-3, 2e-5)}
# The primal is NumPy's own computation in every rule we ship, so it must match closely.
PRIMAL_RTOL = {"float64": 1e-12, "float32": 1e-5}
DEFAULT_DIRECTIONS = 3
NUMPY_RAISED = "NumPy's own"  # how a verdict starts when NumPy rejects the inputs itself


class _Verdict(Exception):
    def __init__(self, status: str, reason: str, measured: str = "") -> None:
        super().__init__(reason)
        self.status, self.reason, self.measured = status, reason, measured


def case_seed(seed: int, function: str, signature: str, kwargs: dict) -> int:
    """A seed for one (function, signature, static arguments), stable across processes."""
    key = f"{seed}|{function}|{signature}|{sorted(kwargs.items())!r}"
    return zlib.crc32(key.encode())


def check_rule(func: Callable | Rule, *example_args: Any, source: str | None = None,
               seed: int = 0, directions: int = DEFAULT_DIRECTIONS,
               argnums: Sequence[int] | None = None, rtol: float | None = None,
               atol: float | None = None, outputs: Sequence[int] | None = None,
               **kwargs: Any) -> CheckResult:
    """Check a rule against finite differences of NumPy's own function at these inputs.

    A dot-product test in a few random directions: ``Re<xbar, xdot>`` from the rule's pullback
    against ``Re<ybar, J xdot>`` from central differences (Richardson-extrapolated) of the
    function itself in float64 or complex128. The random tangents span every entry of every
    differentiated argument, also the entries NumPy's function ignores (the triangle
    ``cholesky`` does not read), where the rule must give a zero cotangent: a rule right only
    for some directions (symmetric ones) fails.

    Parameters
    ----------
    func : callable or Rule
        The function whose rule rulebridge would use for ``func(*example_args, **kwargs)``, or a
        `Rule` to check directly.
    *example_args
        The inputs to check at; they fix the signature.
    source : str, optional
        Check that adapter's rule, as ``rulebridge.grad(..., source=...)`` would use it (None:
        the rule ``source=None`` would use).
    seed : int, optional
        Seed of the random directions (combined with the function and signature).
    directions : int, optional
        How many random directions to test.
    argnums : sequence of int, optional
        The arguments to perturb (default: every float or complex array argument, and lists of
        them).
    rtol, atol : float, optional
        The tolerance (default: by dtype, about 1e-6 relative for float64 and 2e-3 for float32).
    outputs : sequence of int, optional
        Give random cotangents to these outputs only (eigenvalues, not eigenvectors).
    **kwargs
        The call's keyword arguments (``axis=``, ``keepdims=``).

    Returns
    -------
    CheckResult
        Everything the rule does wrong is reported here: its status, worst error and reason.

    Raises
    ------
    NoRuleError
        When no adapter has a rule for the call.
    """
    return check_call(func, example_args, kwargs, source=source, seed=seed,
                      directions=directions, argnums=argnums, rtol=rtol, atol=atol,
                      outputs=outputs)


def check_call(func: Callable | Rule, example_args: tuple, kwargs: dict, *,
               source: str | None = None, seed: int = 0, directions: int = DEFAULT_DIRECTIONS,
               argnums: Sequence[int] | None = None, rtol: float | None = None,
               atol: float | None = None,
               outputs: Sequence[int] | None = None) -> CheckResult:
    """`check_rule` with the call's keyword arguments as a dict, so that none of them can be
    mistaken for an option of the check (the engine's first-use check goes through here)."""
    names = None
    call = getattr(func, "__rulebridge_call__", None)
    if call is not None:  # what import_rule returns: the call, its containers taken apart
        func, example_args, kwargs, argnums, names = call(example_args, kwargs, argnums)
    if not isinstance(func, Rule):  # the call in its one spelling, and the rule for its key
        example_args, kwargs, config = normalise(func, example_args, kwargs)
        rule = REGISTRY.candidate(func, signature_of(example_args), source, config)
    else:
        rule = func
    rule = getattr(rule, "original", None) or rule  # the rule itself, not a first-use wrapper
    if rule.traced_forward is not None and argnums is not None:
        # the forward that knows what is traced (an import's, which checks it itself there)
        traced, traced_forward = tuple(argnums), rule.traced_forward
        rule = dataclasses.replace(rule, traced_forward=None, forward=lambda args, kwargs:
                                   traced_forward(args, kwargs, traced))
    name = function_name(rule.function)
    signature = format_signature(signature_of(example_args))
    precision = _precision(example_args + _outputs_of(rule.function, example_args, kwargs))
    default_rtol, default_atol = TOLERANCES[precision]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    static = format_settings(configuration(rule.function, example_args, kwargs))

    def result(status: str, error: float | None, reason: str, measured: str = "") -> CheckResult:
        if names:  # the leaves of a call of containers, by their paths
            reason = re.sub(r"\bargument (\d+)\b", lambda m: names[int(m[1])], reason)
        return CheckResult(name, rule.source, signature, status, error, rtol, seed, directions,
                           reason, static, measured)

    try:
        with np.errstate(all="ignore"):
            rng = np.random.default_rng(case_seed(seed, name, signature, kwargs))
            space = tangent_space(rule.function, example_args, kwargs,
                                  differentiable_argnums(example_args) if argnums is None
                                  else tuple(argnums))
            error = _check(rule, example_args, kwargs, argnums, outputs, precision, rtol, atol,
                           directions, rng, space)
    except _Verdict as verdict:
        return result(verdict.status, None, verdict.reason, verdict.measured)
    except _FailedAt as failed:
        return result("fail", failed.error, failed.reason, failed.measured)
    if error is None:
        return result("pass", error, "no differentiable output or input: the primal and "
                                     "contract are checked")
    return result("pass", error, "" if space is None else space.describe(example_args))


class _FailedAt(Exception):
    def __init__(self, error: float, reason: str, measured: str = "") -> None:
        super().__init__(reason)
        self.error, self.reason, self.measured = error, reason, measured


def _precision(args: tuple) -> str:
    for a in _leaves(args):
        if isinstance(a, np.ndarray) and a.dtype in (np.float32, np.complex64):
            return "float32"
    return "float64"


def _outputs_of(function: Callable, args: tuple, kwargs) -> tuple:
    """NumPy's outputs here, so that a float32 result (`x.astype(np.float32)`) sets the
    tolerance as a float32 argument does; () when NumPy rejects the inputs (the check says so)."""
    try:
        with np.errstate(all="ignore"):
            return tuple(flat_outputs(function(*args, **kwargs)))
    except Exception:
        return ()


def _leaves(args) -> list:
    out = []
    for a in args:
        out.extend(a if type(a) in (list, tuple) else [a])
    return out


def _check(rule: Rule, args: tuple, kwargs: dict, argnums, seeded, precision: str,
           rtol: float, atol: float, directions: int,
           rng: np.random.Generator, space=None) -> float | None:
    function = rule.function
    argnums = differentiable_argnums(args) if argnums is None else tuple(argnums)
    snapshot = copy.deepcopy(args)
    try:
        expected = function(*args, **kwargs)
    except Exception as exc:
        raise _Verdict("error", f"{NUMPY_RAISED} {function_name(function)} raised "
                                f"{type(exc).__name__} at these inputs: {exc}") from None
    out, residuals = _call("forward", rule.forward, args, kwargs)
    _unmutated(snapshot, args, "its inputs in its forward")
    _same_primal(out, expected, PRIMAL_RTOL[precision])
    outputs = flat_outputs(out)
    selected = [k for k, o in enumerate(outputs)
                if is_differentiable(o) and (seeded is None or k in seeded)]
    if not selected or not argnums:
        return None  # nothing differentiable flows: the primal is all there is to check
    for k in selected:
        if not np.all(np.isfinite(outputs[k])):  # no verdict: refused, or tried at stand-ins
            raise _Verdict("inconclusive", AT_A_POLE if all_finite(args) else NOT_FINITE_INPUTS)
    wide_args = widen(args)
    worst = 0.0
    first_cts = None
    for _ in range(directions):
        ybar = phase_free(function, _cotangent_of(out, selected, rng), out)
        ybar_before = copy.deepcopy(ybar)
        cts = _pullback(rule, residuals, ybar, argnums, args)
        _unmutated(snapshot, args, "its inputs in its pullback")
        _unmutated(ybar_before, ybar, "the output cotangent it received")
        if first_cts is None:
            first_cts = (ybar, cts)
        xdot = [_random_like(widen(args[i]), rng) for i in argnums]
        room = np.inf
        if space is not None:  # directions in the domain's tangent space (rules/tangents.py)
            xdot = space.project(wide_args, xdot)
            room = space.room(wide_args, xdot)
        lhs = sum(_pair(ct, d) for ct, d in zip(cts, xdot))
        try:
            coarse, fine = directional(phase_fixed(function, expected), wide_args, kwargs,
                                       argnums, xdot, selected, room)
        except Exception as exc:  # a step left the function's domain (x off a simplex)
            raise _Verdict("inconclusive", f"NumPy's own {function_name(function)} raised at a "
                                           f"finite-difference step ({type(exc).__name__}: "
                                           f"{exc}): the inputs are too close to the edge of "
                                           "its domain to decide") from None
        wide_ybar = [widen(np.asarray(y)) for y in flat_outputs(ybar)]
        ybar_sel = [wide_ybar[k] for k in selected]
        rhs = sum(_pair(y, j) for y, j in zip(ybar_sel, fine))
        rhs_coarse = sum(_pair(y, j) for y, j in zip(ybar_sel, coarse))
        scale = (atol / rtol) * _norm(ybar_sel) * _norm(xdot) + sum(
            float(np.sum(np.abs(y) * np.abs(j))) for y, j in zip(ybar_sel, fine))
        undecided = undecided_why(rhs, rhs_coarse, scale, rtol, wide_args)  # refine.py
        again = undecided and decide_again(phase_fixed(function, expected), wide_args, kwargs,
                                           argnums, xdot, selected, ybar_sel, cts, rtol, atol,
                                           _norm, space)
        if again:  # decided by scaled steps and Ridders' extrapolation
            lhs, rhs, scale, xdot = again
        elif undecided:
            raise _Verdict("inconclusive", *undecided)
        error = abs(lhs - rhs) / scale if scale > 0 else abs(lhs - rhs)
        if not error <= rtol and at_a_kink(phase_fixed(function, expected), wide_args, kwargs,
                                           argnums, xdot, selected, ybar_sel, rtol * scale,
                                           room):
            # central differences are symmetric: at a kink (a root or a norm at 0) they agree
            # across steps and look smooth, and a rule's NaN or subgradient there is no failure
            raise _Verdict("inconclusive", AT_A_KINK)
        if not np.isfinite(lhs):
            raise _FailedAt(float("inf"), "the rule's cotangent is not finite where NumPy's "
                                          "function is smooth")
        if error > rtol and room < step_for(wide_args, argnums, xdot):
            raise _Verdict("inconclusive", SQUEEZED_STEPS)  # a pass would still be one
        worst = max(worst, error)
        if error > rtol:
            raise _FailedAt(error, "Re<xbar, xdot> from the rule differs from Re<ybar, J xdot> "
                                   "from finite differences beyond the tolerance",
                            f"Re<xbar, xdot> = {lhs:.9g} from the rule, Re<ybar, J xdot> = "
                            f"{rhs:.9g} from finite differences")
    _same_second_call(rule, args, kwargs, argnums, *first_cts)
    _same_unary_vjp(rule, args, kwargs, *first_cts, rtol)
    return worst


def _call(stage: str, fn: Callable, *args):
    try:
        return fn(*args)
    except ImportRuleError:
        raise  # the user's import is wrong, not the rule under check: say so as it says
    except Exception as exc:
        raise _Verdict("error", f"{RAISED % stage} {type(exc).__name__}: {exc}") from None


def _pullback(rule: Rule, residuals, ybar, argnums, args) -> list:
    cts = _call("pullback", rule.pullback, residuals, ybar, argnums)
    if cts is None or len(cts) != len(argnums):
        raise _Verdict("error", f"its pullback returned "
                                f"{'None' if cts is None else len(cts)} cotangent(s) for "
                                f"argnums {argnums}")
    return [_checked_cotangent(ct, args[i], i) for ct, i in zip(cts, argnums)]


def _checked_cotangent(ct, primal, position: int):
    if type(primal) in (list, tuple):
        if ct is None:
            return [np.zeros_like(p) for p in primal]
        if len(ct) != len(primal):
            raise _Verdict("error", f"the cotangent of argument {position} has {len(ct)} items "
                                    f"for {len(primal)} arrays")
        return [_checked_cotangent(c, p, position) for c, p in zip(ct, primal)]
    if ct is None:
        return np.zeros_like(primal)
    # np.shape and np.result_type: a Python float argument has neither attribute
    shape, dtype = np.shape(ct), getattr(ct, "dtype", None)
    expected = np.result_type(primal)
    if shape != np.shape(primal) or dtype != expected:
        got = f"{getattr(dtype, 'name', type(ct).__name__)}{list(shape)}"
        raise _Verdict("error", f"the cotangent of argument {position} is {got}, but the "
                                f"argument is {expected.name}{list(np.shape(primal))}: a "
                                "cotangent must have exactly its argument's shape and dtype")
    return ct


def _unmutated(before, after, what: str) -> None:
    if not _equal(before, after):
        raise _Verdict("error", f"the rule mutated {what}")


def _equal(a, b) -> bool:
    if type(a) in (list, tuple):
        return type(b) in (list, tuple) and len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, (np.ndarray, np.generic)):
        same_type = np.shape(a) == np.shape(b) and a.dtype == getattr(b, "dtype", None)
        return same_type and np.array_equal(a, b, equal_nan=a.dtype.kind in INEXACT_KINDS)
    try:
        return bool(a == b)
    except Exception:
        return True  # an opaque static argument: nothing we can compare


def _same_primal(out, expected, rtol: float) -> None:
    got, want = flat_outputs(out), flat_outputs(expected)
    several = isinstance(out, (tuple, list)), isinstance(expected, (tuple, list))
    if several[0] != several[1] or len(got) != len(want):
        raise _Verdict("fail", f"its forward returned {type(out).__name__} of {len(got)} item(s); "
                               f"NumPy returns {type(expected).__name__} of {len(want)}")
    for k, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, (np.ndarray, np.generic, int, float, complex)):
            if not _equal(w, g):
                raise _Verdict("fail", f"output {k} of its forward is {g!r}, NumPy's is {w!r}")
            continue
        g_dtype, w_dtype = np.result_type(g), np.result_type(w)
        if np.shape(g) != np.shape(w) or g_dtype != w_dtype:
            raise _Verdict("fail", f"output {k} of its forward is {g_dtype}{list(np.shape(g))}, "
                                   f"NumPy's is {w_dtype}{list(np.shape(w))}")
        if w_dtype.kind in INEXACT_KINDS:
            bound = rtol * max(1.0, float(np.max(np.abs(w), initial=0.0, where=np.isfinite(w))))
            if not np.allclose(g, w, rtol=rtol, atol=bound, equal_nan=True):
                raise _Verdict("fail", f"output {k} of its forward differs from NumPy's value",
                               f"max |difference| {float(np.max(np.abs(g - w))):.2e}")
        elif not np.array_equal(g, w):
            raise _Verdict("fail", f"output {k} of its forward differs from NumPy's value")


def _cotangent_of(out, selected: list[int], rng: np.random.Generator):
    """A random cotangent for every inexact output (None for the others), shaped as the engine
    passes it: one value for a single output, a tuple for several."""
    outputs = flat_outputs(out)
    ybar = [_random_like(o, rng) if k in selected else None for k, o in enumerate(outputs)]
    return tuple(ybar) if isinstance(out, (tuple, list)) else ybar[0]


def _norm(items) -> float:
    return float(np.sqrt(sum(float(np.sum(np.abs(widen(np.asarray(x))) ** 2))
                             for x in _leaves(items))))


def _same_second_call(rule: Rule, args, kwargs, argnums, ybar, cts) -> None:
    out, residuals = _call("forward", rule.forward, args, kwargs)
    again = _pullback(rule, residuals, ybar, argnums, args)
    if not _equal(list(cts), list(again)):
        raise _Verdict("error", "a second call with the same inputs and cotangent gave "
                                "different cotangents")


def _same_unary_vjp(rule: Rule, args, kwargs, ybar, cts, rtol: float) -> None:
    """On `y = f(x)` the sweep calls `rule.unary_vjp` as it does, instead of the pullback
    checked above, and uses its cotangent when it has x's shape and dtype: that one must agree."""
    if (rule.unary_vjp is None or kwargs or len(args) != 1 or type(args[0]) is not np.ndarray
            or isinstance(ybar, (tuple, list))):
        return
    if type(rule.forward) is not CallForward:
        raise _Verdict("error", "it has a unary_vjp, which the sweep calls only beside a "
                                "CallForward forward, on the output and x that CallForward's "
                                "residuals (output, (x,), None) hold, but its forward is a "
                                f"{type(rule.forward).__name__}")
    out, _ = _call("forward", rule.forward, args, kwargs)
    vjp = _call("unary_vjp", rule.unary_vjp, out, args[0])
    ct = _call("unary_vjp's VJP", vjp, ybar)
    (expected,) = cts
    if type(ct) is not np.ndarray or ct.dtype != expected.dtype or ct.shape != expected.shape:
        return  # the sweep calls the pullback instead
    scale = float(np.max(np.abs(expected), initial=0.0))
    if not np.allclose(ct, expected, rtol=rtol, atol=rtol * scale):
        raise _Verdict("error", "its unary_vjp gives a cotangent that differs from its "
                                "pullback's (the sweep uses unary_vjp on y = f(x))",
                       f"by up to {float(np.max(np.abs(ct - expected))):.3g}")


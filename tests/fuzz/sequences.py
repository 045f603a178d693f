"""Fuzzed call sequences: where a verdict made at one call is used at the next (issue 22,
sections 3 to 5). Three generators, each a list of calls of one program, drawn with hypothesis:

- `constants`: a float constant or hyperparameter that changes between calls (`x ** t`, an
  imported function's `a`, norm's `ord`, a distribution's `loc` and `scale`, pinv's `rcond` and
  the singular values it cuts, geom's `k`), including imports whose equivalent is right at some
  values only;
- `degenerate`: first calls at inputs where the derivative does not exist or a rule raises
  (std of a constant vector, a norm at 0, xlogy at 0, lstsq on a square system), or that hold
  NaN or inf (the gradient is NaN exactly there and the derivative elsewhere, or refused), then
  good ones, at keys whose verdicts are cleared first: the good calls must be answered;
- `dropins`: each rulebridge.scipy function of the catalogue with its non-differentiated array
  arguments as Python lists, and with each keyword of SciPy's signature a menu has a value for.

Every call's gradient equals central differences of NumPy's or SciPy's own function, or the
call raises one of rulebridge's errors (counted). Never a wrong number.
"""

from __future__ import annotations

import collections
import functools
import inspect

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import rulebridge as rb

TOLERANCE = 1e-6


class Mismatch(AssertionError):
    """A silently wrong gradient, or a good call refused after a degenerate one."""


def outcome(f, reference, x) -> str:
    """"pass", "inconclusive" or "error:<class>" for rulebridge's gradient of `f` at `x`
    against central differences of `reference`; raises Mismatch for a wrong number."""
    try:
        g = rb.grad(f)(np.copy(x))
    except rb.RulebridgeError as exc:
        return "error:" + type(exc).__name__
    rng = np.random.default_rng(0)
    for _ in range(2):
        v = rng.normal(size=np.shape(x))
        h = 1e-3 * max(1.0, float(np.max(np.abs(x))))

        def d(step):
            return (reference(x + step * v) - reference(x - step * v)) / (2 * step)

        try:
            d1, d2, d4 = d(h), d(h / 2), d(h / 4)
        except ValueError:  # a step off the function's domain (dirichlet's simplex): the
            return "inconclusive"  # gradient there is tests/checking/test_tangent_spaces.py's
        coarse, fine = (4 * d2 - d1) / 3, (4 * d4 - d2) / 3
        scale = float(np.sum(np.abs(g * v))) + abs(fine)
        if not np.isfinite(fine) or abs(fine - coarse) > 1e-4 * (1.0 + scale):
            return "inconclusive"
        dot = float(np.sum(g * v))
        if not abs(dot - fine) <= TOLERANCE * scale + 1e-9:
            raise Mismatch(f"<gradient, v> = {dot!r} but finite differences give {fine!r}")
    return "pass"


# -- constants that change between calls -------------------------------------------------------


@functools.cache
def _imports():
    import jax.numpy as jnp

    right = rb.import_rule(lambda v, a: np.sin(v) * a, "jax",
                           equivalent=lambda v, a: jnp.sin(v) * a)
    squared = rb.import_rule(lambda v, a: np.sin(v) * a + 0.0, "jax",
                             equivalent=lambda v, a: jnp.sin(v) * a ** 2 + 0.0)
    signed = rb.import_rule(lambda v, w: np.sum(np.sin(v) * w), "jax",
                            equivalent=lambda v, w: jnp.sum(jnp.sin(v) * jnp.abs(w)))
    return right, squared, signed


def _pinv_at(s: float, rcond: float):
    rng = np.random.default_rng(1)
    u, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    w, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    weights = rng.normal(size=(3, 3))

    def f(x):
        return np.sum(np.linalg.pinv(x, rcond=rcond) * weights)

    return f, f, u @ np.diag([2.0, 1.0, s]) @ w.T


def _constant_program(kind: str, c: float, x: np.ndarray):
    """(program, reference, point) of one template at the constant `c`."""
    import rulebridge.scipy.stats as rstats
    import scipy.stats

    right, squared, signed = _imports()
    if kind == "power":
        return (lambda v: np.sum(np.abs(v) ** c),) * 2 + (np.abs(x) + 0.5,)
    if kind == "import":
        return (lambda v: np.sum(right(v, c)),) * 2 + (x,)
    if kind == "import right at a=1 only":
        return (lambda v: np.sum(squared(v, c)), lambda v: np.sum(np.sin(v) * c), x)
    if kind == "import of a constant array":
        w = np.array([1.0, -c, 0.5])[: x.size]
        return (lambda v: signed(v, w), lambda v: np.sum(np.sin(v) * w), x)
    if kind == "norm ord":
        return (lambda v: np.linalg.norm(v, 1.5 + c),) * 2 + (x,)
    if kind == "norm.logpdf loc scale":
        return (lambda v: np.sum(rstats.norm.logpdf(v, c - 1.0, 0.5 + c)),
                lambda v: np.sum(scipy.stats.norm.logpdf(v, c - 1.0, 0.5 + c)), x)
    if kind == "geom.pmf k":
        k = 1.0 + round(2 * c) / 2  # integers and halves
        return (lambda p: rstats.geom.pmf(k, p[0]), lambda p: scipy.stats.geom.pmf(k, p[0]),
                np.array([0.3]))
    if kind == "pinv rcond":
        return _pinv_at(0.02 + 0.3 * c, 0.1)
    raise ValueError(kind)


CONSTANT_KINDS = ("power", "import", "import right at a=1 only", "import of a constant array",
                  "norm ord", "norm.logpdf loc scale", "geom.pmf k", "pinv rcond")


@st.composite
def constant_sequences(draw):
    kind = draw(st.sampled_from(CONSTANT_KINDS))
    values = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.25, 2.0]) | st.floats(0.1, 2.0),
                           min_size=2, max_size=4))
    x = np.array(draw(st.lists(st.floats(0.2, 1.5), min_size=3, max_size=3)))
    return kind, values, x


# -- first calls at degenerate inputs, then good ones ------------------------------------------


def _degenerate(kind: str, good: np.ndarray):
    """(program, reference, degenerate point, good point) of one template."""
    import scipy.special

    if kind == "std ddof":
        f = (lambda v: np.std(v, ddof=1))
        return f, f, np.ones((3, 1, 1)), good.reshape(3, 1, 1)
    if kind == "norm at 0":
        f = (lambda v: np.linalg.norm(v, 3.25))
        return f, f, np.zeros(3), good
    if kind == "xlogy at 0":
        f = (lambda v: np.sum(scipy.special.xlogy(v, v[::-1] + 0.0)))
        return f, f, np.zeros((3, 1, 1, 1)), good.reshape(3, 1, 1, 1)
    if kind == "lstsq square then tall":
        b3, b5 = np.array([1.0, -2.0, 0.5]), np.linspace(-1.0, 1.0, 5)

        def f(a):
            b = b3 if a.shape[0] == 3 else b5
            return np.sum(np.linalg.lstsq(a, b)[0] ** 2)
        rows = np.random.default_rng(int(1000 * good[0])).normal(size=(5, 3))
        square, tall = np.eye(3) + 0.1 * np.outer(good, good), rows + np.eye(5, 3) * good
        return f, f, square.astype(np.float32), tall.astype(np.float32)
    if kind in NONFINITE_KINDS:  # an elementwise program at a key no shipped status covers
        f = (lambda v: np.sum(summand(v)))
        bad = good.reshape(3, 1, 1, 1, 1).copy()
        bad[good.argmax()] = {"nan first": np.nan, "inf first": np.inf}[kind]
        return f, f, bad, good.reshape(3, 1, 1, 1, 1)
    raise ValueError(kind)


def summand(v):
    return np.sin(v) * v + np.tanh(v)


def derivative(kind: str, x: np.ndarray) -> np.ndarray:
    """The elementwise derivative of the NONFINITE_KINDS' program (NaN where x is not finite:
    NumPy's sin and tanh of inf are NaN, so nothing is differentiable there)."""
    with np.errstate(invalid="ignore"):
        return np.cos(x) * x + np.sin(x) + 1.0 - np.tanh(x) ** 2


def nonfinite_outcome(kind: str, f, x: np.ndarray) -> str:
    """"pass" or "error:<class>" for a first call at inputs holding NaN or inf: the sum's
    gradient is NaN everywhere (its value is NaN: no derivative), and the pullback of the
    elementwise summand NaN exactly where the input is not finite and the derivative elsewhere,
    or refused; raises Mismatch for anything else (a finite number where the derivative is
    undefined above all)."""
    try:
        with np.errstate(invalid="ignore"):
            total = rb.grad(f)(np.copy(x))
            y, pullback = rb.vjp(summand, np.copy(x))
            (g,) = pullback(np.ones_like(y))
    except rb.RulebridgeError as exc:
        return "error:" + type(exc).__name__
    if not np.isnan(total).all():
        raise Mismatch(f"{kind}: {total.ravel()} for the gradient of a NaN value")
    finite = np.isfinite(x)
    if not np.array_equal(np.isnan(g), ~finite):
        raise Mismatch(f"{kind}: NaN at {np.isnan(g).ravel()}, inputs {x.ravel()}")
    expected = derivative(kind, x)
    if not np.allclose(g[finite], expected[finite], rtol=TOLERANCE, atol=1e-12):
        raise Mismatch(f"{kind}: {g.ravel()} where the derivative is {expected.ravel()}")
    return "pass"


NONFINITE_KINDS = ("nan first", "inf first")
DEGENERATE_KINDS = ("std ddof", "norm at 0", "xlogy at 0", "lstsq square then tall") + \
    NONFINITE_KINDS
_FUNCTIONS = ("numpy.std", "numpy.linalg.norm", "scipy.special.xlogy", "numpy.linalg.lstsq",
              "numpy.sin", "numpy.tanh", "numpy.multiply", "numpy.add", "numpy.sum")


def forget_verdicts() -> None:
    """Clear this process's verdicts at users' inputs for the degenerate kinds' functions, so
    each drawn sequence starts where its first call is the first at its key."""
    registry = rb.REGISTRY
    with registry._lock:
        for function, key in [k for k in registry._checked if k[0] in _FUNCTIONS]:
            for source in registry._checked.pop((function, key)):
                registry._status.pop((function, source, key), None)
        registry._invalidate()


@st.composite
def degenerate_sequences(draw):
    kind = draw(st.sampled_from(DEGENERATE_KINDS))
    good = np.array(draw(st.lists(st.floats(0.3, 1.7), min_size=3, max_size=3,
                                  unique=True)))
    return kind, draw(st.integers(1, 3)), good


# -- drop-ins with lists and with SciPy's keywords ---------------------------------------------

# keyword -> values to try, where the catalogue case does not give it
KEYWORDS = {"axis": [0, -1], "keepdims": [True], "return_sign": [True], "loc": [0.3],
            "scale": [1.7], "lower": [True], "trans": [1, 2], "unit_diagonal": [True],
            "mode": ["valid", "same"], "method": ["direct", "fft"], "check_finite": [False],
            "b": ["weights"], "ddof": [1]}


def dropin_calls() -> list:
    """(name, drop-in, scipy function, args, kwargs, variant) for every catalogued drop-in."""
    from rulebridge.checking.catalogue import cases_for
    from rulebridge.checking.domains import build_args
    from rulebridge.checking.tables_scipy import CASES

    calls = []
    for name in sorted(CASES):
        dropin, scipy_function = _resolve(name)
        if dropin is None:
            continue
        base = cases_for(name)[0]
        rng = np.random.default_rng(len(name))
        args = build_args(base.args, rng, np.dtype(np.float64))
        if not args or not isinstance(args[0], np.ndarray) or args[0].dtype.kind != "f":
            continue
        kwargs = dict(base.kwargs)
        if any(isinstance(a, np.ndarray) for a in args[1:]):
            calls.append((name, dropin, scipy_function, args, kwargs, "lists"))
        for keyword, values in KEYWORDS.items():
            if keyword in kwargs or keyword not in _parameters(dropin):
                continue
            for value in values:
                given_kwargs = {**kwargs, keyword: (np.linspace(0.5, 1.5, args[0].shape[-1])
                                                    if value == "weights" else value)}
                calls.append((name, dropin, scipy_function, args, given_kwargs,
                              f"{keyword}={value!r}"))
    return calls


def _parameters(function) -> set:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()


def _resolve(name: str):
    import importlib

    parts = name.split(".")
    for split in range(len(parts) - 1, 1, -1):
        try:
            ours = importlib.import_module("rulebridge." + ".".join(parts[:split]))
            theirs = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for attr in parts[split:]:
            ours, theirs = getattr(ours, attr, None), getattr(theirs, attr, None)
        return (ours, theirs) if ours is not None and callable(ours) else (None, None)
    return None, None


def dropin_outcome(call) -> str:
    name, dropin, scipy_function, args, kwargs, variant = call
    rest = tuple(a.tolist() if variant == "lists" and isinstance(a, np.ndarray) else a
                 for a in args[1:])

    def first(out):
        out = out[0] if isinstance(out, tuple) else out
        return np.sum(np.real(out))

    def f(x):
        return first(dropin(x, *rest, **kwargs))

    def reference(x):
        return first(scipy_function(x, *rest, **kwargs))

    try:
        with np.errstate(all="ignore"):
            if not np.isfinite(reference(args[0])):
                return "skipped"
    except Exception:
        return "skipped"  # SciPy itself declines the variant
    return outcome(f, reference, args[0])


# -- running -----------------------------------------------------------------------------------


def run(n: int) -> collections.Counter:
    """`n` drawn sequences of each of the first two kinds and every drop-in call (n > 100:
    all of them; else a deterministic sample of n); the tally of outcomes."""
    tally: collections.Counter = collections.Counter()

    @settings(max_examples=n, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(constant_sequences())
    def constants(drawn):
        kind, values, x = drawn
        for c in values:
            tally[f"constants:{outcome(*_constant_program(kind, c, x))}"] += 1

    @settings(max_examples=n, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(degenerate_sequences())
    def degenerate(drawn):
        kind, repeats, good = drawn
        forget_verdicts()
        f, reference, bad, fine = _degenerate(kind, good)
        for _ in range(repeats):
            first = (nonfinite_outcome(kind, f, bad) if kind in NONFINITE_KINDS
                     else outcome(f, reference, bad))
            tally[f"degenerate first:{first}"] += 1
        result = outcome(f, reference, fine)
        if result.startswith("error"):
            raise Mismatch(f"{kind}: a good call after {repeats} degenerate one(s) was "
                           f"refused ({result})")
        tally[f"then good:{result}"] += 1

    constants()
    degenerate()
    calls = dropin_calls()
    if n <= 100:
        calls = calls[:: max(1, len(calls) // n)]
    for call in calls:
        tally[f"drop-ins:{dropin_outcome(call)}"] += 1
    return tally

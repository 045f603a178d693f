"""Run one fuzzed program through rulebridge and compare every gradient with float64 central
differences (Richardson-extrapolated), at the tolerance of the program's dtype.

Outcomes: "pass"; "error" (rulebridge refused with one of its own errors: allowed, counted);
"inconclusive" (two step sizes disagree: the point is too close to a kink for finite
differences to decide). Anything else, a wrong number above all, is a failure: `Mismatch`.

Every other program is also run through `vjp`, and before its pullback runs the caller writes in
place into what it holds: the returned output, the program's constants (its closure: float
constants, index arrays, masks) and, for some programs, an input. The pullback must still give
the derivative at the values the forward saw, or refuse a changed input with MutationError
(`late_reads`).
"""

from __future__ import annotations

import zlib

import numpy as np

import rulebridge as rb

from .generate import Program

TOLERANCE = {np.float64: 1e-6, np.float32: 4e-3}  # relative, on sum |g_i v_i| + |fd|
STEP = 1e-3
DIRECTIONS = 3


class Mismatch(AssertionError):
    """A silently wrong result: a gradient, a value, a dtype or shape, or a mutated input."""


def run(program: Program, source: str | None = None, mode=None) -> str:
    """The outcome for one program: "pass", "inconclusive" or "error:<class>"; raises
    `Mismatch` (with the program's source and inputs) for a wrong result. `mode`: the check
    of one program (this module's gradient check by default; forward.py's for jvp)."""
    try:
        return (mode or _run)(program, source)
    except Mismatch as exc:
        raise Mismatch(f"{exc}\n{program}") from None


def same_as_numpy(f, program: Program, value, xs: list) -> None:
    """The traced call's value is NumPy's, and its arguments `xs` were written as NumPy writes
    them, against `f` run plainly on fresh copies of the program's inputs."""
    plain = [_copy(x) for x in program.inputs]
    expected = f(*plain)
    if not _same(value, expected):
        raise Mismatch(f"value {value!r} differs from NumPy's {expected!r}")
    for i, (x, after) in enumerate(zip(xs, plain)):
        if not np.array_equal(x, after):
            raise Mismatch(f"argument x{i} after the call differs from NumPy's: {x!r}, {after!r}")


def _run(program: Program, source: str | None) -> str:
    f = program.function()
    xs = [_copy(x) for x in program.inputs]  # a program may write into its arguments
    try:
        value, grads = rb.value_and_grad(f, argnums=tuple(range(len(xs))), source=source)(*xs)
    except rb.RulebridgeError as exc:
        return "error:" + type(exc).__name__
    same_as_numpy(f, program, value, xs)
    for i, (x, g) in enumerate(zip(xs, grads)):
        _check_like(i, x, g)
        if isinstance(x, np.ndarray) and (np.shares_memory(g, x) or not g.flags.writeable):
            raise Mismatch(f"the gradient of x{i} shares memory with it or is read-only")
    outcome = compare(program, grads)
    if zlib.crc32(program.source.encode()) % 2 == 0:
        late_reads(program, source)
    return outcome


# The vjp is of exp(program * W): exp's pullback reads its own output, which the caller writes.
W = np.array([0.05, -0.03, 0.02])
YBAR = np.array([1.0, 2.0, -1.0])


def late_reads(program: Program, source: str | None) -> None:
    """vjp, then in-place writes into the output, the constants and perhaps an input, then the
    pullback: the gradient at the original values, or MutationError for a changed input."""
    f = program.function()
    for name in program.consts:  # its own copies (int and bool constants are shared)
        f.__globals__[name] = np.copy(f.__globals__[name])
    w = W.copy()
    xs = [_copy(x) for x in program.inputs]
    try:
        y, pullback = rb.vjp(lambda *a: np.exp(f(*a) * w), *xs, source=source)
    except rb.RulebridgeError:
        return
    rng = np.random.default_rng(zlib.crc32(program.source.encode()))
    y *= 3.0
    w += 1.0
    for name in program.consts:  # the function's own copies, as a closure holds them
        _scramble(f.__globals__[name])
    arrays = [i for i, x in enumerate(xs) if isinstance(x, np.ndarray) and x.size]
    changed = arrays and rng.random() < 0.3
    if changed:
        xs[arrays[0]] += 0.25
    try:
        grads = pullback(YBAR.astype(y.dtype))
    except rb.MutationError:
        if changed:
            return
        raise Mismatch("the pullback refused, but no input was changed") from None
    except rb.RulebridgeError:
        return  # a rule refused at the sweep (allowed, as for grad)
    if changed:
        raise Mismatch("an input was changed after vjp, and the pullback still ran")
    f64 = program.function(np.float64)
    compare(program, grads, lambda *a: np.sum(np.exp(f64(*a) * W) * YBAR))


def _scramble(value: np.ndarray) -> None:
    """Change a constant in place, keeping it valid: floats move, masks flip, indices reverse."""
    if value.dtype.kind == "f":
        value += 1.5
    elif value.dtype.kind == "b":
        np.logical_not(value, out=value)
    else:
        value[...] = value[::-1].copy()


def _copy(x):
    return np.copy(x) if isinstance(x, np.ndarray) else x


def compare(program: Program, grads, f64=None) -> str:
    """`grads` against central differences of the program in float64 (or of `f64`)."""
    f64 = f64 or program.function(np.float64)
    xs = program.inputs_as(np.float64)
    rng = np.random.default_rng(len(program.source))
    rtol = TOLERANCE[program.dtype]
    for _ in range(DIRECTIONS):
        vs = [rng.normal(size=np.shape(x)) for x in xs]
        d1 = _central(f64, xs, vs, STEP)
        d2 = _central(f64, xs, vs, STEP / 2)
        fd = (4 * d2 - d1) / 3
        products = [np.asarray(g, np.float64) * v for g, v in zip(grads, vs)]
        dot = float(sum(np.sum(p) for p in products))
        scale = float(sum(np.sum(np.abs(p)) for p in products)) + abs(fd)
        if abs(d1 - d2) > 1e-3 * (1.0 + scale):
            return "inconclusive"
        if not abs(dot - fd) <= rtol * scale + 1e-9 + 4 * abs(fd - d2):
            raise Mismatch(f"<gradient, v> = {dot!r} but finite differences give {fd!r} "
                           f"(steps {STEP}, {STEP / 2}: {d1!r}, {d2!r})")
    return "pass"


def _central(f, xs, vs, h) -> float:
    plus = f(*[_step(x, v, h) for x, v in zip(xs, vs)])
    minus = f(*[_step(x, v, -h) for x, v in zip(xs, vs)])
    return float((plus - minus) / (2 * h))


def _step(x, v, h):
    moved = x + h * v
    if isinstance(x, np.generic):
        return x.dtype.type(moved)
    if type(x) is float:
        return float(moved)
    return moved


def _same(a, b) -> bool:
    return type(a) is type(b) and np.array_equal(a, b, equal_nan=True) and \
        np.result_type(a) == np.result_type(b)


def _check_like(i, x, g) -> None:
    if isinstance(x, np.ndarray):
        ok = type(g) is np.ndarray and g.shape == x.shape and g.dtype == x.dtype
    else:
        ok = type(g) is type(x)
    if not ok:
        raise Mismatch(f"the gradient of x{i} is {type(g).__name__} "
                       f"{getattr(g, 'dtype', '')}{np.shape(g)}, the input "
                       f"{type(x).__name__} {getattr(x, 'dtype', '')}{np.shape(x)}")

"""Second derivatives of fuzzed programs: a Hessian-vector product `H u`, by forward over
reverse (`jvp` of `grad`) for half the programs and by reverse over reverse (`grad` of
`<grad, u>`) for the other half, against central differences of the gradient along `u`.

The gradient the differences are taken of is first checked itself against central differences
of NumPy's function (check.py's `compare`), so the reference rests on NumPy alone. Programs run
in float64: a second derivative by differences in float32 decides nothing.
"""

from __future__ import annotations

import zlib

import numpy as np

import rulebridge as rb

from .check import STEP, Mismatch, _step, compare, run
from .generate import Program
from .runner import Tally, fuzz

TOLERANCE = 1e-5  # relative, on sum |(H u)_i w_i| + |fd|: the differences are of a gradient


def run_second(program: Program, source: str | None = None) -> str:
    """"pass", "inconclusive" or "error:<class>"; raises `Mismatch` for a wrong result."""
    return run(program, source, mode=_run)


def fuzz_second(n: int, source: str | None = None) -> Tally:
    """`n` programs (the same ones on every run); a wrong Hessian-vector product raises."""
    return fuzz(n, source, mode=_run)


def _run(program: Program, source: str | None) -> str:
    f = program.function(np.float64)
    xs = program.inputs_as(np.float64)
    argnums = tuple(range(len(xs)))
    gradient = rb.grad(f, argnums=argnums, source=source)
    rng = np.random.default_rng(len(program.source) + 2)
    us = [_like(x, rng.normal(size=np.shape(x))) for x in xs]
    forward_over_reverse = zlib.crc32(program.source.encode()) % 2 == 0
    try:
        grads = gradient(*[_copy(x) for x in xs])
        if forward_over_reverse:
            _, hu = rb.jvp(gradient, [_copy(x) for x in xs], us, source=source)
        else:
            hu = rb.grad(lambda *a: _dot(gradient(*a), us), argnums=argnums,
                         source=source)(*[_copy(x) for x in xs])
    except rb.RulebridgeError as exc:
        return "error:" + type(exc).__name__
    first = compare(program, grads, f)  # the reference's gradient, against NumPy's function
    if first != "pass":
        return first
    for i, (x, h) in enumerate(zip(xs, hu)):
        if np.shape(h) != np.shape(x):
            raise Mismatch(f"(H u) for x{i} has shape {np.shape(h)}, x{i} {np.shape(x)}")
    try:
        d1 = _central_gradient(gradient, xs, us, STEP)
        d2 = _central_gradient(gradient, xs, us, STEP / 2)
    except rb.RulebridgeError:
        return "inconclusive"  # a rule refused at a shifted point: no reference there
    ws = [rng.normal(size=np.shape(x)) for x in xs]
    fd = [(4 * b - a) / 3 for a, b in zip(d1, d2)]
    got = _dot(hu, ws)
    want, coarse = _dot(fd, ws), _dot(d2, ws)
    scale = sum(float(np.sum(np.abs(np.asarray(h) * w))) for h, w in zip(hu, ws)) + abs(want)
    if abs(_dot(d1, ws) - coarse) > 1e-3 * (1.0 + scale):
        return "inconclusive"
    if not abs(got - want) <= TOLERANCE * scale + 1e-8 + 4 * abs(want - coarse):
        mode = "jvp of grad" if forward_over_reverse else "grad of <grad, u>"
        raise Mismatch(f"<H u, w> = {got!r} by {mode}, but central differences of the gradient "
                       f"give {want!r} (steps {STEP}, {STEP / 2})")
    return "pass"


def _central_gradient(gradient, xs, us, h) -> list:
    plus = gradient(*[_step(x, u, h) for x, u in zip(xs, us)])
    minus = gradient(*[_step(x, u, -h) for x, u in zip(xs, us)])
    return [(np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * h)
            for p, m in zip(plus, minus)]


def _dot(values, weights) -> float:
    return sum(np.sum(v * w) for v, w in zip(values, weights))


def _like(x, v):
    """A tangent of x's own type: an array, a NumPy scalar or a Python float."""
    if isinstance(x, np.ndarray):
        return np.asarray(v, x.dtype)
    if type(x) is float:
        return float(v)
    return np.result_type(x).type(v)


def _copy(x):
    return np.copy(x) if isinstance(x, np.ndarray) else x

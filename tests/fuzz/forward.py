"""Forward mode on fuzzed programs: `rulebridge.jvp` of each program along random tangents
equals the float64 central difference of the program itself along them, or rulebridge refuses
with one of its own errors. The value must be NumPy's and the caller's arguments NumPy's."""

from __future__ import annotations

import numpy as np

import rulebridge as rb

from .check import STEP, TOLERANCE, Mismatch, _central, _copy, run, same_as_numpy
from .generate import Program
from .runner import Tally, fuzz


def run_forward(program: Program, source: str | None = None) -> str:
    """"pass", "inconclusive" or "error:<class>"; raises `Mismatch` for a wrong result."""
    return run(program, source, mode=_run)


def _run(program: Program, source: str | None) -> str:
    f = program.function()
    xs = [_copy(x) for x in program.inputs]
    rng = np.random.default_rng(len(program.source) + 1)
    vs = [rng.normal(size=np.shape(x)) for x in xs]
    tangents = [np.asarray(v, dtype=np.result_type(x)) if isinstance(x, np.ndarray)
                else type(x)(v) if type(x) is float else np.result_type(x).type(v)
                for x, v in zip(xs, vs)]
    try:
        value, ydot = rb.jvp(f, xs, tangents, source=source)
    except rb.RulebridgeError as exc:
        return "error:" + type(exc).__name__
    same_as_numpy(f, program, value, xs)
    if np.result_type(ydot) != np.result_type(value) or np.shape(ydot) != np.shape(value):
        raise Mismatch(f"the tangent {ydot!r} is not of the value's dtype and shape")
    f64 = program.function(np.float64)
    x64 = program.inputs_as(np.float64)
    t64 = [np.asarray(t, np.float64) for t in tangents]
    d1 = _central(f64, x64, t64, STEP)
    d2 = _central(f64, x64, t64, STEP / 2)
    fd = (4 * d2 - d1) / 3
    got = float(ydot)
    scale = abs(fd) + sum(float(np.sum(np.abs(t))) for t in t64) * 1e-3
    if abs(d1 - d2) > 1e-3 * (1.0 + scale):
        return "inconclusive"
    if not abs(got - fd) <= TOLERANCE[program.dtype] * (abs(fd) + 1.0) + 4 * abs(fd - d2):
        raise Mismatch(f"jvp = {got!r} but finite differences give {fd!r} "
                       f"(steps {STEP}, {STEP / 2}: {d1!r}, {d2!r})")
    return "pass"


def fuzz_forward(n: int, source: str | None = None) -> Tally:
    """`n` programs (the same ones on every run); a wrong tangent raises."""
    return fuzz(n, source, mode=_run)

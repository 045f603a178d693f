"""Fuzzed programs through `rulebridge.jit`: each jitted `value_and_grad` is called at the
program's inputs and then at new ones (nudged, scaled, sign-flipped: some take another branch,
another mask, another loop count), and every result must be the eager `value_and_grad`'s at the
same inputs to the bit, or both must refuse, or jit must refuse the program (JitError). A replay
that returns another number than the eager call is a silently wrong result: `Mismatch`."""

from __future__ import annotations

import numpy as np

import rulebridge as rb

from .check import Mismatch, _copy, run
from .generate import Program
from .runner import Tally, fuzz

FACTORS = (1.0, 1.0007, 0.93, -0.6, 1.0)  # the trace, its check, then replays and re-traces


def _moved(x, factor: float, rng):
    if isinstance(x, np.ndarray) and x.dtype.kind in "fc":
        nudge = 1 + 1e-4 * rng.normal(size=x.shape)
        return (x * factor * nudge).astype(x.dtype)
    if isinstance(x, np.generic) and x.dtype.kind in "fc":
        return x.dtype.type(x * factor)
    if type(x) is float:
        return x * factor
    return x


def _outcome(f, args):
    try:
        return "value", f(*[_copy(a) for a in args])
    except rb.JitError as exc:
        return "refused", exc
    except rb.RulebridgeError as exc:
        return "error", type(exc).__name__
    except (FloatingPointError, ValueError, ZeroDivisionError, np.linalg.LinAlgError) as exc:
        return "numpy", type(exc).__name__


#: How close a back end's replay must be to the eager call: NumPy's is NumPy's to the bit;
#: XLA's kernels are not NumPy's, so JAX's is held to a few hundred ulps of the dtype.
ULPS = {"numpy": 0, "jax": 300}


def _same(a, b, ulps: int = 0, dtype=np.float64) -> bool:
    """Equal to the bit, or (ulps) within that many ulps of the program's dtype: a float64 value
    of a float32 program carries float32 intermediates, each XLA's, not NumPy's."""
    la, sa = _flat(a)
    lb, sb = _flat(b)
    if sa != sb or len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        if type(x) is not type(y):
            return False
        if ulps and type(x) in (float, complex):  # a Python number's gradient: its own type
            x, y = np.asarray(x), np.asarray(y)
        if isinstance(x, (np.ndarray, np.generic)):
            if x.shape != y.shape or x.dtype != y.dtype:
                return False
            eps = max(np.finfo(x.dtype).eps, np.finfo(dtype).eps) if x.dtype.kind in "fc" else 0
            if ulps == 0 or x.dtype.kind not in "fc":
                if x.tobytes() != y.tobytes():
                    return False
            elif not np.allclose(x, y, rtol=ulps * eps, atol=ulps * eps * max(1.0, float(np.max(
                    np.abs(y), initial=0.0))), equal_nan=True):
                return False
        elif not (x == y or (x != x and y != y)):
            return False
    return True


def _flat(tree):
    from rulebridge.tree import tree_flatten

    return tree_flatten(tree)


def run_jit(program: Program, source: str | None = None, backend: str = "numpy") -> str:
    return run(program, source, mode=lambda p, s: _run(p, s, backend))


def _run(program: Program, source: str | None, backend: str = "numpy") -> str:
    f = program.function()
    argnums = tuple(range(len(program.inputs)))
    eager = rb.value_and_grad(f, argnums=argnums, source=source)
    jitted = rb.jit(rb.value_and_grad(f, argnums=argnums, source=source), backend=backend)
    rng = np.random.default_rng(len(program.source))
    outcomes = []
    with np.errstate(all="ignore"):
        for factor in FACTORS:
            args = [_moved(x, factor, rng) for x in program.inputs]
            got = _outcome(jitted, args)
            if got[0] == "refused":
                return "refused"
            expected = _outcome(eager, args)
            # (Both refusing is alike whatever the class: the first call's check may settle the
            # key's verdict, so the second refuses as failed what the first found unverified.)
            if got[0] != expected[0] or (got[0] == "numpy" and got[1] != expected[1]):
                raise Mismatch(f"at inputs x{factor}: jit gave {got!r}, eager {expected!r}")
            if got[0] == "value" and not _same(got[1], expected[1], ULPS[backend],
                                               program.dtype):
                raise Mismatch(f"at inputs x{factor}: jit gave {got[1]!r}, eager gave "
                               f"{expected[1]!r}")
            outcomes.append(got[0])
    if jitted.replays == 0:
        return "traced only"
    return "pass" if all(o == "value" for o in outcomes) else "raised alike"


def fuzz_jit(n: int, source: str | None = None, backend: str = "numpy") -> Tally:
    """`n` programs (the same ones on every run); a replay that differs raises."""
    return fuzz(n, source, mode=lambda p, s: _run(p, s, backend))

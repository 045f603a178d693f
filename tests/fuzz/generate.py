"""Random NumPy programs as Python source, drawn with hypothesis.

A program is built one statement at a time on concrete float64 sample inputs: each candidate
statement is executed right away, so shapes need no inference and a statement that leaves the safe
domain (non-finite, huge) or comes too close to a kink (a tie in `max`, `abs` near 0, a branch
condition near its threshold) is dropped and another is drawn. The result is plain source text
that runs unmodified on ndarrays (for finite differences) and on rulebridge's boxes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

MAX_SIZE = 48  # elements in any value
MAX_ABS = 40.0  # largest magnitude a value may reach
KINK_MARGIN = 0.03  # minimum distance from a kink, tie or branch threshold
DTYPES = (np.float64, np.float32)


@dataclass
class Program:
    source: str
    dtype: type
    inputs: list  # in the program's dtype: ndarrays, NumPy scalars or Python floats
    consts: dict  # name -> float64 ndarray (cast to the dtype when run), or bool/int array
    ops: list = field(default_factory=list)  # catalog names used, for the report

    def function(self, dtype: type | None = None) -> Callable:
        """The program as a Python function, its float constants cast to `dtype`."""
        dtype = dtype or self.dtype
        namespace: dict[str, Any] = {"np": np}
        for name, value in self.consts.items():
            namespace[name] = value.astype(dtype) if value.dtype.kind == "f" else value
        exec(compile(self.source, "<fuzzed program>", "exec"), namespace)
        return namespace["program"]

    def inputs_as(self, dtype: type) -> list:
        return [_cast(x, dtype) for x in self.inputs]

    def __str__(self) -> str:
        lines = [self.source, f"# dtype: {np.dtype(self.dtype).name}"]
        for i, x in enumerate(self.inputs):
            lines.append(f"# x{i} = {_literal(x)}")
        for name, value in self.consts.items():
            lines.append(f"# {name} = {_literal(value)}")
        return "\n".join(lines)


def _cast(x, dtype):
    if isinstance(x, np.ndarray):
        return x.astype(dtype)
    if isinstance(x, np.generic):
        return np.dtype(dtype).type(x)
    return x  # a Python float stays a Python float


def _copy(x):
    return np.copy(x) if isinstance(x, np.ndarray) else x


def _literal(x) -> str:
    if isinstance(x, np.ndarray):
        return f"np.array({np.array2string(x, separator=', ', precision=17, threshold=10**6)}, " \
               f"dtype=np.{x.dtype.name})"
    return repr(x)


class Builder:
    """Draws and executes statements; `catalog.STEPS` calls back into it."""

    def __init__(self, draw, dtype) -> None:
        self.draw = draw
        self.dtype = dtype
        self.env: dict[str, Any] = {"np": np}
        self.vars: list[str] = []
        self.inputs: dict[str, Any] = {}  # name -> float64 value at entry
        self.consts: dict[str, np.ndarray] = {}
        self.lines: list[str] = []
        self.ops: list[str] = []

    # -- drawing ---------------------------------------------------------------------------

    def choice(self, options):
        return self.draw(st.sampled_from(list(options)))

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def coin(self) -> bool:
        return self.draw(st.booleans())

    def permutation(self, n: int) -> list[int]:
        return self.draw(st.permutations(range(n)))

    def var(self, accept: Callable[[Any], bool] = lambda v: True) -> str | None:
        names = [n for n in self.vars if accept(self.env[n])]
        if not names:
            return None
        if len(names) > 2 and self.coin():  # favour recent values: deeper compositions
            names = names[-2:]
        return self.choice(names)

    def value(self, name: str):
        return self.env[name]

    def const(self, shape: tuple, kind: str = "normal") -> str:
        seed = self.integer(0, 2**16)
        rng = np.random.default_rng(seed)
        if kind == "mask":
            value = rng.random(shape) < 0.5
        elif kind == "index":
            value = rng.integers(0, shape[1], size=shape[0])
        else:
            value = rng.normal(size=shape)
            value = value.astype(self.dtype).astype(np.float64)
        name = f"c{len(self.consts)}"
        self.consts[name] = value
        self.env[name] = value
        return name

    def fixed(self, value: np.ndarray) -> str:
        """A constant of the given (float64) value."""
        name = f"c{len(self.consts)}"
        self.consts[name] = self.env[name] = np.asarray(value, np.float64)
        return name

    def partner(self, shape: tuple, grow: bool = True) -> str:
        """A variable or constant whose shape broadcasts with `shape`; with `grow=False`, to
        `shape` itself (what an in-place update needs)."""
        def fits(v):
            try:
                result = np.broadcast_shapes(np.shape(v), shape)
            except ValueError:
                return False
            return np.prod(result) <= MAX_SIZE if grow else result == shape

        if self.coin():
            name = self.var(fits)
            if name is not None:
                return name
        if grow:
            options = [shape, (), shape[1:], tuple(1 if self.coin() else d for d in shape)]
        else:
            options = [shape, (), shape[1:], shape[-1:]]
        return self.const(self.choice(options))

    # -- emitting --------------------------------------------------------------------------

    def emit(self, code: str, margins: tuple[Callable[[dict], float], ...] = (),
             mutates: bool = False) -> bool:
        """Try `code` (statements assigning the next variable, `{out}` in it): keep it when it
        runs, stays finite and small, and keeps `KINK_MARGIN` away from every kink. Code that
        `mutates` arrays in place is undone on failure by replaying the kept statements."""
        out = f"v{len(self.vars)}"
        code = code.replace("{out}", out)
        env = dict(self.env)
        try:
            with np.errstate(all="raise"):
                if any(margin(env) < KINK_MARGIN for margin in margins):
                    return False
                exec(code, env)
            ok = _acceptable(env.get(out)) and all(_acceptable(env[v]) for v in self.vars)
        except Exception:  # not a valid NumPy program on these values: draw another statement
            ok = False
        if not ok:
            if mutates:
                self._replay()
            return False
        self.env = env
        self.lines.extend(code.splitlines())
        self.vars.append(out)
        return True

    def _replay(self) -> None:
        """Rebuild the values from fresh inputs and constants by running the kept statements."""
        env = {"np": np, **{name: np.copy(value) for name, value in self.consts.items()}}
        env.update({name: _copy(value) for name, value in self.inputs.items()})
        exec("\n".join(self.lines), env)
        self.env = env


def _acceptable(value) -> bool:
    if not isinstance(value, (np.ndarray, np.generic, float)):
        return False
    value = np.asarray(value)
    return (value.dtype.kind == "f" and value.size <= MAX_SIZE and value.ndim <= 4
            and bool(np.all(np.isfinite(value)))
            and float(np.max(np.abs(value), initial=0)) < MAX_ABS)


# -- inputs --------------------------------------------------------------------------------

def _input(draw, dtype, rng):
    kind = draw(st.sampled_from(["array", "array", "array", "array", "0-d", "numpy scalar",
                                 "python float"]))
    if kind == "python float":
        return float(rng.normal())
    if kind == "numpy scalar":
        return np.dtype(dtype).type(rng.normal())
    if kind == "0-d":
        return np.asarray(rng.normal(), dtype=dtype)
    ndim = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 4)) for _ in range(ndim)]
    if draw(st.integers(0, 15)) == 0:  # no elements: writes and views of it must still work
        shape[draw(st.integers(0, ndim - 1))] = 0
    return rng.normal(size=tuple(shape)).astype(dtype)


@st.composite
def programs(draw, max_steps: int = 9) -> Program:
    from .catalog import STEPS

    dtype = draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    inputs = [_input(draw, dtype, rng) for _ in range(draw(st.integers(1, 3)))]
    builder = Builder(draw, dtype)
    for i, x in enumerate(inputs):
        name = f"x{i}"
        builder.inputs[name] = _cast(x, np.float64)
        builder.env[name] = _cast(x, np.float64)
        builder.vars.append(name)
    n_steps = draw(st.integers(1, max_steps))
    attempts = 0
    while len(builder.ops) < n_steps and attempts < 6 * n_steps:
        attempts += 1
        op = draw(st.sampled_from(sorted(STEPS)))
        if STEPS[op](builder):
            builder.ops.append(op)
    out = builder.vars[-1]
    weights = builder.const(np.shape(builder.value(out)))
    terms = [f"np.sum({out} * {weights})"]
    if builder.coin() and len(builder.vars) > 1:  # an earlier value used twice: accumulation
        terms.append(f"0.5 * np.sum(np.sin({builder.choice(builder.vars[:-1])}))")
    args = ", ".join(f"x{i}" for i in range(len(inputs)))
    body = "\n".join("    " + line for line in builder.lines + ["return " + " + ".join(terms)])
    source = f"def program({args}):\n{body}"
    return Program(source, dtype, inputs, builder.consts, builder.ops)

"""The JAX back end of `rulebridge.jit`: a recorded program staged into `jax.jit`.

`rulebridge.jit(f, backend="jax")` records `f`'s program as the NumPy back end does (its first
call at a key is the eager call). `stage(jitted, variant)` then lowers the program's forward ops
to one jax.numpy function of the tape's inputs (lowering.py), applies the transformation with
JAX (`jax.grad` for grad and value_and_grad, `jax.jacrev` for jacobian; a hessian's program
already holds the gradient's ops, recorded at the higher level, so it is `jax.jacrev` of that)
and hands it to `jax.jit`. A replay calls the compiled function, so the recorded program's
decisions (branches, lengths, int() values, masks) are computed inside it as extra outputs and
compared on the host after the call: a different answer raises `GuardFailed` and the jitted
function records the new path; the staged value is never returned then. Decisions on shapes
and dtypes are fixed by the key and checked once, at staging.

The result is built as the NumPy back end builds it (`Variant.replay`: structures, types, the
caller's ownership), from the staged values converted to NumPy with the recorded types and
dtypes; a dtype that differs (float64 computed as float32) runs the eager call instead. Every
trace and call is inside `jax.enable_x64(True)`, as the adapter's pullbacks are, so float64
stays float64 without the user's global configuration. Complex inputs are staged too: JAX's
gradient of a real function of complex values is rulebridge's (df/dx - i df/dy, the convention
autograd shares), and a callback op's pullback is a rulebridge rule's, in that convention
(tests/jit/test_jit_jax_complex.py compares them with the eager call). Values agree with the eager
call to about 1e-12 relative, not to the bit: XLA's kernels are not NumPy's. The first replay
of each program is compared with the eager call at `RTOL` (jitted.py's check for randomness).

The program is staged at a variant's first replay (the variant keeps no values of its trace),
so that replay pays the lowering and XLA's compile. `jax_function(jitted, *args)` hands out the staged program as a JAX function (jax.vmap,
devices): see its docstring.
"""

from __future__ import annotations

import copy
import weakref
from typing import Any, Callable

import jax
import numpy as np

import rulebridge
from rulebridge.jit import BACKENDS, GuardFailed, Mismatch

from .lowering import Lowered

RTOL = 1e-9  # the first replay against the eager call (float32: 1e3 ulps); a draw differs by more
_ASKED = {"bool": bool, "len": len, "shape": np.shape, "ndim": np.ndim, "size": np.size,
          "dtype": lambda v: v.dtype if hasattr(v, "dtype") else np.result_type(v),
          "int": int, "index": lambda v: int(np.asarray(v))}
_METADATA = (np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj)
_STATIC = ("len", "shape", "ndim", "size", "dtype")
_LAST: "weakref.WeakKeyDictionary[Any, StagedVariant]" = weakref.WeakKeyDictionary()


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (np.ndarray, np.generic)) or isinstance(b, (np.ndarray, np.generic)):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    return type(a) is type(b) and (a == b or (a != a and b != b))


def _stand_in(value: Any) -> Any:
    """A NumPy value of a tracer's shape and dtype, with no memory of its own."""
    return np.broadcast_to(np.zeros((), value.dtype), value.shape)


class JaxProgram:
    """What `Variant.replay` reads of a `Program` (`inputs`, `outputs`, `run`), computed by one
    jax-jitted function."""

    def __init__(self, variant, leaves: list) -> None:
        program, spec = variant.program, variant.spec
        self.inputs, self.outputs = program.inputs, program.outputs
        self.wanted = [] if spec.kind == "plain" else list(program.wanted)
        self.seeded = list(program.seeded) if spec.kind != "plain" else []
        self.kind = spec.kind
        self.decisions = list(program.decisions)
        self.leaves = [(type(leaf), np.result_type(leaf), np.shape(leaf)) for leaf in leaves]
        self.eps = _least_precise(leaves, program.entries)
        self.lowered = Lowered(program, leaves)
        values, _ = program.run(leaves)  # the recorded types of the outputs
        self.types = [(type(v), np.result_type(v)) for v in values]
        self.dynamic: list[tuple[int, str]] = []  # (decision index, kind) checked per call
        self.calls = 0  # how many replays the compiled function answered
        with jax.enable_x64(True):  # compiled ahead of time: the first replay runs at once
            self.compiled = jax.jit(self.core).lower(leaves).compile()

    # -- the staged function ---------------------------------------------------------------------

    def forward(self, values) -> tuple:
        env = self.lowered(values)
        outputs = tuple(env[v] for v in self.outputs)
        seeded = tuple(env[v] for v in self.seeded)
        dynamic, extras = [], []
        for d, (position, var, kind, outcome, call) in enumerate(self.decisions):
            if call is not None:
                answer = self._rerun(call, var, env, outcome)
            elif kind in _STATIC:
                answer = _ASKED[kind](_stand_in(env[var]))
            else:
                dynamic.append((d, kind))
                extras.append(env[var])
                continue
            if isinstance(answer, jax.core.Tracer):
                dynamic.append((d, "value"))
                extras.append(answer)
            elif not _same(_plain(answer), outcome):
                raise rulebridge.JitError(
                    f"rulebridge.jit(backend=\"jax\"): the staged program decides decision {d} "
                    f"otherwise than the recorded one ({answer!r}, recorded {outcome!r}).",
                    fix='rulebridge.jit(f, backend="numpy")')
        self.dynamic = dynamic
        return outputs, seeded, tuple(extras)

    def _rerun(self, call, var, env, outcome) -> Any:
        rule, args, kwargs = call
        if rule.function in _METADATA:  # answers from shapes and dtypes: NumPy's own, static
            return rule.function(*[_stand_in(env[v]) if type(v) is int else a
                                   for a, v in zip(args, var)], **dict(kwargs or {}))
        return self.lowered.call(call, var, env, outcome)

    def core(self, values) -> tuple:
        if self.kind == "plain" or not self.seeded:  # (a result no op computed: no sweep)
            outputs, _, extras = self.forward(values)
            return outputs, extras, ()
        where = [self.inputs.index(v) for v in self.wanted]

        def of_wanted(wanted):
            vals = list(values)
            for i, w in zip(where, wanted):
                vals[i] = w
            outputs, seeded, extras = self.forward(vals)
            head = seeded[0] if self.kind != "jacobian" else seeded
            return head, (outputs, extras)

        wanted = [values[i] for i in where]
        transform = jax.jacrev if self.kind == "jacobian" else jax.grad
        derivative, (outputs, extras) = transform(of_wanted, has_aux=True)(wanted)
        return outputs, extras, derivative

    # -- a replay --------------------------------------------------------------------------------

    def run(self, inputs: list) -> tuple:
        with jax.enable_x64(True):
            outputs, extras, derivative = self.compiled(inputs)
        self.calls += 1
        for (d, kind), value in zip(self.dynamic, extras):
            if not self.decided(d, kind, value):
                raise GuardFailed(d)
        values = [_as_recorded(v, t, dtype) for v, (t, dtype) in zip(outputs, self.types)]
        return values, self._backward(derivative)

    def decided(self, d: int, kind: str, value: Any) -> bool:
        """Does a staged value (one of `core`'s extras, for `self.dynamic`'s entry (d, kind))
        decide decision d as the recorded program did?"""
        answer = _plain(value) if kind == "value" else _ASKED[kind](np.asarray(value))
        return _same(answer, self.decisions[d].outcome)

    def _backward(self, derivative) -> Callable:
        leaves = {var: self.leaves[self.inputs.index(var)] for var in self.wanted}

        def backward(seeds: dict) -> dict:
            (var, seed), = seeds.items()
            seed = np.asarray(seed)
            hot = np.flatnonzero(seed)
            if len(hot) != 1 or seed.flat[hot[0]] != 1:
                raise Mismatch
            if self.kind == "jacobian":
                rows = derivative[self.seeded.index(var)]
            else:
                rows = derivative
            cts = {}
            for w, row in zip(self.wanted, rows):
                t, dtype, shape = leaves[w]
                row = np.asarray(row).reshape((seed.size,) + shape)[hot[0]]  # (size 0 too)
                cts[w] = _as_recorded(row, t, dtype)
            return cts

        return backward


def _least_precise(leaves: list, entries: list) -> float:
    """The largest epsilon of a float or complex dtype among the program's inputs and the
    arrays, scalars and dtypes its ops were called with (`x.astype(np.float32)`): a float64
    result may carry float32 intermediates, each XLA's and not NumPy's."""
    eps = 0.0
    values = list(leaves) + [a for entry in entries for a in entry[1]]
    values += [v for entry in entries if entry[2] for v in dict(entry[2]).values()]
    for value in values:
        if isinstance(value, (np.ndarray, np.generic)):
            dtype = value.dtype
        elif isinstance(value, np.dtype) or (isinstance(value, type)
                                             and issubclass(value, np.inexact)):
            dtype = np.dtype(value)
        else:
            continue
        if dtype.kind in "fc":
            eps = max(eps, float(np.finfo(dtype).eps))
    return eps


def _plain(value: Any) -> Any:
    if isinstance(value, jax.Array):
        value = np.asarray(value)
        return value[()] if value.ndim == 0 else value
    return value


def _as_recorded(value: Any, t: type, dtype: np.dtype) -> Any:
    """A staged value as NumPy's: the recorded type and dtype, an array of its own, or
    Mismatch (the eager call runs instead)."""
    array = np.array(value)
    if array.dtype != dtype:
        raise Mismatch
    if t is np.ndarray:
        return array
    if issubclass(t, np.generic):
        return array[()]
    return t(array[()])


class StagedVariant:
    """The variant a JAX back end's replay answers with: the recorded one, its program staged."""

    def __init__(self, jitted, variant) -> None:
        self.jitted = weakref.ref(jitted)
        self.variant = variant
        self.replayed = copy.copy(variant)
        self.program: JaxProgram | None = None  # staged at the first replay, on its leaves

    def ensure(self, flat: list) -> "JaxProgram":
        """The staged program, lowered and compiled on these arguments' leaves if not yet."""
        if self.program is None:
            leaves = [flat[i][k] for i, k in self.variant.slots]
            self.replayed.program = self.program = JaxProgram(self.variant, leaves)
        return self.program

    def replay(self, args: tuple, flat: list) -> Any:
        self.ensure(flat)
        result = self.replayed.replay(args, flat)
        jitted = self.jitted()
        if jitted is not None:
            _LAST[jitted] = self
        return result

    def difference(self, a: Any, b: Any) -> str | None:
        """Where a staged result differs from the eager one by more than RTOL (or 1e3 ulps of
        the least precise float dtype the program computes in), or None."""
        eps = self.program.eps if self.program is not None else 0.0
        from rulebridge.tree import tree_flatten

        la, sa = tree_flatten(a)
        lb, sb = tree_flatten(b)
        if sa != sb:
            return "their structures"
        for n, (x, y) in enumerate(zip(la, lb)):
            if type(x) is not type(y) or np.shape(x) != np.shape(y):
                return f"leaf {n}: {type(x).__name__} {np.shape(x)} vs {type(y).__name__} " \
                       f"{np.shape(y)}"
            if isinstance(y, (np.ndarray, np.generic, float, complex)):
                scale = np.max(np.abs(y), initial=0.0)
                dtype = np.result_type(y)
                rtol = max(RTOL, 1e3 * np.finfo(dtype).eps, 1e3 * eps) \
                    if dtype.kind in "fc" else RTOL
                if not np.allclose(x, y, rtol=rtol, atol=rtol * scale, equal_nan=True):
                    return f"leaf {n}"
            elif x != y:
                return f"leaf {n}: {x!r} vs {y!r}"
        return None


def stage(jitted, variant) -> StagedVariant:
    """`BACKENDS["jax"]`: the variant's program, staged into jax.jit (see the module)."""
    staged = StagedVariant(jitted, variant)
    _LAST[jitted] = staged
    return staged


BACKENDS["jax"] = stage

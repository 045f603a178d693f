"""The public entry points: grad, value_and_grad, vjp, trace."""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from .checking.debug import CheckingRegistry, enabled as debug_enabled
from .engine.box import Traced
from .engine.collector import collector_paused
from .engine.sweep import backward
from .engine.tape import Tape
from .errors import NestedDifferentiationError
from .rules.registry import REGISTRY
from .rules.signature import is_differentiable
from .writes import ROUTES

_ndarray = np.ndarray


def grad(f: Callable, argnums: int | Sequence[int] = 0, *, source: str | None = None) -> Callable:
    """The gradient of scalar-valued `f` with respect to `args[argnums]` (a tuple of gradients
    when `argnums` is a tuple), each with its argument's shape and dtype."""
    value_and_grad_f = value_and_grad(f, argnums, source=source)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        return value_and_grad_f(*args, **kwargs)[1]

    return grad_f


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, *,
                   source: str | None = None) -> Callable:
    """Like `grad`, returning `(f(*args), gradient)`."""

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        with collector_paused:
            return _value_and_grad(f, argnums, source, args, kwargs)

    return value_and_grad_f


def _value_and_grad(f, argnums, source, args, kwargs):
    positions = _positions(f, argnums, len(args))
    for i in positions:
        _check_differentiable(f, i, args[i])
    tape = new_tape(source)
    boxed = list(args)
    for i in positions:
        boxed[i] = tape.new_input(args[i])
    try:
        result = f(*boxed, **kwargs)
    finally:
        tape.close()
    if tape.effects is not None:
        tape.effects.check_result(result)
    value = _scalar_output(f, result, tape)
    tape.shed_large_values()
    seeds = {}
    if type(result) is Traced:
        seeds[result._var] = _one_like(value)
    cts = backward(tape, seeds) if seeds else {}
    grads = tuple(_as_argument(cts.get(var), args[i], args)
                  for i, var in zip(positions, tape.inputs))
    return value, (grads if isinstance(argnums, (tuple, list)) else grads[0])


def vjp(f: Callable, *args: Any, source: str | None = None):
    """`(y, pullback)`: `y = f(*args)` and `pullback(ybar)` giving one cotangent per positional
    argument (None for an argument that is not a float or complex array or scalar)."""
    tape, boxed_args, result = _run_traced(f, args, source)
    y = _unbox(result, tape)
    tape.shed_large_values()

    def pullback(ybar):
        seeds: dict[int, Any] = {}
        _seed(result, ybar, seeds, f)
        with collector_paused:
            cts = backward(tape, seeds) if seeds else {}
        return tuple(_as_argument(cts.get(b._var), a, args + (ybar,)) if type(b) is Traced else None
                     for a, b in zip(args, boxed_args))

    return y, pullback


def trace(f: Callable, *args: Any, source: str | None = None):
    """`(y, tape)`: run `f` once, recording every op; `print(tape)`, `tape.replay(*new_args)`."""
    tape, _, result = _run_traced(f, args, source)
    y = _unbox(result, tape)
    tape.outputs = _variables(result)
    return y, tape


# -- helpers ----------------------------------------------------------------------------------


def new_tape(source: str | None = None) -> Tape:
    """A tape that records writes, looking rules up in the process's registry (through debug
    mode's checks when it is on: read once per tape, so the per-op path is the same either
    way)."""
    registry = CheckingRegistry(REGISTRY) if debug_enabled() else REGISTRY
    return Tape(source, registry, ROUTES)


def _run_traced(f, args, source):
    tape = new_tape(source)
    boxed = tuple(tape.new_input(a) if _boxable(a) else a for a in args)
    for a in args:
        if type(a) is Traced:
            raise _nested(f)
    try:
        with collector_paused:
            result = f(*boxed)
    finally:
        tape.close()
    if tape.effects is not None:
        tape.effects.check_result(result)
    return tape, boxed, result


def _positions(f, argnums, n_args) -> tuple[int, ...]:
    positions = tuple(argnums) if isinstance(argnums, (tuple, list)) else (argnums,)
    for i in positions:
        if not isinstance(i, int) or not -n_args <= i < n_args:
            raise TypeError(f"argnums={argnums!r} for {_name(f)} called with {n_args} positional "
                            f"argument(s)")
    return tuple(i % n_args for i in positions)


def _boxable(x) -> bool:
    """A differentiable value of a type the rules are keyed by: an exact ndarray (not
    np.matrix or a masked array, whose semantics NumPy's functions do not follow, nor another
    library's array), a NumPy scalar or a Python float or complex."""
    return (type(x) is _ndarray or isinstance(x, (np.generic, float, complex))) \
        and is_differentiable(x)


def _check_differentiable(f, i, x) -> None:
    if type(x) is Traced:
        raise _nested(f)
    if _boxable(x):
        return
    if isinstance(x, _ndarray):
        what = (f"an {type(x).__name__}" if type(x) is not _ndarray
                else f"an array of dtype {x.dtype}")
        fix = ("np.asarray(x) for an np.matrix, x.filled() for a masked array"
               if type(x) is not _ndarray else "x.astype(np.float64)")
    else:
        what, fix = f"a {type(x).__name__}", "np.asarray(x, dtype=np.float64) or a float"
    raise TypeError(f"cannot differentiate {_name(f)} with respect to argument {i}: it is {what}. "
                    f"Gradients are defined for float and complex ndarrays and scalars; pass "
                    f"{fix}, or leave this argument out of argnums.")


def _scalar_output(f, result, tape):
    value = _unbox(result, tape)
    # Attribute reads, not np.shape / np.iscomplexobj: NumPy's dispatch on a NumPy scalar costs
    # more than a small program's whole sweep.
    if isinstance(value, (_ndarray, np.generic)):
        shape, is_complex = value.shape, value.dtype.kind == "c"
    elif isinstance(value, (float, int, complex)):
        shape, is_complex = (), type(value) is complex
    else:
        shape, is_complex = None, False
    if shape != ():
        kind = (f"an array of shape {shape}" if shape is not None else f"a {type(value).__name__}")
        raise TypeError(f"grad requires {_name(f)} to return a scalar (shape ()), but it returned "
                        f"{kind}. Reduce it (np.sum, a loss) or use rulebridge.vjp for "
                        "non-scalar outputs.")
    if is_complex:
        raise TypeError(f"grad requires {_name(f)} to return a real scalar, but it returned a "
                        f"complex {np.result_type(value)}; differentiate its real part, abs or "
                        "abs**2, or use rulebridge.vjp.")
    return value


def _one_like(value):
    if isinstance(value, _ndarray):
        return np.ones_like(value)
    if isinstance(value, np.generic):
        return value.dtype.type(1)
    return np.float64(1.0)  # a Python float or int (a complex result was refused above)


def _unbox(result, tape):
    if type(result) is Traced:
        if result._tape is not tape:
            raise _nested(None)
        return tape.protected.unprotected(result._value)  # f returned its argument: the caller's array
    if isinstance(result, (tuple, list)):
        items = [_unbox(r, tape) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result


def _variables(result):
    """The result with each box replaced by its variable (what `Tape.replay` returns)."""
    if type(result) is Traced:
        return result._var
    if isinstance(result, (tuple, list)):
        items = [_variables(r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result


def _seed(result, ybar, seeds, f):
    if type(result) is Traced:
        expected = result._value
        if np.shape(ybar) != np.shape(expected):
            raise ValueError(f"the cotangent given to the pullback of {_name(f)} has shape "
                             f"{np.shape(ybar)}, but the output has shape {np.shape(expected)}")
        ybar = np.asarray(ybar, dtype=np.result_type(expected))
        if isinstance(expected, (np.generic, float, complex)):
            ybar = ybar[()]
        seeds[result._var] = ybar
    elif isinstance(result, (tuple, list)):
        if not isinstance(ybar, (tuple, list)) or len(ybar) != len(result):
            raise ValueError(f"{_name(f)} returned {len(result)} outputs; give the pullback a "
                             f"tuple of {len(result)} cotangents (None for an unused output)")
        for r, g in zip(result, ybar):
            if g is not None:
                _seed(r, g, seeds, f)


def _as_argument(ct, arg, callers_arrays=()):
    """The cotangent in the argument's own type: array, NumPy scalar or Python scalar. An array
    is the caller's to keep and modify: never a read-only view (a JAX array, a broadcast) nor an
    alias of an array the caller passed in."""
    if ct is None:
        ct = np.zeros_like(arg)
    if isinstance(arg, _ndarray):
        ct = ct if type(ct) is _ndarray else np.asarray(ct)
        if not ct.flags.writeable or any(np.may_share_memory(ct, a) for a in callers_arrays
                                         if type(a) is _ndarray):
            ct = ct.copy()
        return ct
    if isinstance(arg, np.generic):
        return arg.dtype.type(ct)
    return type(arg)(ct[()] if isinstance(ct, _ndarray) else ct)


def _name(f) -> str:
    return getattr(f, "__qualname__", None) or repr(f)


def _nested(f) -> NestedDifferentiationError:
    return NestedDifferentiationError(
        f"{_name(f) if f else 'a function'} was differentiated with traced arguments: nested "
        "differentiation (grad of a function that calls grad or vjp) is not supported by "
        "rulebridge. Differentiate once, or compute the inner derivative in closed form.")

"""Every way NumPy code writes into an array, routed to the one recorded write (`mutation.setitem`).

In-place operators and `out=` compute the result with the ordinary recorded op (`x += y` records
`np.add(x, y)`), then write it into the target, so every source's rules serve mutating code
unchanged: mutation is the engine's job, not a source's. Buffers allocated from a traced array
(`np.zeros_like(x)`, `np.empty(shape, like=x)`) come back as boxes through the engine's own
allocation rules, so writes into them are recorded too. What cannot be recorded is refused here
with the fix: a plain ndarray as `out=` of traced inputs, `ufunc.at`, `np.put` and friends.
"""

from __future__ import annotations

import inspect
import operator

import numpy as np

from ..engine.hooks import Writes
from ..errors import MutationError, TracingError
from ..rules.levels import primal
from ..rules.rule import Rule, function_name
from ..rules.signature import SpecInfo
from .indices import contains_box
from .nested import nested_setitem, stored_back, writes_lower_level
from .untake import NESTED_PULLBACKS, nested_getitem_rule, untake, untake_rule
from .views import VIEWS
from .write import _refuse_nested, _write_rule, setitem as first_order_setitem

_ndarray = np.ndarray

PLAIN_BUFFER_FIX = ("allocate the buffer inside the differentiated code by calling np.zeros(...), "
                    "np.empty, np.ones or np.full there, which rulebridge follows while it "
                    "traces (not a buffer made before the trace, by a library or compiled code, "
                    "through another name such as `from numpy import zeros` or getattr, or with "
                    "rulebridge.follow_plain_buffers(False)), or from a traced array: "
                    "np.zeros_like(x), np.empty_like(x), np.ones_like(x), np.full_like(x, c), "
                    "or np.zeros(shape, like=x) / np.empty(shape, like=x)")


# -- x[index] = value ----------------------------------------------------------------------------


def setitem(box, index, value, what: str | None = None):
    """`box[index] = value`, recorded: write.py's in-place write at the first order,
    nested.py's copy where the write reaches values of an enclosing differentiation."""
    if contains_box(index, type(box)):
        raise TracingError("an index holding a traced value: indices carry no gradient, compute "
                           "them from plain arrays (or compare: x[y > 0] = v)")
    if not writes_lower_level(box, value):
        return first_order_setitem(box, index, value, what)
    if type(value) is type(box) and value._tape.level > box._tape.level:
        _refuse_nested(what, index, box)  # an inner value escaping into an outer array
    return nested_setitem(box, index, value, what)


# -- in-place operators ---------------------------------------------------------------------------


_SYMBOLS = {np.add: "+=", np.subtract: "-=", np.multiply: "*=", np.divide: "/=", np.power: "**=",
            np.floor_divide: "//=", np.remainder: "%=", np.matmul: "@="}


def augmented(function, box, other):
    """`x += y` and friends: `np.add(x, y)` recorded, then written into `x` (NumPy scalars are
    immutable, so for them `x += y` just rebinds the name)."""
    result = function(box, other)
    target = box._value if type(box._value) is _ndarray else primal(box)
    if type(target) is not _ndarray:
        return result
    _check_cast(function, result, target, "same_kind")
    _check_shape(function, result, target)
    if target.base is not None and writes_lower_level(box, result) and stored_back():
        return result  # `x[index] op= y` at a nested level: the store writes x (nested.py)
    return setitem(box, Ellipsis, result, what=f"x {_SYMBOLS[function]} y")


def fill(self, value):
    """`x.fill(v)`: returns None, like NumPy."""
    setitem(self, Ellipsis, value, what="x.fill(v)")


# -- out= -----------------------------------------------------------------------------------------


def ufunc_out(box, ufunc, inputs, kwargs):
    """`np.exp(x, out=buf)`, `np.multiply(x, y, out=buf)`, `np.add.reduce(x, out=buf)`."""
    name = function_name(ufunc)
    kwargs = dict(kwargs)
    outs = kwargs.pop("out")
    outs = outs if type(outs) is tuple else (outs,)
    where = kwargs.get("where", True)
    if where is not True:
        raise MutationError(
            f"{name}(..., out=..., where=...) on traced values is not supported: write "
            "out[mask] = f(x)[mask] (or np.where(mask, f(x), out)) instead.")
    box_type = type(box)
    traced = any(type(a) is box_type for a in inputs)
    for out in outs:
        if out is not None and type(out) is not box_type:
            _refuse_plain_out(name, out, traced)
    if traced:
        result = box._tape.record(ufunc, inputs, kwargs)
    else:
        result = ufunc(*inputs, **kwargs)
    results = result if len(outs) > 1 else (result,)
    casting = kwargs.get("casting", "same_kind")
    written = []
    for out, r in zip(outs, results):
        if out is None:
            written.append(r)
            continue
        _check_cast(ufunc, r, out._value, casting)
        _check_shape(ufunc, r, out._value)
        written.append(setitem(out, Ellipsis, r, what=f"{name}(..., out=...)"))
    return tuple(written) if len(outs) > 1 else written[0]


def function_out(box, func, types, args, kwargs):
    """`np.sum(x, axis=0, out=buf)`, `np.clip(x, 0, 1, out=x)`: the result, then the write."""
    name = function_name(func)
    rest = {k: v for k, v in kwargs.items() if k != "out"}
    out = kwargs["out"]
    if type(out) is tuple and len(out) == 1:
        out = out[0]
    if type(out) is not type(box):
        _refuse_plain_out(name, out, True)
    result = box.__array_function__(func, types, args, rest)
    if np.shape(result) != out.shape:
        raise ValueError(f"{name}: the output array has shape {out.shape}, the result has shape "
                         f"{np.shape(result)}")
    return setitem(out, Ellipsis, result, what=f"{name}(..., out=...)")


def _check_cast(function, result, target, casting):
    dtype = np.result_type(primal(result))
    if not np.can_cast(dtype, target.dtype, casting):
        raise TypeError(f"Cannot cast {function_name(function)} output from {dtype!r} to "
                        f"{target.dtype!r} with casting rule {casting!r}")


def _check_shape(function, result, target):
    """NumPy's rule for an output operand: the result broadcasts to it, never the reverse."""
    shape = np.shape(primal(result))
    if shape != target.shape and np.broadcast_shapes(shape, target.shape) != target.shape:
        raise ValueError(f"{function_name(function)}: non-broadcastable output operand with shape "
                         f"{target.shape} doesn't match the broadcast shape {shape}")


def _refuse_plain_out(name, out, traced):
    if not traced:
        return
    raise MutationError(
        f"{name}(..., out=buf) with traced inputs and a plain {type(out).__name__} as buf: the "
        "result would be written into an array the tape cannot follow, and later reads of buf "
        f"would silently drop the gradient. Either assign the result (y = {name}(...)), or "
        f"{PLAIN_BUFFER_FIX}.")


def refuse_ufunc_at(ufunc):
    raise MutationError(
        f"{function_name(ufunc)}.at(x, indices, ...) writes into x in place, with repeated "
        "indices accumulating; it is not supported on traced values. Write "
        "x = x + np.bincount(indices, weights=v, minlength=len(x)) style code, or x[idx] += v "
        "with distinct indices.")


# -- the engine's own rules: buffer allocation, refusals, the write itself -------------------------

_ALLOCATORS = frozenset({np.zeros_like, np.empty_like, np.ones_like, np.full_like,
                         np.zeros, np.empty, np.ones, np.full})
_IN_PLACE = {np.copyto: "dst[...] = src", np.put: "x[indices] = values",
             np.place: "x[mask] = values", np.putmask: "x[mask] = values[mask]",
             np.fill_diagonal: "x[np.diag_indices(n)] = v",
             np.put_along_axis: "x[index tuple] = values"}


def engine_rule(function, signature) -> Rule | None:
    """The engine's rule for `function`, or None: these are bookkeeping, not maths, so no source
    provides them. Raises MutationError for NumPy functions that write into an argument."""
    if function in _ALLOCATORS:
        return Rule(function, signature, _allocate(function), _allocation_pullback(function),
                    source="rulebridge", notes="engine: a new buffer",
                    jvp=_allocation_pushforward(function))
    if function is operator.setitem:
        return _write_rule(signature)
    if function is untake:
        return untake_rule(signature)
    if function is np.copy:
        return Rule(function, signature, _allocate(function), _copy_pullback, source="rulebridge",
                    notes="engine: a copy, which the fix for aliasing errors relies on",
                    jvp=_copy_pushforward)
    fix = _IN_PLACE.get(function)
    if fix is not None:
        raise MutationError(f"{function_name(function)} writes into its argument in place, which "
                            f"rulebridge does not record for traced values; write {fix} instead.")
    position = _out_position(function)
    if position is not None and position < len(signature) \
            and SpecInfo.of(signature[position]).kind in ("array", "subclass"):
        return Rule(function, signature, _refuse_positional_out(function, position),
                    _allocation_pullback(function), source="rulebridge",
                    notes="engine: refuses an output array passed by position")
    return None


_OUT_POSITIONS: dict = {}


def _out_position(function):
    """Where `out` sits among the positional parameters of an array function (np.clip: 3), or
    None. NumPy hands a positional `out` to `__array_function__` as an ordinary argument, which
    the rule's forward would then write into unrecorded: the rule cache makes this check free
    after the first call at each signature."""
    if function in _OUT_POSITIONS:
        return _OUT_POSITIONS[function]
    position = None
    if not isinstance(function, np.ufunc):  # ufuncs get `out` as a keyword from NumPy itself
        try:
            parameters = list(inspect.signature(function).parameters.values())
        except (TypeError, ValueError):
            parameters = []
        for i, parameter in enumerate(parameters):
            if parameter.name == "out" and parameter.kind is parameter.POSITIONAL_OR_KEYWORD:
                position = i
    _OUT_POSITIONS[function] = position
    return position


def _refuse_positional_out(function, position):
    name = function_name(function)

    def forward(args, kwargs):
        raise MutationError(f"{name} got its output array by position (argument {position}); "
                            f"pass it as out=... so the write is recorded: "
                            f"{name.rsplit('.', 1)[-1]}(..., out=buf).")

    return forward


def _allocate(function):
    def forward(args, kwargs):
        return function(*args, **kwargs), None

    return forward


def _copy_pullback(residuals, g, argnums):
    return (g,)  # the identity: same shape and dtype


def _copy_pushforward(residuals, tangents, argnums):
    return tangents[0]  # the identity, as its pullback: a copy is linear and its own transpose


def _allocation_pushforward(function):
    refuse = _allocation_pullback(function)

    def pushforward(residuals, tangents, argnums):
        refuse(residuals, None, argnums)  # a traced fill value: refused in both directions
        return None  # a new buffer's values depend on no argument's: a zero tangent

    return pushforward


def _allocation_pullback(function):
    name = function_name(function)

    def pullback(residuals, g, argnums):
        # A new buffer's values do not depend on the array it was shaped like. A traced fill
        # value would need its own write; refuse rather than drop its gradient.
        if 1 in argnums and function in (np.full, np.full_like):
            raise MutationError(f"{name} with a traced fill value is not supported: allocate with "
                                "buf = np.empty_like(x) and write buf.fill(v) or buf[...] = v.")
        return (None,) * len(argnums)

    return pullback


class Routes(Writes):
    """The tape's `writes` (rulebridge/engine/hooks.py): every way of writing, recorded."""

    plain_buffer_fix = PLAIN_BUFFER_FIX

    def setitem(self, box, index, value) -> None:
        setitem(box, index, value)

    fill = staticmethod(fill)
    augmented = staticmethod(augmented)
    ufunc_out = staticmethod(ufunc_out)
    function_out = staticmethod(function_out)
    refuse_ufunc_at = staticmethod(refuse_ufunc_at)
    engine_rule = staticmethod(engine_rule)
    nested_pullback = staticmethod(NESTED_PULLBACKS.get)
    nested_rule = staticmethod(nested_getitem_rule)

    def follows_views(self, function) -> bool:
        return function in VIEWS

    def independent(self, rule) -> bool:
        return rule.function in _ALLOCATORS and rule.source == "rulebridge"


ROUTES = Routes()

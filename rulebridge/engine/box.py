"""`Traced`: the box the user's NumPy code sees while it is being differentiated.

NumPy hands every ufunc call to `__array_ufunc__` and every other public function to
`__array_function__`; operators, methods and indexing are routed to the same NumPy functions, so
everything reaches `Tape.record`. Anything that would turn a box back into a plain number
(`float(x)`, `np.asarray(x)`) raises instead of silently cutting the gradient.
"""

from __future__ import annotations

import inspect
import operator
from types import MappingProxyType
from typing import Any

import numpy as np

from ..errors import RulebridgeError, TracingError
from ..rules.levels import Box, primal
from .arithmetic import ARITHMETIC, as_plain_arithmetic_gives, as_python_raises
from .constants import constant_value, export
from .decisions import ASKED
from .refusals import refuse, refuse_array
from ..rules.signature import format_spec, spec_of
from .index_tricks import install as _install_index_tricks
from .surface import NdarraySurface, install as _install_surface

# Scalar types a flat rule key spells by their type alone (see `Tape.record`).
FLAT_SCALARS = frozenset((float, int, complex, bool, np.float64, np.float32, np.complex128))
NO_KWARGS = MappingProxyType({})  # read-only: rules receive it and may keep it in residuals

_ndarray = np.ndarray
_ATTRIBUTES = frozenset(("shape", "ndim", "size", "dtype"))  # kinds of decisions.ASKED
_NO_GRADIENT_KINDS = frozenset("biu")  # dtype kinds a conversion may give: no gradient to cut


class Traced(Box):
    """The value your function sees in place of an array or scalar while it is differentiated.

    It behaves like the array it holds: NumPy's functions, ufuncs, operators, indexing, in-place
    writes, ``shape``, ``dtype``, ``ndim`` and ``T`` work on it, and each call is recorded on the
    tape. Its value may be a box of an enclosing differentiation (rulebridge/rules/levels.py).
    Turning it back into a plain number or array (``float(x)``, ``np.asarray(x)``) raises
    `TracingError` instead of silently cutting the gradient. Users never make one.
    """

    # __weakref__: the buffers a trace follows are noted by weak reference (engine/detached.py)
    __slots__ = ("_value", "_var", "_tape", "__weakref__")
    __array_priority__ = 1000.0
    __hash__ = None  # like ndarray

    def __init__(self, value: Any, var: int, tape) -> None:
        self._value = value
        self._var = var
        self._tape = tape

    # -- NumPy protocols -----------------------------------------------------------------------

    def __array_ufunc__(self, ufunc, method, first, *rest, **kwargs):
        # `first, *rest` rather than `*inputs`: `np.sin(x)` then builds no tuple of its inputs
        # (rest is the shared empty tuple), about 350 instructions of each such op.
        if not rest and not kwargs and method == "__call__":
            # `ufunc(x)`: the box itself as `args`, Tape.record's tuned branch (kwargs is empty)
            return self._tape.record(ufunc, self, kwargs)
        inputs = (first, *rest)
        if method != "__call__":
            if method == "at":
                self._tape.writes.refuse_ufunc_at(ufunc)
            function = _UfuncMethod.get(ufunc, method)
            if "out" in kwargs:
                return self._tape.writes.ufunc_out(self, function, inputs, kwargs)
            return self._tape.record(function, inputs, kwargs)
        if kwargs:
            if "out" in kwargs:
                return self._tape.writes.ufunc_out(self, ufunc, inputs, kwargs)
            _refuse_traced_kwargs(ufunc, kwargs)
        return self._tape.record(ufunc, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        # `np.shape(x)`, `np.ndim(x)`, `np.result_type(x)`, `np.iscomplexobj(x)`: a question
        # of the layout, answered as `x.shape` is (a decision), not recorded as an op (each of
        # autograd's broadcasting VJPs asks all four: under nesting most of the ops recorded)
        asked = _LAYOUT.get(func)
        if asked is not None and self._tape.guard is None and len(args) == 1 and not kwargs \
                and args[0] is self:
            return asked(self)
        if kwargs:
            if kwargs.get("out") is not None:
                return self._tape.writes.function_out(self, func, types, args, kwargs)
            for value in kwargs.values():  # a loop, not any(genexpr): a frame less per call
                if _contains_box(value):
                    args, kwargs = _positional(func, args, kwargs)
                    break
        return self._tape.record(func, args, kwargs)

    def __array__(self, dtype=None, copy=None):
        value = constant_value(self)  # a box that holds no traced value converts
        if value is not None:
            return export(self, value, dtype, copy)
        if dtype is not None and np.dtype(dtype).kind in _NO_GRADIENT_KINDS:
            # `np.int64(x)`, `np.array(x, dtype=bool)`: NumPy asks for integers or booleans,
            # which carry no gradient; answered as `x.astype(dtype)` is (a value the tape keeps)
            return self.astype(dtype)
        raise refuse_array(self._describe(), self._tape.writes.plain_buffer_fix)

    # -- what may not leave the tape ----------------------------------------------------------

    def _refuse(self, what: str, fix: str):
        value = constant_value(self)
        if value is not None:  # no traced value: convert as the plain array would
            return value
        raise refuse(what, self._describe(), fix, self._tape.writes.plain_buffer_fix)

    def __float__(self):
        return float(self._refuse("float()", "y = x[()]  # or np.sum(x): keep it an array; "
                                  "to branch on it, compare it: `if x > 0:`"))

    def __complex__(self):
        return complex(self._refuse("complex()", "y = x[()]  # keep it an array"))

    def __int__(self):
        return self._tape.decided(self._var, "int", int(self._refuse(
            "int()", "i = int(plain_value)  # integers carry no gradient: compute indices "
            "from plain arrays")))

    def __index__(self):
        return self._tape.decided(self._var, "index", operator.index(self._refuse(
            "int()", "i = int(plain_value)  # integers carry no gradient: compute indices "
            "from plain arrays")))

    def item(self, *args):
        return self._refuse(".item()", "y = x[()]  # or x[0]: index it instead").item(*args)

    def tolist(self):
        return self._refuse(".tolist()", "for row in x: ...  # iterate over it, or index "
                            "it").tolist()

    def __bool__(self) -> bool:
        # Python control flow on values is allowed; the tape keeps the answer (decisions.py)
        return self._tape.decided(self._var, "bool", bool(self._value))

    # -- ndarray's face ------------------------------------------------------------------------

    # (the rest of ndarray's face, and these setters: rulebridge/engine/surface.py); what the
    # program reads of a box's layout is a decision the tape keeps (decisions.py)
    shape = property(lambda self: self._decided("shape"), NdarraySurface._set_shape)
    dtype = property(lambda self: self._decided("dtype"), NdarraySurface._set_reinterpreting)
    strides = property(NdarraySurface.strides.fget, NdarraySurface._set_reinterpreting)
    ndim = property(lambda self: self._decided("ndim"))
    size = property(lambda self: self._decided("size"))
    T = property(lambda self: np.transpose(self))
    real = property(lambda self: np.real(self), NdarraySurface._set_real)
    imag = property(lambda self: np.imag(self), NdarraySurface._set_imag)

    def _decided(self, kind: str):
        tape, value = self._tape, self._value
        # an ndarray's attribute answers what ASKED asks (shape, ndim, size, dtype): one frame
        outcome = getattr(value, kind) if type(value) is _ndarray and kind in _ATTRIBUTES \
            else ASKED[kind](primal(value))
        return tape.decided(self._var, kind, outcome) if tape.keeps_decisions else outcome

    def __len__(self) -> int:
        return self._tape.decided(self._var, "len", len(primal(self._value)))

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __getitem__(self, index):
        if _contains_box(index):
            raise TracingError("indexing with a traced value: indices carry no gradient, compute "
                               "them from plain arrays (or compare: x[y > 0])")
        return self._tape.record(operator.getitem, (self, index), {})

    # Writes are recorded by the tape's `writes` (rulebridge/engine/hooks.py).
    def __setitem__(self, index, value) -> None:
        self._tape.writes.setitem(self, index, value)

    def fill(self, value) -> None:
        self._tape.writes.fill(self, value)

    def reshape(self, *shape, **kwargs):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return np.reshape(self, shape, **kwargs)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return np.transpose(self, axes or None)

    def __repr__(self) -> str:
        if getattr(self._tape, "plain", False):  # set free: a plain array now
            return repr(self._value)
        return f"Traced(%{self._var}, {self._describe()})"

    def _describe(self) -> str:
        value = primal(self._value)
        return f"{format_spec(spec_of(value))} of shape {np.shape(value)}"


def _method(function):
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = function.__name__
    return method


# Operands for which `x * y` may go straight to the tape: NumPy's dispatch would hand the ufunc
# call to `Traced.__array_ufunc__` with the same arguments (it costs as much as the ufunc on small
# arrays). Any other operand, which may have its own __array_ufunc__, goes through NumPy.
_DIRECT_OPERANDS = FLAT_SCALARS | {Traced, np.ndarray}


def _binary(function, reflected=False):
    arithmetic = ARITHMETIC[function]
    if reflected:
        def op(self, other):
            if type(other) in _DIRECT_OPERANDS:
                try:
                    out = self._tape.record(function, (other, self), NO_KWARGS)
                except RulebridgeError:
                    as_python_raises(arithmetic, other, self)
                    raise
            else:
                out = function(other, self)
            if type(self._value) is _ndarray or type(out) is not Traced:
                return out
            return as_plain_arithmetic_gives(out, arithmetic, other, self)
    else:
        def op(self, other):
            if type(other) in _DIRECT_OPERANDS:
                try:
                    out = self._tape.record(function, (self, other), NO_KWARGS)
                except RulebridgeError:
                    as_python_raises(arithmetic, self, other)
                    raise
            else:
                out = function(self, other)
            if type(self._value) is _ndarray or type(out) is not Traced:
                return out
            return as_plain_arithmetic_gives(out, arithmetic, self, other)
    return op


def _unary(function):
    arithmetic = ARITHMETIC[function]

    def op(self):
        out = function(self)
        if type(self._value) is _ndarray or type(out) is not Traced:
            return out
        return as_plain_arithmetic_gives(out, arithmetic, self)
    return op


# ndarray methods that are NumPy functions of the array.
_METHODS = {
    "sum": np.sum, "mean": np.mean, "std": np.std, "var": np.var, "prod": np.prod,
    "max": np.max, "min": np.min, "cumsum": np.cumsum, "cumprod": np.cumprod,
    "ravel": np.ravel, "squeeze": np.squeeze, "swapaxes": np.swapaxes, "clip": np.clip,
    "trace": np.trace, "diagonal": np.diagonal, "repeat": np.repeat, "dot": np.dot,
    "conj": np.conjugate, "conjugate": np.conjugate, "astype": np.astype, "copy": np.copy,
    "round": np.round, "argmax": np.argmax, "argmin": np.argmin, "argsort": np.argsort,
    "nonzero": np.nonzero, "any": np.any, "all": np.all,
}
for _name, _function in _METHODS.items():
    setattr(Traced, _name, _method(_function))

_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
}
for _name, _function in _BINARY.items():
    setattr(Traced, f"__{_name}__", _binary(_function))
    setattr(Traced, f"__r{_name}__", _binary(_function, reflected=True))

for _name, _function in {"lt": np.less, "le": np.less_equal, "gt": np.greater,
                         "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal}.items():
    setattr(Traced, f"__{_name}__", _binary(_function))

Traced.__neg__ = _unary(np.negative)
Traced.__pos__ = _unary(np.positive)
Traced.__abs__ = _unary(np.absolute)


def _augmented(function):
    """`x += y` and friends, recorded by the tape's `writes`."""
    def op(self, other):
        return self._tape.writes.augmented(function, self, other)

    op.__name__ = f"__i{function.__name__}__"
    return op


for _name, _function in _BINARY.items():
    setattr(Traced, f"__i{_name}__", _augmented(_function))

_install_surface(Traced)
_install_index_tricks(Traced)  # np.r_[...], np.c_[...] holding boxes


class _UfuncMethod:
    """`np.add.reduce`, `np.multiply.outer`, ...: recorded as functions of their own so adapters
    can cover them by name."""

    _cache: dict = {}

    @classmethod
    def get(cls, ufunc, method):
        key = (ufunc, method)
        function = cls._cache.get(key)
        if function is None:
            bound = getattr(ufunc, method)

            def function(*args, **kwargs):
                return bound(*args, **kwargs)

            function.__name__ = f"{ufunc.__name__}.{method}"
            function.__rulebridge_name__ = f"numpy.{ufunc.__name__}.{method}"
            function.ufunc, function.method = ufunc, method
            function = cls._cache.setdefault(key, function)
        return function


_LAYOUT = {np.shape: lambda x: x._decided("shape"), np.ndim: lambda x: x._decided("ndim"),
           np.size: lambda x: x._decided("size"), np.result_type: lambda x: x._decided("dtype"),
           np.iscomplexobj: lambda x: issubclass(x._decided("dtype").type, np.complexfloating)}


def flat_key(key: tuple, value: Any, kwargs) -> tuple | None:
    """`key` continued by an argument that is no ndarray (`Tape.record`'s flat keys): a Python
    scalar by its type; a box of an enclosing level, without keywords, by its innermost primal's
    dtype and ndim, as the registry keys it (a nested trace's ops then hit the tape's cache),
    after `Traced`: the key of a call on boxes is not that of the call on their primals, so the
    engine may give the nested call a rule of its own (`Writes.nested_rule`)."""
    if type(value) in FLAT_SCALARS:
        return key + (type(value),)
    if type(value) is Traced and not kwargs:
        value = primal(value)
        if type(value) is _ndarray:
            return key + (Traced, value.dtype, value.ndim)
    return None


# Static arguments a flat key spells by their type, their value then by `call_shape`'s
# descriptor (rules/keys.py): an index, a shape, axes, a dtype. Anything else leaves a call
# to be keyed in full.
_STATIC = frozenset((int, bool, str, slice, type(None), type(Ellipsis)))


def _static(value: Any) -> bool:
    if type(value) in _STATIC:
        return True
    if type(value) is tuple or type(value) is list:
        return len(value) <= 32 and all(_static(item) for item in value)
    return isinstance(value, np.dtype)  # (its type is a subclass: np.dtypes.Float64DType)


def described_key(function: Any, values: tuple) -> tuple | None:
    """A flat key for a call `Tape.record` could not spell flatly (`x[1:3]`, `np.reshape(x,
    (2, 3))`, `np.transpose(x, (1, 0))`): arrays and boxes as `flat_key` spells them, a static
    argument by its type, for `call_shape` to continue by its value; None where an argument is
    neither (a sequence of arrays, a subclass)."""
    key = (function,)
    for a in values:
        if type(a) is _ndarray:
            key += (a.dtype, a.ndim)
        elif type(a) in FLAT_SCALARS or _static(a):
            key += (type(a),)
        else:
            key = flat_key(key, a, NO_KWARGS) if type(a) is Traced else None
            if key is None:
                return None
    return key


def _contains_box(value) -> bool:
    if type(value) is Traced:
        return True
    if type(value) in (list, tuple):
        return any(_contains_box(v) for v in value)
    return False


def _refuse_traced_kwargs(function, kwargs):
    for name, value in kwargs.items():
        if _contains_box(value):
            raise TracingError(f"{getattr(function, '__name__', function)} got a traced value as "
                               f"keyword argument {name!r}; pass it positionally.")


def _positional(function, args, kwargs):
    """Move keyword arguments that hold boxes to their positional slots, so they are recorded."""
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # no introspectable signature: nothing to move
        parameters = []
    positional, rest = list(args), dict(kwargs)
    for parameter in parameters[len(args):]:
        if (parameter.kind is not parameter.POSITIONAL_OR_KEYWORD or parameter.name not in rest
                or not any(_contains_box(v) for v in rest.values())):
            break
        positional.append(rest.pop(parameter.name))
    _refuse_traced_kwargs(function, rest)
    return tuple(positional), rest


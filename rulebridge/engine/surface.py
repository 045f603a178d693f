"""The rest of ndarray's face on a traced value: every public attribute of `np.ndarray` either
works, recorded through the NumPy function it means, or raises an error that says what to write.

In-place methods (`x.sort()`, `x.partition(k)`, `x.put(...)`, `x.shape = s`, `x.real = v`) are
recorded as the write they are (`x[...] = np.sort(x)`) through the tape's writes, so NumPy's
aliasing and the caller's array behave as in NumPy. What would hand out the raw memory (`x.base`,
`x.data`, `x.ctypes`, `__dlpack__`, pickling) or reinterpret its bytes (`x.view(dtype)`,
`byteswap`, `getfield`) would cut the gradient, and raises `TracingError`.
"""

from __future__ import annotations

import builtins

import numpy as np

from ..errors import TracingError
from ..rules.levels import primal

_ndarray = np.ndarray
_box_types: list = []  # the class `install` gave this face to (Traced)


def install(box_type: type) -> None:
    """Give `box_type` (Traced) every attribute of `NdarraySurface` it does not define itself.
    Copied rather than inherited: a base class lengthens the lookup of the box's slots on every
    op, which `benchmarks/instructions.py` counts."""
    _box_types.append(box_type)
    for name, value in vars(NdarraySurface).items():
        if name not in _NOT_COPIED and name not in vars(box_type):
            setattr(box_type, name, value)


def _is_box(value) -> bool:
    return type(value) in _box_types


def _unboxed(value):
    return value._value if _is_box(value) else value


class NdarraySurface:
    """ndarray's methods and attributes beyond the core ones `Traced` itself defines (given to
    it by `install`)."""

    # -- attributes read from the value --------------------------------------------------------

    # (np.asarray of the value, never of the box: a scalar's value is a Python or NumPy scalar)
    nbytes = property(lambda self: np.asarray(primal(self._value)).nbytes)
    itemsize = property(lambda self: np.asarray(primal(self._value)).itemsize)
    strides = property(lambda self: np.asarray(primal(self._value)).strides)
    flags = property(lambda self: np.asarray(primal(self._value)).flags)
    device = property(lambda self: "cpu")
    mT = property(lambda self: np.swapaxes(self, -1, -2) if self.ndim >= 2 else _mT_error(self))

    def __array_namespace__(self, *, api_version=None):
        return np  # what ndarray answers: NumPy's functions, which record on boxes

    def to_device(self, device, /, *, stream=None):
        if device != "cpu" or stream is not None:
            raise ValueError(f"the only device NumPy (and a traced value) has is 'cpu', not "
                             f"{device!r}")
        return self

    def __format__(self, spec: str) -> str:
        return format(primal(self._value), spec) if spec else repr(self)  # f"{loss:.4f}" for logging

    # -- functions of the array ----------------------------------------------------------------

    def take(self, indices, axis=None, out=None, mode="raise"):
        # ndarray.take converts its indices; sources' rules expect an array, not a list.
        return np.take(self, _plain_indices(indices, "x.take"),
                       **_given(axis=(axis, None), out=(out, None), mode=(mode, "raise")))

    def compress(self, condition, axis=None, out=None):
        # np.take of the selected positions: the same elements (compress has no rule of its own)
        selected = np.flatnonzero(_plain_indices(condition, "x.compress"))
        return np.take(self, selected, **_given(axis=(axis, None), out=(out, None)))

    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, **_given(side=(side, "left"), sorter=(sorter, None)))

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        _no_order("argpartition", order)
        return np.argpartition(self, kth, **_given(axis=(axis, -1), kind=(kind, "introselect")))

    def flatten(self, order="C"):
        # A copy, as ndarray.flatten gives: a later write into it must not reach `self`.
        return np.copy(np.ravel(self, **_given(order=(order, "C"))))

    def __copy__(self):
        return np.copy(self)

    def __deepcopy__(self, memo):
        copied = memo[id(self)] = np.copy(self)  # a recorded copy, on the same tape
        return copied

    def __contains__(self, item) -> bool:
        return bool(np.any(self._value == _unboxed(item)))  # a bool: no gradient to keep

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return other // self, other % self

    def __round__(self, ndigits=None):
        value = self._value
        if isinstance(value, _ndarray):
            raise TypeError("round(x) of an array: NumPy's ndarray does not define __round__ "
                            "either; write np.round(x, decimals), which is recorded.")
        if ndigits is None:
            return round(value)  # a Python int, as NumPy gives: piecewise constant, no gradient
        return np.round(self, ndigits)

    # -- in-place methods, recorded as the writes they are -------------------------------------

    def sort(self, axis=-1, kind=None, order=None) -> None:
        _no_order("sort", order)
        self[...] = np.sort(self, **_given(axis=(axis, -1), kind=(kind, None)))

    def partition(self, kth, axis=-1, kind="introselect", order=None) -> None:
        _no_order("partition", order)
        self[...] = np.partition(self, kth, **_given(axis=(axis, -1), kind=(kind, "introselect")))

    def put(self, indices, values, mode="raise") -> None:
        if mode != "raise":
            self._refuse(f"x.put(..., mode={mode!r})", "Clip or wrap the indices yourself "
                         "(np.clip, %) and write x[np.unravel_index(i, x.shape)] = v.")
        flat = np.asarray(_plain_indices(indices, "x.put"), dtype=np.intp).ravel()
        size = self.size
        if flat.size and not (-size <= flat.min() and flat.max() < size):
            raise IndexError(f"x.put: an index in {indices!r} is out of bounds for size {size}")
        values = values if type(values) is type(self) else np.asarray(values)
        n_values = int(np.size(_unboxed(values)))
        if n_values not in (1, flat.size):
            # ndarray.put repeats short values cyclically, which a write cannot express.
            self._refuse(f"x.put with {flat.size} indices and {n_values} values",
                         "Give one value or one per index (np.resize(v, len(i)) repeats them).")
        if n_values != 1:
            values = np.reshape(values, flat.shape)
        self[np.unravel_index(flat % max(size, 1), self.shape)] = values


    def view(self, dtype=None, type=None):
        if isinstance(dtype, builtins.type) and issubclass(dtype, _ndarray):
            dtype, type = None, dtype  # x.view(np.ndarray): NumPy's spelling of the class
        if (dtype is not None and np.dtype(dtype) != self.dtype) or type not in (None, _ndarray):
            self._refuse(f"x.view({dtype!r}{', type=' + repr(type) if type else ''})",
                         "A view of another dtype or class reinterprets the bytes, which has no "
                         "gradient; use x.astype(dtype) to convert the values, or np.asarray(x) "
                         "outside the differentiated function.")
        return self[...]  # a view NumPy aliases and the tape's views follow (writes/views.py)

    # -- attribute writes ----------------------------------------------------------------------

    def _set_shape(self, shape) -> None:
        probe = self._value.view() if isinstance(self._value, _ndarray) else np.asarray(
            self._value)
        probe.shape = shape  # NumPy's own error when the shape needs a copy or a new size
        reshaped = np.reshape(self, probe.shape)
        # Rebind this box to the reshaped view, as NumPy changes the array object in place;
        # other boxes of the same memory keep their shapes, as NumPy's views do.
        self._value, self._var = reshaped._value, reshaped._var

    def _set_real(self, value) -> None:
        if np.iscomplexobj(self._value):
            value = np.add(value, np.multiply(1j, np.imag(self)))
        self[...] = value

    def _set_imag(self, value) -> None:
        if not np.iscomplexobj(self._value):
            raise TypeError("array does not have imaginary part to set")  # NumPy's error
        self[...] = np.add(np.real(self), np.multiply(1j, value))

    def _set_flat(self, value) -> None:
        n_values = int(np.size(_unboxed(value)))
        if n_values not in (1, self.size):
            self._refuse(f"x.flat = (a sequence of {n_values} values for {self.size} elements)",
                         "ndarray repeats short values cyclically; give one value or one per "
                         "element (np.resize(v, x.size)).")
        self[...] = value if n_values == 1 else np.reshape(value, self.shape)

    def _set_reinterpreting(self, value) -> None:
        self._reinterpret("setting x.dtype or x.strides")

    flat = property(lambda self: _Flat(self), _set_flat)

    # -- refusals: raw memory, reinterpreted bytes, flags, pickling ---------------------------

    def _no_memory(self, what):
        self._refuse(what, "It hands out the array's raw memory, outside the tape. Use the "
                     "value after rulebridge.grad/vjp returns, or keep to NumPy's functions.")

    base = property(lambda self: self._no_memory("x.base"))
    data = property(lambda self: self._no_memory("x.data"))
    ctypes = property(lambda self: self._no_memory("x.ctypes"))

    def __dlpack__(self, *args, **kwargs):
        self._no_memory("__dlpack__ (np.from_dlpack, another library's asarray)")

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: where the value is (exporting it is what __dlpack__ refuses)

    def tobytes(self, order="C"):
        self._no_memory("x.tobytes()")

    def tofile(self, *args, **kwargs):
        self._no_memory("x.tofile()")

    def dump(self, file):
        self._no_memory("x.dump()")

    def dumps(self):
        self._no_memory("x.dumps()")

    def __reduce_ex__(self, protocol):
        self._no_memory("pickling")

    def __reduce__(self):
        self._no_memory("pickling")

    def __setstate__(self, state):
        self._no_memory("unpickling into it")

    def _reinterpret(self, what):
        self._refuse(what, "It reinterprets the array's bytes, which has no gradient; convert "
                     "values with x.astype(dtype).")

    def byteswap(self, inplace=False):
        self._reinterpret("x.byteswap()")

    def getfield(self, dtype, offset=0):
        self._reinterpret("x.getfield()")

    def setfield(self, val, dtype, offset=0):
        self._reinterpret("x.setfield()")

    def setflags(self, write=None, align=None, uic=None):
        self._refuse("x.setflags()", "A traced value's flags are the engine's (arguments are "
                     "read-only to rules); copy the array first (y = x.copy()) to get your own.")

    def resize(self, *new_shape, refcheck=True):
        self._refuse("x.resize() (in place, changing the size)",
                     "Make a new array: x = np.resize(x, shape) repeats x, and "
                     "x = np.concatenate([x.ravel(), np.zeros(k)]).reshape(shape) zero-fills "
                     "as x.resize does.")

    def choose(self, choices, out=None, mode="raise"):
        self._refuse("x.choose(choices)", "It uses x as indices, which carry no gradient; "
                     "compute the index array from plain arrays and call np.choose(i, choices).")

    def __delitem__(self, index):
        raise ValueError("cannot delete array elements")  # NumPy's error

    # Bitwise operators: NumPy defines them for integer and bool arrays only, and a traced value
    # is float or complex, so these raise NumPy's own TypeError.
    def _bitwise(self, ufunc, *operands):
        out = ufunc(*(_unboxed(v) for v in operands))
        raise TracingError(f"{ufunc.__name__} of a traced value gave {out!r}; bitwise "
                           "operations carry no gradient")  # unreachable for float, complex

    __and__ = lambda self, o: self._bitwise(np.bitwise_and, self, o)
    __rand__ = lambda self, o: self._bitwise(np.bitwise_and, o, self)
    __or__ = lambda self, o: self._bitwise(np.bitwise_or, self, o)
    __ror__ = lambda self, o: self._bitwise(np.bitwise_or, o, self)
    __xor__ = lambda self, o: self._bitwise(np.bitwise_xor, self, o)
    __rxor__ = lambda self, o: self._bitwise(np.bitwise_xor, o, self)
    __lshift__ = lambda self, o: self._bitwise(np.left_shift, self, o)
    __rlshift__ = lambda self, o: self._bitwise(np.left_shift, o, self)
    __rshift__ = lambda self, o: self._bitwise(np.right_shift, self, o)
    __rrshift__ = lambda self, o: self._bitwise(np.right_shift, o, self)
    __iand__, __ior__, __ixor__ = __and__, __or__, __xor__
    __ilshift__, __irshift__ = __lshift__, __rshift__
    __invert__ = lambda self: self._bitwise(np.invert, self)


_NOT_COPIED = frozenset(vars(type("Empty", (), {}))) | {"_set_shape", "_set_real", "_set_imag",
                                                         "_set_reinterpreting"}


def _mT_error(box):
    raise ValueError(f"matrix transpose with ndim < 2 is undefined (x has ndim {box.ndim})")


def _given(**keywords) -> dict:
    """The keywords whose value (first) is not the default (second): a call spelled as the
    user would spell it, so its rule is looked up, and trusted, at the configuration it means."""
    return {name: value for name, (value, default) in keywords.items()
            if value is not default and not (type(value) is type(default) and value == default)}


def _no_order(method, order) -> None:
    if order is not None:
        raise TracingError(f"x.{method}(order=...) sorts structured arrays by field; a traced "
                           "value is a float or complex array, which has no fields")


def _plain_indices(indices, where):
    if _is_box(indices):
        raise TracingError(f"{where}: indices carry no gradient; compute them from plain arrays")
    return np.asarray(indices) if isinstance(indices, (list, tuple)) else indices


class _Flat:
    """`x.flat`: reads are of `np.ravel(x)`; writes are recorded as writes into `x`."""

    __slots__ = ("_box",)

    def __init__(self, box) -> None:
        self._box = box

    def __len__(self) -> int:
        return self._box.size

    def __iter__(self):
        return iter(np.ravel(self._box))

    def __getitem__(self, index):
        return np.ravel(self._box)[index]

    def __setitem__(self, index, value) -> None:
        box = self._box
        flat = np.arange(box.size).reshape(-1)[_plain_indices(index, "x.flat[i] = v")]
        box[np.unravel_index(flat, box.shape)] = value

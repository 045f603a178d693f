"""ndarray's whole public face on a traced value (rulebridge/engine/surface.py): each attribute of
`np.ndarray` works, with NumPy's value and a gradient that matches central differences, or
raises an error that says what to write instead. A test enumerates `dir(np.ndarray)`, so an
attribute a new NumPy adds fails here until it is given a meaning."""

import copy
import pickle

import numpy as np
import pytest

import rulebridge as rb
from tests.support.numerical import central_difference

A = np.array([[0.7, -1.3, 2.1], [0.4, 1.9, -0.6]])
W = np.arange(1.0, 7.0).reshape(2, 3)  # weights: a gradient that sees the order of elements


def _check(program, a=A, rtol=1e-6):
    """program(x) with x an ndarray returns an array; its weighted sum's gradient, traced, equals
    central differences of the same program on plain arrays, and the values agree."""

    def f(x):
        out = program(x)
        return np.sum(np.ravel(out) * np.arange(1.0, np.size(out) + 1))

    expected_value = f(a.copy())
    value, gradient = rb.value_and_grad(f)(a.copy())
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    np.testing.assert_allclose(gradient, central_difference(f, (a.copy(),)), rtol=rtol,
                               atol=1e-7)


def _sorted_in_place(x):
    y = x * 1.0
    y.sort()
    return y * W


def _sorted_argument(x):
    x.sort(axis=0)
    return x * W


def _partitioned(x):
    y = np.ravel(x) * 1.0
    y.partition(2)
    return y[:2] * y[2]


def _put(x):
    y = x * 1.0
    y.put([0, -1], [5.0, 7.0])
    return y * W


def _put_traced(x):
    y = np.zeros(6)
    y = y + 0.0 * np.ravel(x)  # a traced buffer
    y.put([4, 1], np.ravel(x)[:2] ** 2)
    return y


def _shape_set(x):
    y = x * 1.0
    y.shape = (3, 2)
    return y * W.T


def _shape_set_then_written(x):
    y = x * 1.0
    z = y  # another name for the same array object, as in NumPy
    y.shape = (6,)
    y[1] = 3.0
    return z * np.arange(6.0)


def _view_written(x):
    y = x * 2.0
    v = y.view()
    v[0, 1] = x[1, 2] ** 2  # NumPy's aliasing: y sees it
    return y * W


def _flat_written(x):
    y = x * 1.0
    y.flat[[1, 4]] = np.sin(x[0, :2])
    return y * W


def _flat_assigned(x):
    y = x * 1.0
    y.flat = x[0, 0]
    return y


def _real_assigned(x):
    y = x * (1.0 + 2.0j)
    y.real = x ** 2
    return np.abs(y)


def _imag_assigned(x):
    y = x * (1.0 + 2.0j)
    y.imag = np.cos(x)
    return np.abs(y)


PROGRAMS = {
    "sort": _sorted_in_place,
    "sort of the argument": _sorted_argument,
    "partition": _partitioned,
    "put": _put,
    "put of traced values": _put_traced,
    "shape =": _shape_set,
    "shape = then a write through the rebound box": _shape_set_then_written,
    "view, then a write through it": _view_written,
    "flat[...] =": _flat_written,
    "flat =": _flat_assigned,
    "real =": _real_assigned,
    "imag =": _imag_assigned,
    "take": lambda x: x.take([0, 0, 5, 2]),
    "take with axis": lambda x: x.take([2, 0, 2], axis=1),
    "flatten('F')": lambda x: x.flatten("F"),
    "flatten is a copy": lambda x: _written_flattened(x),
    "ravel('F')": lambda x: x.ravel("F"),
    "ravel(order='F')": lambda x: x.ravel(order="F"),
    "reshape(order='F')": lambda x: x.reshape(3, 2, order="F") * W.T,
    "reshape((3, 2), order='F')": lambda x: x.reshape((3, 2), order="F"),
    "divmod": lambda x: np.stack(divmod(x * 3.0, 1.5)),
    "rdivmod": lambda x: np.stack(divmod(7.0, x + 3.0)),
    "copy.copy": lambda x: copy.copy(x) * W,
    "copy.deepcopy": lambda x: copy.deepcopy(x) * W,
    "deepcopy of a structure holding boxes": lambda x: np.stack(
        copy.deepcopy({"w": [x, x ** 2]})["w"]),
    "compress": lambda x: x.compress([True, False, True], axis=1),
    "mT": lambda x: x.mT * W.T,
    "round(x, n) of a scalar": lambda x: round(np.sum(x * 7.77), 1) + np.sum(x),
    "round(x) of a scalar is an int": lambda x: round(np.sum(x)) + np.sum(x * x),
    "view(np.ndarray)": lambda x: x.view(np.ndarray) * W,
    "view(float64)": lambda x: x.view(np.float64) * W,
    "searchsorted in an index": lambda x: x[0][np.sort(x[0]).searchsorted([0.5, 2.0])],
    "argpartition in an index": lambda x: np.ravel(x)[np.ravel(x).argpartition(2)[:3]],
    "array namespace": lambda x: x.__array_namespace__().sin(x),
    "to_device('cpu')": lambda x: x.to_device("cpu") * W,
}


def _written_flattened(x):
    y = x * 1.0
    flat = y.flatten()
    flat[0] = 100.0  # must not reach y
    return y * W + np.sum(flat)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_method_works_with_numpys_value_and_the_right_gradient(name):
    _check(PROGRAMS[name])


def test_sort_of_an_argument_sorts_the_callers_array_as_numpy_does():
    a, expected = A.copy(), A.copy()
    rb.grad(lambda x: (x.sort(), np.sum(x * W))[1])(a)
    expected.sort()
    np.testing.assert_array_equal(a, expected)


def test_attributes_read_from_the_value():
    seen = {}

    def f(x):
        y = x[:, ::2]
        for name in ("nbytes", "itemsize", "strides", "device"):
            seen[name] = (getattr(x, name), getattr(y, name))
        seen["flags"] = (x.flags.c_contiguous, y.flags.c_contiguous)
        seen["contains"] = (1.9 in x, 5.0 in x)
        seen["format"] = f"{np.sum(x):.3f}"
        seen["dlpack device"] = x.__dlpack_device__()
        return np.sum(x)

    rb.grad(f)(A)
    y = A[:, ::2]
    for name in ("nbytes", "itemsize", "strides", "device"):
        assert seen[name] == (getattr(A, name), getattr(y, name)), name
    assert seen["flags"] == (True, False)
    assert seen["contains"] == (True, False)
    assert seen["format"] == f"{np.sum(A):.3f}"
    assert seen["dlpack device"] == A.__dlpack_device__()


def _raises(program, error=rb.RulebridgeError, match=None):
    with pytest.raises(error, match=match):
        rb.grad(lambda x: np.sum(program(x)))(A.copy())


REFUSED = {
    "base": (lambda x: x.base, "raw memory"),
    "data": (lambda x: x.data, "raw memory"),
    "ctypes": (lambda x: x.ctypes, "raw memory"),
    "__dlpack__": (lambda x: np.from_dlpack(x), "raw memory"),
    "tobytes": (lambda x: x.tobytes(), "raw memory"),
    "tofile": (lambda x: x.tofile("unused"), "raw memory"),
    "dump": (lambda x: x.dump("unused"), "raw memory"),
    "dumps": (lambda x: x.dumps(), "raw memory"),
    "__reduce__": (lambda x: x.__reduce__(), "raw memory"),
    "__reduce_ex__": (lambda x: pickle.dumps(x), "raw memory"),
    "__setstate__": (lambda x: x.__setstate__(None), "raw memory"),
    "view(int64)": (lambda x: x.view(np.int64), "astype"),
    "view(type=matrix)": (lambda x: x.view(type=np.matrix), "astype"),
    "byteswap": (lambda x: x.byteswap(), "reinterprets"),
    "getfield": (lambda x: x.getfield(np.float32), "reinterprets"),
    "setfield": (lambda x: x.setfield(1.0, np.float32), "reinterprets"),
    "dtype =": (lambda x: setattr(x, "dtype", np.int64), "reinterprets"),
    "strides =": (lambda x: setattr(x, "strides", (8, 16)), "reinterprets"),
    "setflags": (lambda x: x.setflags(write=True), "copy the array first"),
    "resize": (lambda x: x.resize((3, 3)), "np.resize"),
    "choose": (lambda x: x.choose([1, 2]), "indices"),
    "sort(order=)": (lambda x: x.sort(order="f"), "fields"),
    "put(mode='clip')": (lambda x: x.put([9], [1.0], mode="clip"), "Clip or wrap"),
    "put with values repeated": (lambda x: x.put([0, 1, 2], [1.0, 2.0]), "one per index"),
    "flat = too few values": (lambda x: setattr(x, "flat", [1.0, 2.0]), "one per element"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_what_would_cut_the_gradient_is_refused_saying_what_to_write(name):
    program, match = REFUSED[name]
    _raises(program, rb.TracingError, match)


NUMPYS_OWN_ERRORS = {
    # (program, the same call on a plain array): the traced value raises what NumPy raises
    "shape = of another size": lambda x: setattr(x, "shape", (4,)),
    "shape = needing a copy": lambda x: setattr(x.T, "shape", (6,)),
    "round(array)": lambda x: round(x),
    "del x[0]": lambda x: x.__delitem__(0),
    "x & 1": lambda x: x & 1,
    "1 | x": lambda x: 1 | x,
    "x ^ x": lambda x: x ^ x,
    "~x": lambda x: ~x,
    "x << 1": lambda x: x << 1,
    "1 >> x": lambda x: 1 >> x,
    "x &= 1": lambda x: x.__iand__(1),
    "mT of a vector": lambda x: x[0].mT,
    "imag = on a real array": lambda x: setattr(x, "imag", 1.0),
    "to_device('gpu')": lambda x: x.to_device("gpu"),
}


@pytest.mark.parametrize("name", NUMPYS_OWN_ERRORS)
def test_numpys_own_errors_are_numpys(name):
    program = NUMPYS_OWN_ERRORS[name]
    with pytest.raises(Exception) as plain:
        program(A.copy())
    with pytest.raises(type(plain.value)):
        rb.grad(lambda x: (program(x), np.sum(x))[1])(A.copy())


# Every public attribute of ndarray, and where this file (or the engine's own tests) gives it a
# meaning. Names NumPy's protocols own are deliberately absent from a box: NumPy converts
# through them, and a box converts only through __array__, which refuses.
COVERED_ELSEWHERE = {
    "T", "all", "any", "argmax", "argmin", "argsort", "astype", "clip", "conj", "conjugate",
    "copy", "cumprod", "cumsum", "diagonal", "dot", "dtype", "fill", "imag", "item", "max",
    "mean", "min", "ndim", "nonzero", "prod", "ravel", "real", "repeat", "reshape", "round",
    "shape", "size", "squeeze", "std", "sum", "swapaxes", "tolist", "trace", "transpose", "var",
}
ABSENT_ON_PURPOSE = {
    "__array_interface__", "__array_struct__",  # conversion protocols: __array__ refuses
    "__array_finalize__", "__array_wrap__",  # subclass hooks of ndarray itself
    "__array_priority__", "__array_ufunc__", "__array_function__", "__array__",  # the box's own
    "__class_getitem__",  # ndarray[...] in type hints
}
EXERCISED_HERE = {
    "sort", "partition", "put", "flat", "view", "take", "flatten", "compress", "mT", "__copy__",
    "__deepcopy__", "__divmod__", "__rdivmod__", "searchsorted", "argpartition",
    "__array_namespace__", "to_device", "nbytes", "itemsize", "strides", "flags", "device",
    "__contains__", "__format__", "__dlpack_device__", "base", "data", "ctypes", "__dlpack__",
    "tobytes", "tofile", "dump", "dumps", "__reduce__", "__reduce_ex__", "__setstate__",
    "byteswap", "getfield", "setfield", "setflags", "resize", "choose", "__delitem__",
    "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__",
    "__rlshift__", "__rshift__", "__rrshift__", "__iand__", "__ior__", "__ixor__",
    "__ilshift__", "__irshift__", "__invert__",
}
OBJECTS_OWN = set(dir(object)) | {
    # arithmetic, comparisons, indexing, iteration, conversions: tests/api/test_api.py and friends
    "__abs__", "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__",
    "__rmul__", "__imul__", "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__",
    "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__",
    "__ipow__", "__matmul__", "__rmatmul__", "__imatmul__", "__neg__", "__pos__", "__lt__",
    "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__bool__", "__float__", "__int__",
    "__complex__", "__index__", "__len__", "__iter__", "__getitem__", "__setitem__",
    "__buffer__", "__release_buffer__",
}


def test_every_public_attribute_of_ndarray_has_a_meaning_on_a_box():
    unaccounted = (set(dir(np.ndarray)) - COVERED_ELSEWHERE - ABSENT_ON_PURPOSE - EXERCISED_HERE
                   - OBJECTS_OWN)
    assert not unaccounted, f"ndarray attributes a traced value does not define: {unaccounted}"
    missing = {name for name in EXERCISED_HERE | COVERED_ELSEWHERE
               if not hasattr(rb.Traced, name)} if hasattr(rb, "Traced") else set()
    assert not missing


def test_round_with_digits_records_nps_round():
    def f(x):
        s = np.sum(x * x)
        return round(s, 2) * 0.0 + s  # round's own gradient is zero almost everywhere

    np.testing.assert_allclose(rb.grad(f)(A.copy()), 2 * A)

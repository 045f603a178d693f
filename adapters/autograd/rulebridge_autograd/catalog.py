"""Which NumPy/SciPy functions autograd can differentiate, found from autograd's own registry.

autograd wraps every callable of numpy (and of numpy.linalg, numpy.fft, scipy.special, ...) as a
primitive; a primitive is differentiable when `autograd.core.primitive_vjps` has a VJP maker for
it, and declared constant when it is in autograd's `nograd_functions`. Some autograd functions are
plain Python compositions of primitives (`stack`, `concatenate`, `hstack`): those are covered by
running autograd's own tracer over the composition.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable

import numpy as np

# (NumPy namespace, autograd namespace) pairs, both imported lazily by `entries()`.
NAMESPACES = (
    ("numpy", "autograd.numpy"),
    ("numpy.linalg", "autograd.numpy.linalg"),
    ("numpy.fft", "autograd.numpy.fft"),
    ("scipy.special", "autograd.scipy.special"),
)

# Names autograd wraps that are not functions of array values.
SKIPPED = frozenset({
    "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "empty", "empty_like",
    "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "arange", "eye", "identity",
    "frombuffer", "fromfunction", "fromiter", "fromstring", "loadtxt", "genfromtxt", "load",
    "save", "savez", "copyto", "put", "place", "putmask", "fill_diagonal", "set_printoptions",
    "linspace", "logspace", "geomspace", "meshgrid", "mgrid", "ogrid", "indices", "tri",
})


@dataclass(frozen=True)
class Entry:
    """How autograd covers one NumPy function."""

    function: Callable  # the NumPy/SciPy callable (the rule key)
    wrapped: Callable  # autograd's counterpart
    kind: str  # "primitive" (registered VJP), "nograd" (declared constant), "composite"


def entries() -> dict[Callable, Entry]:
    import importlib

    from autograd.core import primitive_vjps
    from autograd.numpy import numpy_vjps
    from autograd.numpy.numpy_boxes import ArrayBox

    nograd = {id(f) for f in numpy_vjps.nograd_functions}
    # Some public autograd names are Python wrappers (mean, where, std) around a primitive that
    # wraps the NumPy function itself: find those primitives by the function they wrap.
    primitive_of = {getattr(w, "fun", None): w for w in primitive_vjps}
    table: dict[Callable, Entry] = {}
    for numpy_name, autograd_name in NAMESPACES:
        try:
            numpy_ns = importlib.import_module(numpy_name)
            autograd_ns = importlib.import_module(autograd_name)
        except ImportError:
            continue
        for name, wrapped in vars(autograd_ns).items():
            if name.startswith("_") or name in SKIPPED or not callable(wrapped):
                continue
            function = getattr(numpy_ns, name, None)
            if function is None or not _dispatches(function) or function in table:
                continue
            if function in primitive_of:
                wrapped, kind = primitive_of[function], "primitive"
            elif wrapped in primitive_vjps:
                kind = "primitive"
            elif id(wrapped) in nograd:
                kind = "nograd"
            elif getattr(wrapped, "_is_autograd_primitive", False):
                continue  # a primitive autograd cannot differentiate
            elif isinstance(wrapped, type):
                continue
            else:
                kind = "composite"
            table[function] = Entry(function, wrapped, kind)
    table[operator.getitem] = Entry(operator.getitem, ArrayBox.__getitem__, "primitive")
    for function, composition in COMPOSITIONS.items():
        if table.get(function) is None:
            table[function] = Entry(function, composition, "composite")
    return table


def take_along_axis(arr, indices, axis=-1):
    """np.take_along_axis through autograd's indexing rule (autograd registers no VJP for it)."""
    if axis is None:
        return arr.ravel()[indices]
    axis %= arr.ndim
    index = []
    for dim, size in enumerate(arr.shape):
        if dim == axis:
            index.append(indices)
        else:
            shape = [1] * indices.ndim
            shape[dim] = size
            index.append(np.arange(size).reshape(shape))
    return arr[tuple(index)]


# NumPy functions autograd has no VJP for, written with functions it has: run through autograd's
# tracer like its own compositions, and checked by the matrix like every rule.
COMPOSITIONS: dict[Callable, Callable] = {np.take_along_axis: take_along_axis}


def _dispatches(function) -> bool:
    """Does NumPy hand calls of `function` on a traced box to the box? Ufuncs and functions
    decorated with array_function_dispatch do; plain Python helpers do not."""
    return isinstance(function, np.ufunc) or hasattr(function, "_implementation")

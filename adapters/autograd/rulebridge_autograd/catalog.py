"""Which NumPy/SciPy functions autograd can differentiate, found from autograd's own registry.

autograd wraps every callable of numpy (and of numpy.linalg, numpy.fft, scipy.special, ...) as a
primitive; a primitive is differentiable when `autograd.core.primitive_vjps` has a VJP maker for
it, and declared constant when it is in autograd's `nograd_functions`. Some autograd functions are
plain Python compositions of primitives (`stack`, `concatenate`, `hstack`): those are covered by
running autograd's own tracer over the composition.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

import numpy as np

import rulebridge

# (NumPy namespace, autograd namespace) pairs, both imported lazily by `Catalog`.
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
    "logspace", "geomspace", "meshgrid", "mgrid", "ogrid", "indices", "tri",
})


@dataclass(frozen=True)
class Entry:
    """How autograd covers one NumPy function."""

    function: Callable  # the NumPy/SciPy callable (the rule key)
    wrapped: Callable  # autograd's counterpart
    kind: str  # "primitive" (registered VJP), "nograd" (declared constant), "composite"


class Catalog(Mapping):
    """NumPy function -> Entry, built one namespace at a time. importing autograd.scipy imports
    most of SciPy (about a second), so a SciPy namespace is read only when a function from it is
    asked for, or when the whole table is listed."""

    def __init__(self) -> None:
        self._table: dict[Callable, Entry] = {}
        self._pending = list(NAMESPACES)
        for names in NAMESPACES:
            if names[0].startswith("numpy"):
                self._load(names)
        self._table.setdefault(operator.getitem, _getitem_entry())
        for function, composition in COMPOSITIONS.items():
            self._table.setdefault(function, Entry(function, composition, "composite"))
        for function, composition in CORRECTIONS.items():
            self._table[function] = Entry(function, composition, "composite")

    def get(self, function, default=None):
        entry = self._table.get(function)
        if entry is None:
            for names in list(self._pending):
                if _defined_in(function, names[0]):
                    self._load(names)
            entry = self._table.get(function)
        return default if entry is None else entry

    def __getitem__(self, function) -> Entry:
        entry = self.get(function)
        if entry is None:
            raise KeyError(function)
        return entry

    def _everything(self) -> dict[Callable, Entry]:
        for names in list(self._pending):
            self._load(names)
        return self._table

    def __iter__(self):
        return iter(self._everything())

    def __len__(self) -> int:
        return len(self._everything())

    def __contains__(self, function) -> bool:
        return self.get(function) is not None

    def _load(self, names: tuple[str, str]) -> None:
        self._pending.remove(names)
        self._table.update((f, e) for f, e in _namespace_entries(*names).items()
                           if f not in self._table)


def entries() -> Catalog:
    return Catalog()


def _defined_in(function, module_name: str) -> bool:
    """Is `function` the attribute of that name in `module_name`? A module nobody imported cannot
    have handed the user this function, so it is not imported here either."""
    module = sys.modules.get(module_name)
    name = getattr(function, "__name__", None)
    return module is not None and name is not None and getattr(module, name, None) is function


def _getitem_entry() -> Entry:
    from autograd.numpy.numpy_boxes import ArrayBox

    return Entry(operator.getitem, ArrayBox.__getitem__, "primitive")


def _namespace_entries(numpy_name: str, autograd_name: str) -> dict[Callable, Entry]:
    import importlib

    from autograd.core import primitive_vjps
    from autograd.numpy import numpy_vjps

    try:
        autograd_ns = importlib.import_module(autograd_name)
    except ImportError:
        return {}
    nograd = {id(f) for f in numpy_vjps.nograd_functions}
    # Some public autograd names are Python wrappers (mean, where, std) around a primitive that
    # wraps the NumPy function itself: find those primitives by the function they wrap.
    primitive_of = {getattr(w, "fun", None): w for w in primitive_vjps}
    table: dict[Callable, Entry] = {}
    for name, function in rulebridge.dispatched_functions(numpy_name):
        wrapped = getattr(autograd_ns, name, None)
        if name in SKIPPED or not callable(wrapped) or function in table:
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


# autograd VJPs that are wrong, or raise, for arguments NumPy accepts (found by tests/fuzz): the
# function is rewritten so that autograd's tracer only meets the cases its VJPs get right.
def tile(A, reps):
    """autograd aligns a `reps` shorter than `A.ndim` with the leading axes, NumPy with the
    trailing ones (a silently wrong gradient): pad both to one length first."""
    import autograd.numpy as anp

    reps = tuple(reps) if np.ndim(reps) else (reps,)
    ndim = max(len(reps), anp.ndim(A))
    A = anp.reshape(A, (1,) * (ndim - anp.ndim(A)) + anp.shape(A))
    return anp.tile(A, (1,) * (ndim - len(reps)) + reps)


def where(condition, x, y):
    """autograd's VJP does not unbroadcast `x` and `y`; adding a boolean zero array broadcasts
    them through `add`, whose VJP does."""
    import autograd.numpy as anp

    zeros = np.zeros(np.broadcast_shapes(np.shape(condition), anp.shape(x), anp.shape(y)), bool)
    return anp.where(condition, x + zeros, y + zeros)


def outer(a, b):
    """autograd's VJP assumes 1-D arguments; NumPy ravels them."""
    import autograd.numpy as anp

    return anp.outer(anp.ravel(a), anp.ravel(b))


def broadcast_to(array, shape):
    """autograd's VJP cannot take new leading axes."""
    return array + np.zeros(shape, bool)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, **unsupported):
    """autograd's VJP divides the product by each element: NaN (0/0) wherever an element is
    exactly zero. Multiplying halves pairwise (log2(n) multiplies) differentiates exactly."""
    import autograd.numpy as anp

    if unsupported:
        raise NotImplementedError(f"np.prod with {', '.join(unsupported)}")
    shape = anp.shape(a)
    ndim = len(shape)
    axes = tuple(range(ndim)) if axis is None else tuple(int(d) % ndim for d in np.atleast_1d(axis))
    kept = [d for d in range(ndim) if d not in axes]
    n = int(np.prod([shape[d] for d in axes]))
    if n == 0:
        return np.ones(tuple(1 if d in axes else shape[d] for d in range(ndim)) if keepdims
                       else tuple(shape[d] for d in kept))
    x = anp.reshape(anp.transpose(a, kept + list(axes)), tuple(shape[d] for d in kept) + (n,))
    while n > 1:
        half = n // 2
        x = anp.concatenate([x[..., :half] * x[..., half:2 * half], x[..., 2 * half:]], axis=-1)
        n -= half
    result = x[..., 0]
    if keepdims:
        result = anp.reshape(result, tuple(1 if d in axes else shape[d] for d in range(ndim)))
    return result


def sinc(x):
    """autograd's VJP is (cos(t) t - sin(t)) / (t x) with t = pi x: NaN (0/0) at x = 0, where
    sinc is smooth with derivative 0. Near 0 its Taylor series (error below 1e-19 for
    |x| < 1e-3), elsewhere sin(t) / t at an argument kept away from 0."""
    import autograd.numpy as anp

    small = anp.abs(x) < 1e-3  # a comparison: a plain array, also of a traced x
    t = np.pi * x
    safe = anp.where(small, 1.0, t)
    return anp.where(small, 1.0 - t * t / 6.0 + t ** 4 / 120.0, anp.sin(safe) / safe)


def _with_initial(name: str, fill: float) -> Callable:
    """max or min with `initial` (and `where`): autograd's VJP divides the cotangent among the
    entries equal to the result, so where `initial` is the result (every entry masked out, or
    all beyond it) it divides by 0: NaN where NumPy's function is the constant `initial`. Here
    `initial` takes part as an entry of its own, a constant, so the traced entries get 0 there
    (and at a tie share the cotangent with it, as tied entries share it with each other)."""
    def reduced(a, axis=None, out=None, keepdims=False, initial=None, where=True):
        import autograd.numpy as anp

        reduce = getattr(anp, name)
        if out is not None:
            raise NotImplementedError(f"np.{name} with out")
        if initial is None:  # (NumPy has refused a mask without initial)
            return reduce(a, axis=axis, keepdims=keepdims)
        if where is not True:
            a = anp.where(where, a, fill)
        ndim = anp.ndim(a)
        axes = tuple(range(ndim)) if axis is None else tuple(
            sorted(int(d) % ndim for d in np.atleast_1d(axis)))
        kept = [d for d in range(ndim) if d not in axes]
        shape = anp.shape(a)
        flat = anp.reshape(anp.transpose(a, kept + list(axes)),
                           tuple(shape[d] for d in kept) + (-1,))
        extra = np.full(tuple(shape[d] for d in kept) + (1,), initial, np.result_type(a))
        result = reduce(anp.concatenate([flat, extra], axis=-1), axis=-1)
        if keepdims:
            result = anp.reshape(result, tuple(1 if d in axes else shape[d] for d in range(ndim)))
        return result

    return reduced


CORRECTIONS: dict[Callable, Callable] = {np.tile: tile, np.where: where, np.outer: outer,
                                         np.broadcast_to: broadcast_to, np.prod: prod,
                                         np.sinc: sinc}
CORRECTIONS.update({f: _with_initial(name, fill) for f, name, fill in (
    (np.max, "max", -np.inf), (np.amax, "max", -np.inf), (np.min, "min", np.inf),
    (np.amin, "min", np.inf))})

"""`np.r_[...]` and `np.c_[...]` with traced values.

NumPy's index tricks (instances of `AxisConcatenator`: `np.r_`, `np.c_`) build their result in
their own `__getitem__`, calling `np.array` on each item, which no protocol of the box reaches:
a traced item would be converted to a plain array and refused. So `AxisConcatenator.__getitem__`
is given one check in front: a key holding a box is built here, the way NumPy builds it (the
same directives, `ndmin`, `trans1d`, slices and scalars, the same result dtype), with the
boxes' own operations (reshape, transpose, astype) and one `np.concatenate` the tape records.
Any other key is NumPy's own call, unchanged: outside a trace, and in other threads, no box is
ever in the key. Installed once, on the class; not a frame is inspected.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TracingError

try:  # NumPy 2
    from numpy.lib._index_tricks_impl import AxisConcatenator
except ImportError:  # NumPy 1.26
    from numpy.lib.index_tricks import AxisConcatenator  # type: ignore[no-redef]

_ORIGINAL = AxisConcatenator.__getitem__
_box_types: list[type] = []


def install(box_type: type) -> None:
    """Build `np.r_[...]`/`np.c_[...]` here when the key holds a `box_type` (Traced)."""
    _box_types.append(box_type)
    if AxisConcatenator.__getitem__ is _ORIGINAL:
        AxisConcatenator.__getitem__ = _getitem  # type: ignore[method-assign]


def _getitem(self: Any, key: Any) -> Any:
    items = key if type(key) is tuple else (key,)
    for item in items:
        if type(item) in _box_types:
            return _traced(self, items)
    return _ORIGINAL(self, key)


def _traced(self: Any, items: tuple) -> Any:
    """NumPy's `AxisConcatenator.__getitem__` (numpy/lib/_index_tricks_impl.py), for a key
    holding boxes."""
    trans1d, ndmin, matrix, axis = self.trans1d, self.ndmin, self.matrix, self.axis
    objs, result_type_objs = [], []
    for k, item in enumerate(items):
        scalar = False
        if isinstance(item, slice):
            start = 0 if item.start is None else item.start
            step = 1 if item.step is None else item.step
            if isinstance(step, (np.complexfloating, complex)):
                newobj = np.linspace(start, item.stop, num=int(abs(step)))
            else:
                newobj = np.arange(start, item.stop, step)
            if ndmin > 1:
                newobj = np.array(newobj, copy=None, ndmin=ndmin)
                if trans1d != -1:
                    newobj = newobj.swapaxes(-1, trans1d)
        elif isinstance(item, str):
            if k != 0:
                raise ValueError("special directives must be the first entry.")
            if item in ("r", "c"):
                matrix = True
                continue
            if "," in item:
                vec = item.split(",")
                try:
                    axis, ndmin = [int(x) for x in vec[:2]]
                    if len(vec) == 3:
                        trans1d = int(vec[2])
                    continue
                except Exception as e:
                    raise ValueError(f"unknown special directive {item!r}") from e
            try:
                axis = int(item)
                continue
            except (ValueError, TypeError) as e:
                raise ValueError("unknown special directive") from e
        elif type(item) in np.ScalarType:
            scalar = True
            newobj = item
        else:
            newobj = _at_least(item, ndmin, trans1d)
        objs.append(newobj)
        result_type_objs.append(item if scalar else newobj.dtype)
    if matrix:
        raise TracingError("np.r_['r', ...] / np.r_['c', ...] build an np.matrix, which rulebridge "
                           "does not trace: build the array with np.r_[...] or np.c_[...] and "
                           "reshape it (np.matrix is deprecated in NumPy)")
    final_dtype = np.result_type(*result_type_objs)
    objs = [_cast(_at_least(obj, ndmin, -1), final_dtype) for obj in objs]
    return self.concatenate(tuple(objs), axis=axis)


def _at_least(item: Any, ndmin: int, trans1d: int) -> Any:
    """`np.array(item, copy=None, subok=True, ndmin=ndmin)` and NumPy's `trans1d` transpose,
    with a box's own operations for a box."""
    if type(item) not in _box_types:
        item_ndim = np.ndim(item)
        newobj = np.array(item, copy=None, subok=True, ndmin=ndmin)
    else:
        item_ndim = item.ndim
        newobj = item.reshape((1,) * (ndmin - item_ndim) + item.shape) \
            if item_ndim < ndmin else item
    if trans1d != -1 and item_ndim < ndmin:
        k2, k1 = ndmin - item_ndim, trans1d
        if k1 < 0:
            k1 += k2 + 1
        defaxes = list(range(ndmin))
        newobj = newobj.transpose(defaxes[:k1] + defaxes[k2:] + defaxes[k1:k2])
    return newobj


def _cast(obj: Any, dtype: np.dtype) -> Any:
    if type(obj) in _box_types:
        return obj if obj.dtype == dtype else obj.astype(dtype)
    return np.array(obj, copy=None, subok=True, dtype=dtype)

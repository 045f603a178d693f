"""What a write's index is, read once per write: its text in messages, whether it covers the
whole array, whether it repeats an element, whether a value holds a box (rulebridge/writes/write.py)."""

from __future__ import annotations

import numpy as np

from .views import BASIC_INDEX

_ndarray = np.ndarray


def contains_box(value, box_type) -> bool:
    if type(value) is box_type:
        return True
    if type(value) is tuple or type(value) is list:
        return any(contains_box(v, box_type) for v in value)
    return False


def format_index(index) -> str:
    items = index if type(index) is tuple else (index,)
    return "[" + ", ".join(format_item(i) for i in items) + "]"


def format_item(item) -> str:
    if item is Ellipsis:
        return "..."
    if type(item) is slice:
        parts = ["" if p is None else str(p) for p in (item.start, item.stop, item.step)]
        return ":".join(parts[:2] if item.step is None else parts)
    if isinstance(item, (_ndarray, list)):
        array = np.asarray(item)
        return f"<{array.dtype} array of shape {array.shape}>"
    return repr(item)


def covers_all(index) -> bool:
    items = index if type(index) is tuple else (index,)
    return all(i is Ellipsis or (type(i) is slice and i == slice(None)) for i in items)


def has_repeats(index, shape) -> bool:
    """Does an integer-array index name some position twice? (Slices, ints and masks never do.)"""
    items = index if type(index) is tuple else (index,)
    if all(type(i) in BASIC_INDEX for i in items):
        return False
    arrays = [np.asarray(i) if type(i) is list else i for i in items]
    kinds = {a.dtype.kind for a in arrays if type(a) is _ndarray}
    if not kinds & set("iu"):
        return False
    if "b" in kinds:
        return True  # a mask beside integer arrays: not worth deciding, refuse
    consumed = sum(0 if a is None or a is Ellipsis else 1 for a in arrays)
    axis, integer, sizes = 0, [], []
    for a in arrays:
        if a is Ellipsis:
            axis += len(shape) - consumed
        elif a is not None:
            if type(a) is _ndarray and a.dtype.kind in "iu":
                integer.append(a % shape[axis])
                sizes.append(shape[axis])
            axis += 1
    flat = np.ravel_multi_index(np.broadcast_arrays(*integer), sizes).ravel()
    return np.unique(flat).size < flat.size

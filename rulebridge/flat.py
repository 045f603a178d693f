"""`rulebridge.flatten`: every leaf of a container in one float64 vector and back, as
`autograd.misc.flatten` does, for `scipy.optimize` and anything else that wants one vector."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import numpy.typing as npt

from .engine.box import Traced
from .errors import ArgumentError, UsageError
from .rules.signature import is_differentiable
from .tree import describe, tree_flatten


def flatten(tree: Any) -> tuple[npt.NDArray[np.float64], Callable[[Any], Any]]:
    """`(vector, unflatten)`: every leaf of `tree` raveled into one 1-D float64 vector (complex128
    when a leaf is complex), and the inverse, as `autograd.misc.flatten` does, for
    `scipy.optimize` and anything else that wants one vector.

    Parameters
    ----------
    tree : container of arrays and scalars
        Any nesting of tuple, list, dict, namedtuple and registered containers whose leaves are
        float or complex arrays or scalars.

    Returns
    -------
    vector : ndarray
        A new float64 (or complex128) 1-D array; it shares no memory with `tree`. Inside a
        differentiated function, with traced leaves, it is traced too (autograd's pattern
        ``l2_norm(params)``: ``v, _ = flatten(params); return v @ v``).
    unflatten : callable
        `unflatten(v)` gives `tree`'s structure back with each leaf's shape and dtype: a float32
        leaf is cast back to float32, a Python float comes back as a float, a NumPy scalar as
        that scalar type, a 0-d array as a 0-d array. Each leaf is a new array. `v` may be a
        traced value (differentiate `lambda v: loss(unflatten(v))`, autograd's pattern).

    Raises
    ------
    UsageError (a TypeError)
        For a leaf that is not a float or complex array or scalar (an int, a bool, a string):
        casting it back from float64 would change it. The message names the leaf's path.
    """
    leaves, structure = tree_flatten(tree)
    paths = None
    metas = []
    for i, leaf in enumerate(leaves):
        dtype = getattr(leaf, "dtype", None)
        if dtype is None and type(leaf) in (float, complex):
            dtype = np.dtype(type(leaf))
        if dtype is None or not is_differentiable(leaf):
            paths = paths or structure.paths("tree")
            raise UsageError(
                f"rulebridge.flatten: the leaf {paths[i]} is {describe(leaf)}"
                f"{'' if dtype is None else f' of dtype {dtype}'}; only float and complex arrays "
                "and scalars go into the vector.",
                fix=f"{paths[i]} = np.asarray({paths[i]}, dtype=np.float64)  # or keep it out "
                    "of the container you flatten",
                details="Its value would not survive a round trip through float64.")
        metas.append((_primal_type(leaf), dtype, np.shape(leaf)))
    sizes = [int(np.prod(shape)) for _, _, shape in metas]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
    complex_ = any(dtype.kind == "c" for _, dtype, _ in metas)
    wide = np.complex128 if complex_ else np.float64
    if any(isinstance(leaf, Traced) for leaf in leaves):
        # inside a differentiated function (autograd's l2_norm(params)): one recorded
        # concatenate of the raveled leaves, each cast to the vector's dtype, so the gradient
        # flows back to every leaf
        vector = np.concatenate([_raveled(leaf, wide) for leaf in leaves])
    else:
        vector = np.zeros(offsets[-1], wide)
        for leaf, start, stop in zip(leaves, offsets, offsets[1:]):
            vector[start:stop] = np.ravel(leaf)

    def unflatten(v: Any) -> Any:
        shape = getattr(v, "shape", None)
        if shape != (offsets[-1],):
            raise ArgumentError(f"unflatten takes a 1-D vector of {offsets[-1]} entries (what "
                                f"rulebridge.flatten made), got {describe(v)}.",
                                fix="v, unflatten = rulebridge.flatten(tree)  # then unflatten "
                                    "a vector of v's shape")
        traced = not isinstance(v, np.ndarray)
        out = []
        for (kind, dtype, leaf_shape), start, stop in zip(metas, offsets, offsets[1:]):
            piece = v[start:stop].reshape(leaf_shape)
            if dtype.kind == "f" and piece.dtype.kind == "c":
                piece = np.real(piece)  # a real leaf's slot in a complex vector
            if traced:
                out.append(piece if piece.dtype == dtype else piece.astype(dtype))
            elif kind is np.ndarray:
                out.append(piece.astype(dtype, copy=True))
            elif kind in (float, complex):
                out.append(kind(piece[()]))
            else:
                out.append(dtype.type(piece[()]))
        return structure.unflatten(out)

    return vector, unflatten


def _primal_type(leaf: Any) -> type:
    """The type of the value a leaf stands for: a traced leaf's own value's."""
    while isinstance(leaf, Traced):
        leaf = leaf._value
    return type(leaf)


def _raveled(leaf: Any, wide: type) -> Any:
    flat = np.ravel(leaf) if isinstance(leaf, Traced) else np.ravel(np.asarray(leaf))
    return flat if flat.dtype == wide else flat.astype(wide)

"""Which NumPy/SciPy functions JAX can differentiate, found by introspection.

A NumPy function is covered when (1) NumPy hands its calls on a traced box to the box (a ufunc,
or a function with `_implementation` from array_function_dispatch), (2) JAX has a same-named
callable in the matching namespace, and (3) it computes floating values from array values. The
sets below exclude what is not a function of array values or never has a float output; the
meaning differences between same-named functions live in semantics.py.
"""

from __future__ import annotations

import importlib
import operator
from dataclasses import replace
from typing import Callable

import numpy as np

import rulebridge

from .semantics import MEANINGS, Meaning

NAMESPACES = (
    ("numpy", "jax.numpy"),
    ("numpy.linalg", "jax.numpy.linalg"),
    ("numpy.fft", "jax.numpy.fft"),
    ("scipy.special", "jax.scipy.special"),  # its ufuncs only
)

# Not functions of array values: creation from shapes, I/O, in-place writers, introspection,
# and functions that take Python callables.
NOT_VALUE_FUNCTIONS = frozenset({
    "empty_like", "zeros_like", "ones_like", "full_like", "logspace", "geomspace",
    "meshgrid", "ix_", "save", "savez", "array_repr", "array_str", "fill_diagonal", "place",
    "put", "put_along_axis", "shape", "ndim", "size", "result_type", "can_cast", "einsum_path",
    "iscomplexobj", "isrealobj", "apply_along_axis", "apply_over_axes", "piecewise",
    "diag_indices_from", "tril_indices_from", "triu_indices_from",
})

# Functions whose outputs are never floating (indices, counts, booleans): the engine passes their
# outputs through without a rule.
INTEGER_VALUED = frozenset({
    "argmax", "argmin", "argpartition", "argsort", "argwhere", "nonzero", "flatnonzero",
    "count_nonzero", "searchsorted", "digitize", "bincount", "lexsort", "unravel_index",
    "ravel_multi_index", "nanargmax", "nanargmin", "iscomplex", "isreal", "isin", "isclose",
    "allclose", "array_equal", "array_equiv", "isneginf", "isposinf", "packbits", "unpackbits",
    "matrix_rank", "histogram", "histogram2d", "histogramdd", "histogram_bin_edges",
})

# Output shapes that depend on values: `jax.jit` cannot trace them.
DYNAMIC_SHAPE = frozenset({
    "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values", "intersect1d",
    "setdiff1d", "setxor1d", "union1d", "trim_zeros", "extract", "compress", "roots",
})

SKIPPED = NOT_VALUE_FUNCTIONS | INTEGER_VALUED | DYNAMIC_SHAPE


def catalog() -> dict[Callable, Meaning]:
    """NumPy/SciPy callable -> what to differentiate in JAX (a `Meaning`, declined or not)."""
    table: dict[Callable, Meaning] = {}
    for numpy_name, jax_name in NAMESPACES:
        try:
            jax_ns = importlib.import_module(jax_name)
        except ImportError:
            continue
        for name, function in rulebridge.dispatched_functions(numpy_name):
            if name in SKIPPED or function in table:  # an alias: the canonical name came first
                continue
            counterpart = getattr(jax_ns, name, None)
            if isinstance(counterpart, type) or not callable(counterpart):
                continue
            if isinstance(function, np.ufunc) and not _has_float_loop(function):
                continue
            meaning = MEANINGS.get(function, Meaning())
            if meaning.jax is None and not meaning.declined:
                meaning = replace(meaning, jax=counterpart)
            table[function] = meaning
    table[operator.getitem] = MEANINGS[operator.getitem]
    return table


def _has_float_loop(ufunc: np.ufunc) -> bool:
    """Does the ufunc compute a float output from float inputs (not only booleans or ints)?"""
    for types in ufunc.types:
        inputs, outputs = types.split("->")
        if "d" in inputs and any(t in "efdg" for t in outputs):
            return True
    return False

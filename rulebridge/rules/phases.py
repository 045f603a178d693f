"""Vectors fixed only up to a factor of modulus one (a sign; a phase, for complex ones), as
eigenvectors are, and the one way to make two such choices agree.

`align_columns(v, r)` multiplies each column of `v` by `p = <v, r> / |<v, r>|`, the factor that
turns it into `r`'s column when both stand for the same vector (`p = ±1` for real ones). Written
with any source's functions it is differentiable like the rest of that source's program, so a
source's eigenvectors aligned to SciPy's have the derivative of the vectors that continue
SciPy's own. A function declares such outputs by the attribute named `PHASES` (a tuple of output
positions): the checks then align each evaluation's vectors to those at the point before
differencing, so finite differences follow one continuous choice (LAPACK's own choice may flip
under a perturbation of 1e-8).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

PHASES = "__rulebridge_phases__"  # the attribute: positions of outputs holding such vectors
NUMPY_OPS = (np.sum, np.conj, np.abs, np.expand_dims)


def align_columns(vectors: Any, reference: Any,
                  ops: tuple[Callable, Callable, Callable, Callable] = NUMPY_OPS) -> Any:
    """`vectors` with each column multiplied by the factor of modulus one that makes it the
    same column of `reference`.

    Parameters
    ----------
    vectors, reference : array, shape (..., n, k)
        Columns standing for the same vectors up to a factor each; `reference` is a constant.
    ops : tuple of callables
        `sum`, `conj`, `abs` and `expand_dims` of the library `vectors` belongs to (NumPy's by
        default; a source's own, to differentiate through the alignment).

    Returns
    -------
    array
        The aligned vectors (a column orthogonal to its reference gives NaN: nothing to align).
    """
    sum_, conj, abs_, expand_dims = ops
    overlap = sum_(conj(vectors) * reference, axis=-2)
    return vectors * expand_dims(overlap / abs_(overlap), -2)


def align_outputs(out: Any, reference: Any, positions: tuple[int, ...],
                  ops: tuple[Callable, Callable, Callable, Callable] = NUMPY_OPS) -> Any:
    """A function's outputs `out` with the vectors at `positions` aligned to `reference`'s
    (the same function's outputs elsewhere); `out` as it is when it has no such outputs (a
    call returning eigenvalues only)."""
    if not isinstance(out, tuple) or not isinstance(reference, tuple):
        return out
    return tuple(align_columns(item, reference[k], ops) if k in positions and k < len(reference)
                 else item for k, item in enumerate(out))


def phase_invariant(cotangent: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """`cotangent` less its part that moves with the phases of complex `vectors` (for each
    column, `Im(sum(g * v))`, the rate at which the pairing changes under `v -> v e^(i t)`,
    is removed): a random cotangent that a phase-invariant program could give. Real vectors'
    cotangents are returned as they are (a sign does not move continuously)."""
    if not np.iscomplexobj(vectors) or not np.iscomplexobj(cotangent):
        return cotangent
    moved = np.imag(np.sum(cotangent * vectors, axis=-2, keepdims=True))
    norms = np.sum(np.abs(vectors) ** 2, axis=-2, keepdims=True)
    return (cotangent - 1j * moved * np.conj(vectors) / norms).astype(cotangent.dtype)

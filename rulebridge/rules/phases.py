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

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import NoDerivativeError
from .levels import primal
from .rule import function_name

PHASES = "__rulebridge_phases__"  # the attribute: a `Phases`
NUMPY_OPS = (np.sum, np.conj, np.abs, np.expand_dims)
Ops = tuple[Callable, Callable, Callable, Callable]


@dataclass(frozen=True)
class Phases:
    """Outputs holding vectors fixed up to a factor each: {output position: axis along which a
    vector's entries lie} (-2: in columns, as eigh's; -1: in rows, as svd's Vh). `complex_too`:
    complex vectors' phases too; False where the function fixes them by a continuous convention
    of its own (Householder QR's real diagonal of R), which an alignment would change."""

    outputs: dict
    complex_too: bool = True

    def aligned(self, out: Any) -> dict[int, int]:
        """The outputs of `out` (a call's outputs) to align: {} for a call without them."""
        if not isinstance(out, tuple):
            return {}
        return {k: axis for k, axis in self.outputs.items() if k < len(out)
                and (self.complex_too or not np.iscomplexobj(out[k]))}


def align_columns(vectors: Any, reference: Any, ops: Ops = NUMPY_OPS, axis: int = -2) -> Any:
    """`vectors` with each column (each row for `axis=-1`) multiplied by the factor of modulus
    one that makes it the same column of `reference`.

    Parameters
    ----------
    vectors, reference : array, shape (..., n, k)
        Columns standing for the same vectors up to a factor each; `reference` is a constant.
    ops : tuple of callables
        `sum`, `conj`, `abs` and `expand_dims` of the library `vectors` belongs to (NumPy's by
        default; a source's own, to differentiate through the alignment).
    axis : int
        The axis along which each vector's entries lie: -2 (columns) or -1 (rows).

    Returns
    -------
    array
        The aligned vectors (a column orthogonal to its reference gives NaN: nothing to align).
    """
    sum_, conj, abs_, expand_dims = ops
    overlap = sum_(conj(vectors) * reference, axis=axis)
    return vectors * expand_dims(overlap / abs_(overlap), axis)


def align_outputs(out: Any, reference: Any, phases: Phases, ops: Ops = NUMPY_OPS) -> Any:
    """A function's outputs `out` with the vectors `phases` names aligned to `reference`'s (the
    same function's outputs elsewhere); `out` as it is when it has no such outputs (a call
    returning eigenvalues only)."""
    aligned = phases.aligned(out) if isinstance(reference, tuple) else {}
    return tuple(align_columns(item, reference[k], ops, aligned[k]) if k in aligned else item
                 for k, item in enumerate(out)) if aligned else out


def phase_motion(cotangent: np.ndarray, vectors: np.ndarray, axis: int = -2) -> np.ndarray:
    """For each vector, `Im(sum(g * v))`: the rate at which a program with cotangent `g` moves
    under `v -> v e^(i t)` (the bilinear pairing of cotangents); zero for a program that does
    not depend on the vectors' phases. Kept as a length-1 `axis`."""
    return np.imag(np.sum(cotangent * vectors, axis=axis, keepdims=True))


def phase_invariant(cotangent: np.ndarray, vectors: np.ndarray, axis: int = -2) -> np.ndarray:
    """`cotangent` less its part that moves with the phases of complex `vectors`
    (`phase_motion` is removed): a random cotangent that a phase-invariant program could give.
    Real vectors' cotangents are returned as they are (a sign does not move continuously)."""
    if not np.iscomplexobj(vectors) or not np.iscomplexobj(cotangent):
        return cotangent
    norms = np.sum(np.abs(vectors) ** 2, axis=axis, keepdims=True)
    moved = phase_motion(cotangent, vectors, axis)
    return (cotangent - 1j * moved * np.conj(vectors) / norms).astype(cotangent.dtype)


#: NumPy's functions whose complex vectors are fixed only up to a phase each, as LAPACK leaves
#: them: their imported rules' pullbacks refuse a cotangent that moves with the phases
#: (`refuse_phase_dependence`), as the `rulebridge.scipy` drop-ins' do (rulebridge/scipy/gauge.py).
NUMPY_VECTORS = {np.linalg.eigh: Phases({1: -2}), np.linalg.eig: Phases({1: -2})}


def refuse_phase_dependence(function: Callable, cotangents: tuple, found: tuple,
                            aligned: dict[int, int]) -> None:
    """Refuse a cotangent of complex vectors that moves with their phases: the program's value
    then depends on a phase LAPACK picks as it likes (the sources' rules differentiate another
    choice than NumPy's or SciPy's, 10-90% off), and PyTorch refuses the same:
    `phase_motion` must vanish for every vector of `found`, the call's outputs."""
    for k, axis in aligned.items():
        g, vectors = cotangents[k], found[k]
        if g is None or not np.iscomplexobj(vectors):
            continue
        # under nesting both are an enclosing level's boxes: the refusal reads their values
        g, vectors = np.asarray(primal(g)), np.asarray(primal(vectors))
        scale = np.sum(np.abs(g) * np.abs(vectors), axis=axis, keepdims=True)
        if np.any(np.abs(phase_motion(g, vectors, axis)) >
                  np.sqrt(np.finfo(vectors.dtype).eps) * scale):
            raise NoDerivativeError(
                f"{function_name(function)}: the program depends on the phases of complex "
                "eigenvectors, which LAPACK picks as it likes (any e^(i t) v is as good): such "
                "a function of them has no derivative. Use phase-invariant functions of the "
                "vectors (abs(v) ** 2, v @ v.conj().T, the eigenvalues), or fix a phase "
                "yourself: v * (v[0].conj() / abs(v[0])) for each column.")

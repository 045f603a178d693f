"""Where JAX's same-named function means something else than NumPy's: the one table of decisions.

Every other covered function is called as `jax_function(*numpy_args, **numpy_kwargs)`. For the
names below the pullback differentiates a JAX program written to mean exactly what NumPy's
function computes (`jax=`), optionally after rewriting NumPy's arguments into a form JAX can
trace (`prepare=`), or the rule is not offered at all (`declined=`).

Differences handled elsewhere, for every function alike:
- dtype promotion: NumPy's output cotangent is cast to JAX's output dtype inside the compiled
  pullback and each input cotangent to its input's dtype (pullback.py), so a different promotion
  (int64 + float32 is float64 in NumPy, float32 in JAX) never changes a cotangent's dtype;
- weak types: Python floats are passed as weakly typed inputs, as NumPy 2 treats them (NEP 50);
- out-of-bounds indices: NumPy's forward has raised before any pullback runs, so JAX's clamping
  or filling of out-of-bounds indices is never reached (negative indices wrap in both).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Callable

import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class Meaning:
    jax: Callable | None = None  # takes NumPy's arguments, computes NumPy's function in JAX
    prepare: Callable | None = None  # (args, kwargs) -> (args, kwargs), NumPy side, pullback only
    declined: str = ""  # why the rule is not offered


def _hermitian(a, uplo: str):
    """The Hermitian matrix LAPACK reads from one triangle of `a` (diagonal's real part only)."""
    a = jnp.asarray(a)
    upper = (uplo or "L").upper() == "U"
    part = jnp.triu(a, 1) if upper else jnp.tril(a, -1)
    diagonal = jnp.real(jnp.diagonal(a, axis1=-2, axis2=-1)).astype(a.dtype)
    return part + jnp.conj(jnp.swapaxes(part, -1, -2)) + diagonal[..., None] * jnp.eye(
        a.shape[-1], dtype=a.dtype)


def _cholesky(a, upper=False):
    return jnp.linalg.cholesky(_hermitian(a, "U" if upper else "L"), upper=upper,
                               symmetrize_input=False)


def _eigh(a, UPLO="L"):
    return jnp.linalg.eigh(_hermitian(a, UPLO), UPLO=UPLO, symmetrize_input=False)


def _eigvalsh(a, UPLO="L"):
    return jnp.linalg.eigvalsh(_hermitian(a, UPLO), UPLO=UPLO, symmetrize_input=False)


_TAKE_MODE = {"raise": "wrap", "wrap": "wrap", "clip": "clip"}


def _take(a, indices, axis=None, out=None, mode="raise"):
    # NumPy's default "raise" accepted these indices in [-n, n): JAX's "wrap" reads the same ones
    # (JAX's default, "fill", would also do, but says nothing about NumPy's meaning).
    return jnp.take(a, indices, axis=axis, mode=_TAKE_MODE[mode])


def _pinv(a, rcond=None, hermitian=False, *, rtol=None):
    # NumPy's cutoff is rcond, else rtol, else 1e-15; JAX's default is 10 * max(m, n) * eps.
    cutoff = rcond if rcond is not None else (rtol if rtol is not None else 1e-15)
    return jnp.linalg.pinv(a, rtol=cutoff, hermitian=hermitian)


def _getitem(x, index):
    return x[index]


def _traceable_index(args, kwargs):
    """Boolean masks become the integer indices they select (JAX cannot trace a mask's data-
    dependent shape); lists become arrays, as NumPy 2 reads them; integers become 0-d integer
    arrays (the same index to NumPy and JAX), so `x[i]` in a loop over `i` compiles once."""
    x, index = args
    parts = index if type(index) is tuple else (index,)
    rewritten = []
    for part in parts:
        if type(part) is list:
            part = np.asarray(part)
        if isinstance(part, np.ndarray) and part.dtype == np.bool_:
            rewritten.extend(np.nonzero(part))
        elif isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_)):
            rewritten.append(np.asarray(part, dtype=np.intp))
        else:
            rewritten.append(part)
    single = type(index) is not tuple and len(rewritten) == 1
    return (x, rewritten[0] if single else tuple(rewritten)), kwargs


MEANINGS: dict[Callable, Meaning] = {
    # LAPACK reads one triangle; JAX symmetrizes by default, which halves the off-diagonal
    # gradient between both triangles. Differentiate the matrix NumPy actually factorizes.
    np.linalg.cholesky: Meaning(jax=_cholesky),
    np.linalg.eigh: Meaning(jax=_eigh),
    np.linalg.eigvalsh: Meaning(jax=_eigvalsh),
    np.take: Meaning(jax=_take),  # out-of-bounds mode: NumPy "raise" has no JAX spelling
    np.linalg.pinv: Meaning(jax=_pinv),  # different default cutoff for small singular values
    operator.getitem: Meaning(jax=_getitem, prepare=_traceable_index),
    # Eigenvectors of a general matrix are defined up to a complex phase that LAPACK and JAX's
    # derivative fix differently; eigenvalue-only gradients come from np.linalg.eigvals.
    np.linalg.eig: Meaning(declined="eigenvector gradients depend on a phase convention JAX "
                                    "and LAPACK do not share; use np.linalg.eigvals or eigh"),
}

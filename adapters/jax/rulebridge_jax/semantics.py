"""Where JAX's same-named function means something else than NumPy's: the one table of decisions.

Every other covered function is called as `jax_function(*numpy_args, **numpy_kwargs)`. For the
names below the pullback differentiates a JAX program written to mean exactly what NumPy's
function computes (`jax=`), optionally after rewriting NumPy's arguments into a form JAX can
trace (`prepare=`), or the rule is not offered at all (`declined=`).

Differences handled elsewhere, for every function alike:
- one triangle: cholesky, eigh, eigvalsh, and pinv/svd with hermitian=True read one triangle of
  the matrix; JAX's pullback runs at the Hermitian matrix NumPy reads and its cotangent goes
  through `rulebridge.lower_triangle_cotangent` (adapter.py);
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
import scipy.special

from .arguments import Concrete


@dataclass(frozen=True)
class Meaning:
    jax: Callable | None = None  # takes NumPy's arguments, computes NumPy's function in JAX
    # (None: JAX's same-named function)
    prepare: Callable | None = None  # (args, kwargs) -> (args, kwargs), NumPy side, pullback only
    declined: str = ""  # why the rule is not offered
    real_only: str = ""  # why it is not offered for complex arguments


_TAKE_MODE = {"raise": "wrap", "wrap": "wrap", "clip": "clip"}


def _take(a, indices, axis=None, out=None, mode="raise"):
    # NumPy's default "raise" accepted these indices in [-n, n): JAX's "wrap" reads the same ones
    # (JAX's default, "fill", would also do, but says nothing about NumPy's meaning).
    return jnp.take(a, indices, axis=axis, mode=_TAKE_MODE[mode])


def _clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    # NumPy spells the bounds a_min/a_max or min/max; JAX only min/max.
    return jnp.clip(a, a_min if a_min is not None else min, a_max if a_max is not None else max)


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


def _concrete_integers(args, kwargs):
    """Integer arrays become static (see `Concrete`): JAX needs their values to trace."""
    def concrete(a):
        return Concrete(a) if type(a) is np.ndarray and a.dtype.kind in "biu" else a

    return tuple(concrete(a) for a in args), {k: concrete(v) for k, v in kwargs.items()}


def _concrete_orders(args, kwargs):
    """A float `ord` (norm's order, positional or keyword) is static to JAX, not an input."""
    def concrete(a):
        return Concrete(a) if isinstance(a, (float, np.floating)) else a

    return (args[0], *(concrete(a) for a in args[1:])), {k: concrete(v) if k == "ord" else v
                                                          for k, v in kwargs.items()}


def _choose(a, choices, out=None, mode="raise"):
    return jnp.choose(a, choices, mode=_TAKE_MODE[mode])  # NumPy has checked the indices


MEANINGS: dict[Callable, Meaning] = {
    np.clip: Meaning(jax=_clip, real_only="JAX's clip refuses complex input"),  # a_min/a_max
    np.take: Meaning(jax=_take),  # out-of-bounds mode: NumPy "raise" has no JAX spelling
    np.linalg.pinv: Meaning(jax=_pinv),  # different default cutoff for small singular values
    operator.getitem: Meaning(jax=_getitem, prepare=_traceable_index),
    np.choose: Meaning(jax=_choose),
    # JAX needs these index or count arrays as concrete values: one compilation per value.
    np.delete: Meaning(prepare=_concrete_integers),
    np.insert: Meaning(prepare=_concrete_integers),
    np.repeat: Meaning(prepare=_concrete_integers),
    np.linalg.norm: Meaning(prepare=_concrete_orders),
    np.linalg.vector_norm: Meaning(prepare=_concrete_orders),
    np.linalg.matrix_norm: Meaning(prepare=_concrete_orders),
    # Same name, different result: not offered.
    np.partition: Meaning(declined="the order of elements on each side of the kth is "
                                   "implementation-defined and differs between NumPy and JAX"),
    np.polydiv: Meaning(declined="JAX returns the remainder with a different length"),
    np.nextafter: Meaning(declined="JAX has no derivative for nextafter"),
    np.spacing: Meaning(declined="JAX has no derivative for spacing (nextafter)"),
    scipy.special.spence: Meaning(declined="JAX 0.10's derivative of spence is NaN on (1, 2]"),
    # NumPy 2's sign of complex z is z/|z|, smooth away from 0; JAX differentiates it as a step.
    np.sign: Meaning(real_only="JAX's derivative of sign is zero, NumPy's complex sign is z/|z|"),
    **{f: Meaning(real_only=f"JAX's {f.__name__} refuses complex input") for f in (
        np.median, np.nanmedian, scipy.special.dawsn, scipy.special.erf,
        scipy.special.erfc, scipy.special.exp1, scipy.special.expi, scipy.special.fresnel,
        scipy.special.hyp1f1, scipy.special.hyp2f1, scipy.special.log_ndtr,
        scipy.special.loggamma, scipy.special.ndtr, scipy.special.psi, scipy.special.sici)},
    # Eigenvectors of a general matrix are defined up to a complex phase that LAPACK and JAX's
    # derivative fix differently; eigenvalue-only gradients come from np.linalg.eigvals.
    np.linalg.eig: Meaning(declined="eigenvector gradients depend on a phase convention JAX "
                                    "and LAPACK do not share; use np.linalg.eigvals or eigh"),
}

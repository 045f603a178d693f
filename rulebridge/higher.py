"""Derivatives of higher order: `hessian`, `hvp` and `jacrev`, built on nesting.

A differentiation started inside another is a trace of a higher level (rulebridge/rules/levels.py):
its boxes hold the enclosing trace's boxes, and its sweep's pullbacks, run on those, are recorded
by the enclosing trace. So `jacobian(grad(f))` is the Hessian and `grad` of `<grad(f)(x), v>` a
Hessian-vector product, reverse over reverse, with no second engine. Every rule whose pullback
is NumPy code differentiates again (autograd's, the engine's own); a pullback that is not (a
jitted JAX function) is refused with the function and the source named.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from .api import grad, jacobian
from .engine.box import Traced
from .errors import UsageError
from .tree import tree_flatten

#: JAX's name for the reverse-mode Jacobian: `rulebridge.jacobian` itself.
jacrev = jacobian


def hessian(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
            source: str | None = None) -> Callable[..., Any]:
    """The Hessian of real scalar-valued `f`: `jacobian(grad(f))`, as `jax.hessian` lays it out.

    Parameters
    ----------
    f : callable
        A function of NumPy code returning a real scalar; with `has_aux`, `(scalar, aux)`.
    argnums, has_aux, source
        As for `grad`. Containers are differentiated leaf by leaf.

    Returns
    -------
    callable
        Taking `f`'s arguments and returning the Hessian: for an int `argnums` and an argument
        leaf of shape `S`, an array of shape `S + S`; for a container argument, the gradient's
        structure with the argument's structure in each leaf (`H[k1][k2]` of shape
        `k1.shape + k2.shape`); for a sequence `argnums`, a tuple of tuples of blocks. With
        `has_aux`, `(hessian, aux)`.
    """
    return jacobian(grad(f, argnums, has_aux=has_aux, source=source), argnums, has_aux=has_aux,
                    source=source)


def hvp(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
        source: str | None = None) -> Callable[..., Any]:
    """Hessian-vector products of real scalar-valued `f`: `hvp(f)(x, v)` is `H(x) @ v` without
    forming `H` (autograd's `hessian_vector_product`), for SciPy's `hessp=`.

    Parameters
    ----------
    f : callable
        A function of NumPy code returning a real scalar; with `has_aux`, `(scalar, aux)`.
    argnums, has_aux, source
        As for `grad`.

    Returns
    -------
    callable
        `hvp_f(*args, v)`: `f`'s positional arguments followed by `v`, laid out like the
        differentiated argument (a tuple of those for a sequence `argnums`), and returning
        `H v` in that same layout; with `has_aux`, `(H v, aux)`. It costs about two
        gradients (reverse over reverse).
    """
    g = grad(f, argnums, has_aux=has_aux, source=source)

    @functools.wraps(f)
    def hvp_f(*args: Any, **kwargs: Any) -> Any:
        if not args:
            raise UsageError(f"hvp of {getattr(f, '__qualname__', f)} takes f's arguments and "
                             "then the vector.", fix="rulebridge.hvp(f)(x, v)")
        *args, v = args

        def directional(*args: Any) -> Any:
            result = g(*args, **kwargs)
            gradient, aux = result if has_aux else (result, None)
            dot = _inner(gradient, v, f)
            return (dot, aux) if has_aux else dot

        return grad(directional, argnums, has_aux=has_aux, source=source)(*args)

    return hvp_f


def _inner(gradient: Any, v: Any, f: Any) -> Any:
    """`<gradient, v>` summed over the leaves of both (the same structure)."""
    leaves, structure = tree_flatten(gradient)
    v_leaves, v_structure = tree_flatten(v)
    if v_structure != structure:
        raise UsageError(f"hvp of {getattr(f, '__qualname__', f)}: the vector is laid out as "
                         f"{v_structure}, but the differentiated argument as {structure}.",
                         fix="rulebridge.hvp(f)(x, v)  # v in x's structure (a tuple of them "
                             "for a sequence argnums)")
    total = 0.0
    for leaf, direction in zip(leaves, v_leaves):
        if leaf is not None:
            # (a box when v is traced too: differentiated, or an input of a recorded program)
            total = total + np.sum(leaf * (direction if isinstance(direction, Traced)
                                           else np.asarray(direction)))
    return total

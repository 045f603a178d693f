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

from .api import grad, jacobian, vjp
from .rules.arguments import differentiable_argnums
from .checking.check import check_call
from .checking.fd import _random_like
from .checking.firstuse import trust
from .checking.result import CheckResult
from .engine.box import Traced
from .errors import UsageError
from .rules.rule import CallForward, Rule, function_name
from .rules.signature import is_differentiable, signature_of
from .spellings import other_spellings
from .tree import tree_flatten

#: JAX's name for the reverse-mode Jacobian: `rulebridge.jacobian` itself.
jacrev = jacobian


@other_spellings
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


@other_spellings
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
        `H v` in that same layout; with `has_aux`, `(H v, aux)`. It is reverse over
        reverse, and costs 3.6 to 4 gradients (docs/performance.md).
    """
    g = grad(f, argnums, has_aux=has_aux, source=source)

    def directional(*args: Any, _rulebridge_hvp_v: Any, **kwargs: Any) -> Any:
        result = g(*args, **kwargs)
        gradient, aux = result if has_aux else (result, None)
        dot = _inner(gradient, _rulebridge_hvp_v, f)
        return (dot, aux) if has_aux else dot

    # Built once, with v passed by keyword (never differentiated, and argnums keep their
    # positions). A grad built per call, and `_inner` adding its first term to 0.0, took 3% of
    # an hvp of benchmarks/hvp.py's network (`--instructions`: 6.00M, now 5.80M per hvp).
    outer = grad(directional, argnums, has_aux=has_aux, source=source)

    @functools.wraps(f)
    def hvp_f(*args: Any, **kwargs: Any) -> Any:
        if not args:
            raise UsageError(f"hvp of {getattr(f, '__qualname__', f)} takes f's arguments and "
                             "then the vector.", fix="rulebridge.hvp(f)(x, v)")
        *args, v = args
        return outer(*args, _rulebridge_hvp_v=v, **kwargs)

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
    total = None  # (not 0.0: `0.0 + first` would be one more op to record and sweep)
    for leaf, direction in zip(leaves, v_leaves):
        if leaf is not None:
            # (a box when v is traced too: differentiated, or an input of a recorded program)
            term = np.sum(leaf * (direction if isinstance(direction, Traced)
                                  else np.asarray(direction)))
            total = term if total is None else total + term
    return 0.0 if total is None else total


def check_gradgrad(function: Callable, args: tuple, kwargs: dict, argnums: tuple | None,
                   source: str, seed: int = 0) -> CheckResult | None:
    """The second-order check of `source`'s rule for `function` at these inputs (the matrix's
    gradgrad column, PyTorch OpInfo's `gradgrad`): the pullback as a function of the traced
    arguments and the output's cotangent, `P(*xs, *ybar) = rulebridge.vjp(function)(ybar)`
    with `source`'s rules, is given the rule whose pullback is rulebridge's vjp of `P` (the
    nested differentiation users run: a pullback that is NumPy code traced, one offered as a
    rule recorded as one op), and that rule is checked against central differences of `P`
    itself. Rules are used unchecked inside (the check is this one). None where the case has
    a traced argument that is a sequence, or no differentiable output. `argnums` None: the
    arguments a first-order check differentiates by default (its float and complex arrays)."""
    if argnums is None:
        argnums = differentiable_argnums(args)
    if any(type(args[i]) in (list, tuple) for i in argnums):
        return None
    out = function(*args, **kwargs)
    several = isinstance(out, tuple)
    outs = tuple(out) if several else (out,)
    used = [k for k, o in enumerate(outs) if is_differentiable(o)]
    if not used or not argnums:
        return None
    n = len(argnums)

    def call(*xs):
        full = list(args)
        for i, x in zip(argnums, xs):
            full[i] = x
        return function(*full, **kwargs)

    def pullback_function(*flat):
        ybar = [None] * len(outs)
        for k, g in zip(used, flat[n:]):
            ybar[k] = g
        _, pull = vjp(call, *flat[:n], source=source)
        cts = pull(tuple(ybar) if several else ybar[0])
        return tuple(_zero(x) if ct is None else ct for ct, x in zip(cts, flat[:n]))

    pullback_function.__rulebridge_name__ = f"pullback of {function_name(function)}"
    rng = np.random.default_rng(seed)
    flat = tuple(args[i] for i in argnums) + tuple(_random_like(outs[k], rng) for k in used)

    def second(residuals, g, nums):
        _, at, _ = residuals

        def part(*traced):
            full = list(at)
            for i, t in zip(nums, traced):
                full[i] = t
            return pullback_function(*full)

        _, pull = vjp(part, *(at[i] for i in nums), source=source)
        return pull(g)

    rule = Rule(pullback_function, signature_of(flat), CallForward(pullback_function), second,
                source=source)
    with trust():
        return check_call(rule, flat, {}, argnums=tuple(
            i for i, a in enumerate(flat) if is_differentiable(a)), seed=seed)


def _zero(x: Any) -> Any:
    return np.zeros(np.shape(x), np.result_type(x)) if hasattr(x, "dtype") else 0.0 * x


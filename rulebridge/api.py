"""The public entry points: grad, value_and_grad, vjp, trace, elementwise_grad, jacobian and
check_grads.

Arguments and results may be containers (any nesting of tuple, list, dict and namedtuple, and
types registered with `register_container`; see rulebridge/tree.py); gradients come back in the
argument's structure. Containers are taken apart once per call (rulebridge/boundary.py), never
per op.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Concatenate, Literal, ParamSpec, Sequence, TypeVar, overload

import numpy as np

from .boundary import name_of, new_tape, positions_of  # noqa: F401 (new_tape: docs)
from .call import Call, jacobian_block, one_or_tuple, real_call, transformed
from .seeds import one_like, scalar_output, seeds_of
from .spellings import other_spellings
from .checking.gradcheck import check_gradient
from .engine.collector import collector_paused
from .engine.result import Constant
from .engine.tape import Tape
from .rules.levels import holds_box
from .rules.signature import is_differentiable
from .tree import LEAF, tree_flatten

P = ParamSpec("P")
T = TypeVar("T")  # the differentiated argument's type: its gradient's too (same structure)



# Typed by argnums: the default (the first argument) gives a gradient of that argument's type
# (the same container of arrays), another gives Any; f's parameters are kept, the differentiated
# ones positional (as rulebridge requires). One type for f in every overload: mypy then picks the
# first that matches even when f returns Any (which a user's loss usually does).
@overload
def grad(f: Callable[Concatenate[T, P], Any], argnums: Literal[0] = 0, *,
         has_aux: Literal[False] = False,
         source: str | None = None) -> Callable[Concatenate[T, P], T]: ...


@overload
def grad(f: Callable[Concatenate[T, P], Any], argnums: Literal[0] = 0, *, has_aux: Literal[True],
         source: str | None = None) -> Callable[Concatenate[T, P], tuple[T, Any]]: ...


@overload
def grad(f: Callable[Concatenate[T, P], Any], argnums: int | Sequence[int], *,
         has_aux: bool = False,
         source: str | None = None) -> Callable[Concatenate[T, P], Any]: ...


@other_spellings
def grad(f: Callable[P, Any], argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
         source: str | None = None) -> Callable[P, Any]:
    """The gradient of real scalar-valued `f` with respect to its argument `argnums`.

    Parameters
    ----------
    f : callable
        A function of NumPy code returning a real scalar (or an array of size 1, as autograd
        allows); with `has_aux`, a pair `(scalar, aux)`.
    argnums : int or sequence of int
        Which positional argument(s) to differentiate. A container argument (tuple, list, dict,
        namedtuple, registered type) is differentiated leaf by leaf: every leaf must be a float
        or complex array or scalar (as in jax.grad; an int leaf is refused, naming its path).
        None inside a container is an empty node and comes back as None.
    has_aux : bool
        `f` returns `(out, aux)`; the gradient function then returns `(gradient, aux)` with
        aux's values (no gradient flows through aux), JAX's meaning.
    source : str, optional
        The adapter whose rules to use ("autograd", "jax"); None lets rulebridge choose.

    Returns
    -------
    callable
        Taking `f`'s arguments and returning the gradient: for an int `argnums`, one gradient
        in the argument's structure, each leaf with its leaf's shape, dtype and type; for a
        sequence, a tuple of those (a position named twice gives two distinct arrays). Every
        returned array is new and writable, and shares memory with nothing the caller holds.
    """
    value_and_grad_f: Callable[..., tuple[Any, Any]] = value_and_grad(
        f, argnums, has_aux=has_aux, source=source)

    @functools.wraps(f)
    def grad_f(*args: P.args, **kwargs: P.kwargs) -> Any:
        value, g = value_and_grad_f(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return transformed(grad_f, "grad", f, argnums, has_aux, source)


@overload
def value_and_grad(f: Callable[Concatenate[T, P], Any], argnums: Literal[0] = 0, *,
                   has_aux: bool = False,
                   source: str | None = None) -> Callable[Concatenate[T, P], tuple[Any, T]]: ...


@overload
def value_and_grad(f: Callable[Concatenate[T, P], Any], argnums: int | Sequence[int], *,
                   has_aux: bool = False,
                   source: str | None = None) -> Callable[Concatenate[T, P], tuple[Any, Any]]: ...


@other_spellings
def value_and_grad(f: Callable[P, Any], argnums: int | Sequence[int] = 0, *,
                   has_aux: bool = False,
                   source: str | None = None) -> Callable[P, tuple[Any, Any]]:
    """Like `grad`, returning `(f(*args), gradient)`; with `has_aux`, `((out, aux), gradient)`.

    Parameters
    ----------
    f, argnums, has_aux, source
        As for `grad`.

    Returns
    -------
    callable
        Taking `f`'s arguments and returning the pair `(value, gradient)`.
    """

    @functools.wraps(f)
    def value_and_grad_f(*args: P.args, **kwargs: P.kwargs) -> tuple[Any, Any]:
        with collector_paused:
            return _value_and_grad(f, argnums, has_aux, source, args, kwargs)

    return transformed(value_and_grad_f, "value_and_grad", f, argnums, has_aux, source)


def _value_and_grad(f, argnums, has_aux, source, args, kwargs):
    call = Call(f, args, kwargs, positions_of(f, argnums, len(args)), has_aux, source,
                reverse_only=True, replayed=False)  # its tape is swept once, never replayed
    value = scalar_output(f, call.structure, call.values)
    call.run.tape.shed_large_values()
    var = call.variables[0]
    grads = call.gradients({var: one_like(value)} if var is not None else {}, value, call.aux)
    return (value, call.aux) if has_aux else value, one_or_tuple(argnums, grads)


Pullback = Callable[[Any], tuple[Any, ...]]


# Two results or three, by has_aux: an overload each, so that unpacking them type-checks.
@overload
def vjp(f: Callable[..., Any], *args: Any, has_aux: Literal[False] = False,
        source: str | None = None) -> tuple[Any, Pullback]: ...


@overload
def vjp(f: Callable[..., Any], *args: Any, has_aux: Literal[True],
        source: str | None = None) -> tuple[Any, Pullback, Any]: ...


def vjp(f: Callable[..., Any], *args: Any, has_aux: bool = False,
        source: str | None = None) -> tuple[Any, ...]:
    """`(y, pullback)`: `y = f(*args)` and the vector-Jacobian product of `f` at `args`;
    `(y, pullback, aux)` with `has_aux`.

    Parameters
    ----------
    f : callable
        A function of NumPy code; it may return an array, a scalar or a container of them.
    *args
        Its positional arguments, arrays, scalars or containers of them. Every float or complex
        leaf is traced; other leaves are constants.
    has_aux : bool
        `f` returns `(y, aux)`: aux's values come back as a third result, and no cotangent
        flows through them (JAX's meaning).
    source : str, optional
        The adapter whose rules to use; None lets rulebridge choose.

    Returns
    -------
    y
        `f(*args)`, containers rebuilt with plain values.
    pullback : callable
        `pullback(ybar)` with `ybar` laid out like `y` (None for an output, or a whole part of
        a container, that gets no cotangent; a tuple and a list of the same length match)
        returns a tuple with one cotangent per positional argument, in the argument's
        structure (None for a leaf that is not a float or complex array or scalar). It can be
        called any number of times.
    aux
        With `has_aux` only: aux's values.
    """
    with collector_paused:
        call = Call(f, args, {}, range(len(args)), has_aux, source, strict=False, own=True,
                    reverse_only=True, replayed=False)  # only swept, by the pullback
    # The pullback outlives this call: what the caller gets is its own (a copy where the tape
    # may read it), and the arguments' memory, which the tape reads, is sealed.
    run, structure, variables, aux = call.run, call.structure, call.variables, call.aux
    values = run.owned(call.values, [var is not None for var in variables])
    y = structure.unflatten(values)
    run.tape.shed_large_values()
    sealed = run.seal()

    def pullback(ybar: Any) -> tuple[Any, ...]:
        ybars = [ybar] if structure is LEAF else structure.flatten_up_to(ybar, "ybar")
        seeds = seeds_of(f, structure, values, variables, ybars)
        if holds_box(tuple(seeds.values())):  # cotangents of a differentiation around the call:
            run.tape.nested = True  # the sweep's pullbacks are handed its boxes (sweep.py)
        run.check_sealed(sealed, "was called")
        with collector_paused:
            grads = call.gradients(seeds, ybar, y, aux)
        run.check_sealed(sealed, "ran while the caller wrote")  # another thread
        return grads

    return (y, pullback, aux) if has_aux else (y, pullback)


def trace(f: Callable[..., Any], *args: Any, source: str | None = None) -> tuple[Any, Tape]:
    """`(y, tape)`: run `f` once, recording every op; `print(tape)`, `tape.replay(*new_args)`
    (new positional arguments of the same structures and constants, or one new value per
    traced input in the order the inputs were traced).

    Parameters
    ----------
    f : callable
        A function of NumPy code.
    *args
        Its positional arguments (containers too: each float or complex leaf is traced).
    source : str, optional
        The adapter whose rules to use; None lets rulebridge choose.
    """
    with collector_paused:
        call = Call(f, args, {}, range(len(args)), False, source, strict=False)
    run, structure, values, variables = call.run, call.structure, call.values, call.variables
    tape = run.tape
    tape.outputs = (variables[0] if structure is LEAF and variables[0] is not None else
                    structure.unflatten([Constant(v) if var is None else var
                                         for v, var in zip(values, variables)]))
    tape.arguments = [(arg.structure, [Constant(leaf) if var is None else var
                                       for leaf, var in zip(arg.leaves, arg.variables)])
                      for arg in (run.traced[i] for i in range(len(args)))]
    return structure.unflatten(values), tape


# A ufunc (np.tanh) is the usual argument of elementwise_grad and jacobian, and its parameters
# are overloads a ParamSpec would take only the first of (scalars): it gets its own signature.
@overload
def elementwise_grad(f: np.ufunc, argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
                     source: str | None = None) -> Callable[..., Any]: ...


@overload
def elementwise_grad(f: Callable[P, Any], argnums: int | Sequence[int] = 0, *,
                     has_aux: bool = False, source: str | None = None) -> Callable[P, Any]: ...


@other_spellings
def elementwise_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *,
                     has_aux: bool = False, source: str | None = None) -> Callable[..., Any]:
    """The gradient of `sum(f(*args))`, autograd's `elementwise_grad`: for `f` that acts
    elementwise, each entry is the derivative of the matching entry of `f`'s output.

    Parameters
    ----------
    f : callable
        A function returning a real array (or a container of them, every leaf summed); with
        `has_aux`, a pair `(out, aux)`.
    argnums, has_aux, source
        As for `grad`: with `has_aux`, the result is `(gradient, aux)`.

    Returns
    -------
    callable
        Taking `f`'s arguments and returning the gradient(s), as `grad` does.
    """

    @functools.wraps(f)
    def elementwise_grad_f(*args: Any, **kwargs: Any) -> Any:
        with collector_paused:
            call = real_call(f, "elementwise_grad", argnums, has_aux, source, args, kwargs)
            ones = [np.ones_like(v) if is_differentiable(v) else None for v in call.values]
            grads = call.gradients(
                seeds_of(f, call.structure, call.values, call.variables, ones), call.aux)
        g = one_or_tuple(argnums, grads)
        return (g, call.aux) if has_aux else g

    return elementwise_grad_f


@overload
def jacobian(f: np.ufunc, argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
             source: str | None = None) -> Callable[..., Any]: ...


@overload
def jacobian(f: Callable[P, Any], argnums: int | Sequence[int] = 0, *, has_aux: bool = False,
             source: str | None = None) -> Callable[P, Any]: ...


@other_spellings
def jacobian(f: Callable[..., Any], argnums: int | Sequence[int] = 0, *,
             has_aux: bool = False, source: str | None = None) -> Callable[..., Any]:
    """The Jacobian of `f` in reverse mode (JAX's `jacrev`): one forward pass, then one sweep
    per entry of the output.

    Parameters
    ----------
    f : callable
        A function returning a real array or scalar, or a container of them; with `has_aux`,
        a pair `(out, aux)`.
    argnums, has_aux, source
        As for `grad` (the argument(s) may be containers): with `has_aux`, the result is
        `(jacobian, aux)`, as `jax.jacrev(f, has_aux=True)` returns.

    Returns
    -------
    callable
        Taking `f`'s arguments and returning, for each output leaf of shape `S`, the argument's
        structure with each leaf of shape `S + leaf.shape` and the leaf's dtype (a tuple over
        `argnums` when it is a sequence), laid out in the output's structure.
    """

    @functools.wraps(f)
    def jacobian_f(*args: Any, **kwargs: Any) -> Any:
        with collector_paused:
            call = real_call(f, "jacobian", argnums, has_aux, source, args, kwargs)
            call.run.tape.shed_large_values()
            blocks = [jacobian_block(call, k) for k in range(len(call.values))]
        jac = call.structure.unflatten([one_or_tuple(argnums, b) for b in blocks])
        return (jac, call.aux) if has_aux else jac

    return transformed(jacobian_f, "jacobian", f, argnums, has_aux, source)


def check_grads(f: Callable[..., Any], *args: Any, argnums: int | Sequence[int] | None = None,
                source: str | None = None, directions: int = 3, seed: int = 0,
                rtol: float | None = None, atol: float | None = None) -> float:
    """Check rulebridge's gradient of a whole function at these inputs against float64 central
    differences of the function itself (a dot-product test, like `jax.test_util.check_grads`
    and `scipy.optimize.check_grad`): for random tangents `xdot` over every differentiated
    leaf and random cotangents `ybar` of the outputs, `Re<vjp(ybar), xdot>` must equal
    `Re<ybar, J xdot>`.

    Parameters
    ----------
    f : callable
        A function of NumPy code returning arrays, scalars or containers of them. It is called
        again on float64 copies of the inputs for the finite differences.
    *args
        The inputs to check at (containers too).
    argnums : int or sequence of int, optional
        The arguments to differentiate; default every argument with a float or complex leaf.
    source : str, optional
        The adapter whose rules to use; None lets rulebridge choose.
    directions : int
        How many random (tangent, cotangent) pairs to try.
    seed : int
        Seed of the random directions.
    rtol, atol : float, optional
        Tolerances; default by the lowest precision among the inputs (float64 1e-6 and 1e-8,
        float32 2e-3 and 2e-5), as `check_rule` uses.

    Returns
    -------
    float
        The worst relative error found (below `rtol`).

    Raises
    ------
    GradientCheckError
        When the gradient disagrees with finite differences (its message gives the worst
        relative error, the direction, and both numbers), or the finite differences cannot
        decide at these inputs (a kink, a non-finite value).
    """
    if argnums is None:
        positions = tuple(i for i, a in enumerate(args)
                          if any(is_differentiable(leaf) for leaf in tree_flatten(a)[0]))
    else:
        positions = tuple(dict.fromkeys(positions_of(f, argnums, len(args))))

    def pullback_at(xs: tuple) -> tuple[Any, Callable[[Any], tuple]]:
        y, pull = vjp(lambda *diff: f(*_with(xs, positions, diff)),
                      *[xs[i] for i in positions], source=source)
        return y, pull

    return check_gradient(name_of(f), f, args, positions, pullback_at, directions=directions,
                          seed=seed, rtol=rtol, atol=atol)


# -- helpers ----------------------------------------------------------------------------------


def _with(args: tuple, positions, values) -> tuple:
    out = list(args)
    for i, v in zip(positions, values):
        out[i] = v
    return tuple(out)

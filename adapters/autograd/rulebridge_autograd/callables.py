"""Functions passed as arguments (`odeint`'s dynamics), differentiated by rulebridge itself.

autograd's rule for `scipy.integrate.odeint` differentiates the dynamics function it is given by
calling it on autograd's boxes. The user's dynamics are plain NumPy code, which takes
rulebridge's boxes, not autograd's; so autograd is handed a primitive that runs the user's
function on plain values and whose VJP is `rulebridge.vjp` of that function: the dynamics'
derivatives come from the rules rulebridge imports for the NumPy calls inside them.
"""

from __future__ import annotations

import functools
import types
import warnings
from typing import Callable

import numpy as np

import rulebridge

FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                  functools.partial)


def takes_functions(signature: tuple) -> tuple[int, ...]:
    """The positions of a signature that are Python functions."""
    return tuple(i for i, spec in enumerate(signature)
                 if isinstance(spec, type) and issubclass(spec, FUNCTION_TYPES))


def bridged(equivalent: Callable) -> Callable:
    """`equivalent` with every function argument replaced by `as_primitive(function)`."""
    @functools.wraps(equivalent)
    def call(*args, **kwargs):
        return equivalent(*(as_primitive(a) if isinstance(a, FUNCTION_TYPES) else a
                            for a in args), **kwargs)

    return call


def as_primitive(function: Callable) -> Callable:
    """`function` as an autograd primitive whose VJP is rulebridge's gradient of it."""
    from autograd.extend import defvjp_argnums, primitive

    @primitive
    def call(*args):
        return function(*args)

    def vjp_maker(argnums, ans, args, kwargs):
        _, pullback = rulebridge.vjp(function, *args)

        def vjp(g):
            cts = pullback(g)
            return [np.zeros_like(args[i]) if cts[i] is None else cts[i] for i in argnums]

        return vjp

    defvjp_argnums(call, vjp_maker)
    return call


def quiet(pullback: Callable) -> Callable:
    """`pullback` without autograd's "Output seems independent of input" warning, which its
    odeint adjoint raises for dynamics that take no parameters (a zero gradient, correctly)."""
    def call(*args):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Output seems independent of input")
            return pullback(*args)

    return call

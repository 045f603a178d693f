"""autograd's pushforwards: the JVPs it registers with `defjvp` (`autograd.core.primitive_jvps`,
most of them in autograd/numpy/numpy_jvps.py), called on the op's residuals as the VJP makers
are, and for functions autograd writes in terms of its primitives, autograd's own forward-mode
tracer (`make_jvp`) over that composition. rulebridge checks each at the first inputs of a key
before trusting it, so a JVP whose argument layout differs from NumPy's is caught there (and the
op is then pushed forward through its pullback)."""

from __future__ import annotations

from typing import Callable

import rulebridge

_NO_KWARGS: dict = {}  # only ever unpacked


def primitive_pushforward(jvp_maker: Callable) -> Callable:
    """A `Rule.jvp` over `(output, args, kwargs)` residuals from autograd's registered JVP."""
    def jvp(residuals, tangents, argnums):
        out, args, kwargs = residuals
        return _conformed(jvp_maker(argnums, tangents, out, args, kwargs or _NO_KWARGS), out)

    return jvp


def zero_pushforward(residuals, tangents, argnums):
    """A function autograd marks as having no gradient (a count, a comparison): zero tangent."""
    return None


def composite_pushforward(program: Callable) -> Callable:
    """autograd's forward-mode tracer differentiating `program`, autograd's composition of its
    primitives, along the tangents of the traced arguments."""
    from autograd.core import make_jvp

    def jvp(residuals, tangents, argnums):
        out, args, kwargs = residuals
        _, tangent = make_jvp(traced_call(program, args, kwargs, argnums),
                              tuple(args[i] for i in argnums))(tuple(tangents))
        return _conformed(tangent, out)

    return jvp


def traced_call(program: Callable, args: tuple, kwargs, argnums: tuple) -> Callable:
    """`traced -> program(*args, **kwargs)` with the arguments at `argnums` replaced by the
    items of `traced` (what autograd's tracers differentiate)."""
    kwargs = kwargs or _NO_KWARGS

    def of_traced(traced):
        full = list(args)
        for i, value in zip(argnums, traced):
            full[i] = value
        return program(*full, **kwargs)

    return of_traced


def _conformed(tangent, out):
    if type(out) is tuple or type(out) is list:
        return tuple(None if t is None else rulebridge.conform_cotangent(t, o)
                     for t, o in zip(tangent, out))
    return rulebridge.conform_cotangent(tangent, out)

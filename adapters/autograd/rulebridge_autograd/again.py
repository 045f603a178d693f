"""An autograd pullback as a function with a rule of its own, for derivatives of higher order.

Under nesting (grad of grad, hessian) the inner sweep's pullbacks run on the enclosing level's
boxes, and rulebridge records what they do. Most of autograd's VJPs are NumPy code that it
records; some are not: a VJP that calls SciPy (`norm.cdf`'s calls `scipy.stats.norm.pdf`), one
that parses its arguments with NumPy's own helpers (`einsum`'s `_parse_einsum_input` converts
the operands), or a composite whose backward pass accumulates autograd's sparse cotangents in
place (`concatenate`, `vstack`, `prod`: `np.add.at` into a plain buffer). Those raise on boxes,
and the rule then offers its pullback as a rule (`Rule.pullback_rule`, engine/again.py):

- the function (`PullbackFunction`) takes flat arrays (the op's arguments that hold an
  enclosing level's boxes, then the used output cotangents) and returns the cotangents of the
  traced arguments: autograd's own VJP of the program (its primitive or its composite), which
  on plain values is exactly the first-order pullback;
- its pullback is autograd's VJP of that function: autograd differentiates its own VJPs, as it
  does for its higher derivatives, with its own boxes around plain values, so SciPy and
  `np.add.at` see arrays;
- it offers itself as a rule in turn (the next order), the same way.

rulebridge checks the second-order rule against central differences of the pullback itself
before using it (checking/gradgrad.py), so a VJP autograd cannot differentiate again, or gets
wrong, is refused there, never used.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Callable

import numpy as np

import rulebridge
from rulebridge import CallForward, PullbackCall, Rule

_INEXACT = (np.dtype(np.float64), np.dtype(np.complex128))


def program_pullback_rule(program: Callable, name: str,
                          function: Callable | None = None) -> Callable:
    """A `Rule.pullback_rule` over `(output, args, kwargs)` residuals for a rule whose pullback
    is autograd's VJP of `program` (autograd's function: a primitive or a composite), the rule
    of `function` (whose domain, where it declares one, the pullback's checks keep to)."""
    def pullback_rule(residuals, g, argnums):
        if type(residuals) is not tuple:  # compacted (engine/shedding.py): the values are gone
            raise TypeError("the op's residuals were compacted")
        _, args, kwargs = residuals
        kwargs = kwargs or {}
        if any(_is_box(v) for v in kwargs.values()):
            raise TypeError("a traced value among the keyword arguments")
        slots = []  # (argument, item or None) of each flat input that is an argument's leaf
        for i, a in enumerate(args):
            if type(a) is list or type(a) is tuple:
                slots.extend((i, k) for k, item in enumerate(a) if _is_box(item))
            elif _is_box(a):
                slots.append((i, None))
        outputs = []  # (argument, item or None) of each cotangent the function returns
        for i in argnums:
            a = args[i]
            leaves = [(i, k) for k in range(len(a))] if type(a) in (list, tuple) else [(i, None)]
            for slot in leaves:
                if np.result_type(rulebridge.primal(_at(args, slot))) not in _INEXACT:
                    raise TypeError("autograd's second order is offered for float64 and "
                                    "complex128 arguments only")
            outputs.extend(leaves)
        several = type(g) is tuple
        used = tuple(k for k, gk in enumerate(g) if gk is not None) if several else None
        gs = tuple(g[k] for k in used) if several else (g,)

        def first_order(*flat):
            full = [list(a) if type(a) in (list, tuple) else a for a in args]
            for slot, value in zip(slots, flat):
                _put(full, slot, value)
            full = [type(args[i])(a) if type(args[i]) in (list, tuple) else a
                    for i, a in enumerate(full)]
            cotangents = flat[len(slots):]
            if several:
                cotangent = [None] * len(g)
                for k, ck in zip(used, cotangents):
                    cotangent[k] = ck
            else:
                (cotangent,) = cotangents
            cts = _program_vjp(program, full, kwargs, argnums, cotangent)
            out = []
            for i, ct in zip(argnums, cts):
                if type(full[i]) in (list, tuple):
                    out.extend(_conformed(c, p) for c, p in zip(ct, full[i]))
                else:
                    out.append(_conformed(ct, full[i]))
            return tuple(out)

        flat = tuple(_at(args, slot) for slot in slots) + gs
        pullback = PullbackFunction(first_order, f"pullback of {name}")
        if function is not None:  # its inputs are the call's: checks keep to its domain
            pullback.function.__rulebridge_primal__ = (
                function, tuple(rulebridge.primal(a) for a in args), kwargs,
                tuple(i if k is None else None for i, k in slots))

        def assemble(cts):
            result, position = [], 0
            for i in argnums:
                a = args[i]
                if type(a) in (list, tuple):
                    result.append([_as_primal(c, p) for c, p in
                                   zip(cts[position:position + len(a)], a)])
                    position += len(a)
                else:
                    result.append(_as_primal(cts[position], a))
                    position += 1
            return tuple(result)

        return PullbackCall(pullback.rule(flat), flat, assemble)

    return pullback_rule


class PullbackFunction:
    """A function of flat arrays returning a tuple of arrays, written in autograd's functions,
    with a rule per signature whose pullback is autograd's VJP of it."""

    def __init__(self, function: Callable, name: str) -> None:
        def call(*flat):  # on plain arrays (a lower level's boxes record it there first)
            with _quiet():
                return tuple(np.asarray(o) for o in function(*flat))

        call.__rulebridge_name__ = name
        call.__qualname__ = call.__name__ = name.replace(" ", "_").replace(".", "_")
        self.function = call
        self.traceable = function  # on autograd's boxes: autograd differentiates it
        self.name = name

    def rule(self, flat: tuple) -> Rule:
        signature = rulebridge.signature_of(tuple(rulebridge.primal(a) for a in flat))
        return Rule(self.function, signature, CallForward(self.function), self._pullback,
                    source="autograd", source_version=_version(), notes="pullback",
                    pullback_rule=self._pullback_rule)

    def _pullback(self, residuals, g, argnums):
        out, flat, _ = residuals
        with _quiet():
            return _flat_vjp(self.traceable, tuple(flat), argnums, _filled(g, out))

    def _pullback_rule(self, residuals, g, argnums):
        out, flat, _ = residuals
        flat = tuple(flat)
        n = len(flat)
        boxed = tuple(p for p, a in enumerate(flat) if _is_box(a))
        g = tuple(g) if type(g) is tuple else (g,)
        used = tuple(k for k, gk in enumerate(g) if gk is not None)
        traceable = self.traceable
        shapes = tuple((np.shape(rulebridge.primal(o)), np.result_type(rulebridge.primal(o)))
                       for o in out)

        def second_order(*inputs):
            full = list(flat)
            for p, value in zip(boxed, inputs):
                full[p] = value
            cotangent = [None] * len(g)
            for k, ck in zip(used, inputs[len(boxed):]):
                cotangent[k] = ck
            cotangent = tuple(np.zeros(s, d) if c is None else c
                              for c, (s, d) in zip(cotangent, shapes))
            cts = _flat_vjp(traceable, tuple(full[:n]), argnums, cotangent)
            return tuple(_conformed(ct, full[p]) for ct, p in zip(cts, argnums))

        inputs = tuple(flat[p] for p in boxed) + tuple(g[k] for k in used)
        function = PullbackFunction(second_order, f"pullback of {self.name}")
        return PullbackCall(function.rule(inputs), inputs,
                            lambda cts: tuple(_as_primal(c, flat[p]) for c, p in
                                              zip(cts, argnums)))


def _program_vjp(program: Callable, args: list, kwargs: dict, argnums: tuple, g) -> tuple:
    """autograd's VJP of `program(*args, **kwargs)` in the arguments at `argnums`, applied to
    `g` (a tuple with None for an unused output, for several outputs)."""
    from autograd.builtins import tuple as traced_tuple
    from autograd.core import make_vjp

    def of_traced(traced):
        full = list(args)
        for i, value in zip(argnums, traced):
            full[i] = value
        out = program(*full, **kwargs)
        if type(g) is tuple or type(g) is list:
            return traced_tuple(out[k] for k, gk in enumerate(g) if gk is not None)
        return out

    vjp, _ = make_vjp(of_traced, tuple(args[i] for i in argnums))
    if type(g) is tuple or type(g) is list:
        used = tuple(gk for gk in g if gk is not None)
        return vjp(traced_tuple(used))
    return vjp(g)


def _flat_vjp(function: Callable, flat: tuple, argnums: tuple, g: tuple) -> tuple:
    """autograd's VJP of `function(*flat)` (a tuple of arrays) in the inputs at `argnums`."""
    from autograd.builtins import tuple as traced_tuple
    from autograd.core import make_vjp

    def of_traced(traced):
        full = list(flat)
        for p, value in zip(argnums, traced):
            full[p] = value
        return traced_tuple(function(*full))

    vjp, _ = make_vjp(of_traced, tuple(flat[p] for p in argnums))
    return tuple(_conformed(ct, flat[p]) for ct, p in zip(vjp(traced_tuple(g)), argnums))


def _filled(g, out) -> tuple:
    g = tuple(g) if type(g) is tuple else (g,)
    return tuple(np.zeros_like(o) if gk is None else gk for gk, o in zip(g, out))


def _conformed(ct, primal):
    """autograd's cotangent with its argument's dtype, in autograd's functions (traceable)."""
    import autograd.numpy as anp

    value = _innermost(primal)
    target = np.result_type(value)
    if ct is None:
        return anp.zeros(np.shape(value), target)
    if np.iscomplexobj(_innermost(ct)) and target.kind != "c":
        ct = anp.real(ct)
    return ct


def _as_primal(ct, primal):
    """A cotangent the recorded call returned, in its argument's form (a box: recorded)."""
    return rulebridge.conform_cotangent(ct, rulebridge.primal(primal))


def _innermost(value):
    from autograd.tracer import getval

    return rulebridge.primal(getval(value))


@contextlib.contextmanager
def _quiet():
    """Without autograd's "Output seems independent of input" warning: a cotangent that does
    not depend on an input is a zero, correctly."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Output seems independent of input")
        yield


def _is_box(value) -> bool:
    return type(value) is rulebridge.Traced


def _at(args: tuple, slot: tuple):
    i, k = slot
    return args[i] if k is None else args[i][k]


def _put(args: list, slot: tuple, value) -> None:
    i, k = slot
    if k is None:
        args[i] = value
    else:
        args[i][k] = value


def _version() -> str:
    import autograd

    return getattr(autograd, "__version__", "")

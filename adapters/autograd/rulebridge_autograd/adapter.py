"""autograd as a rulebridge rule source.

The forward is NumPy's own function, so values are NumPy's to the bit. The pullback calls the
VJP maker autograd registered for that function (`primitive_vjps`), once per op, lazily: the
residuals are just the call's arguments and output, as autograd itself keeps them.
"""

from __future__ import annotations

import dataclasses
import operator
from functools import cached_property
from typing import Callable, Iterable

import numpy as np
from autograd.core import SparseObject

import rulebridge
from rulebridge import Declined, Rule, conform_cotangent, decline_unsupported, function_name

from .again import program_pullback_rule
from .callables import bridged, quiet, takes_functions
from .catalog import Entry, entries
from .pushforward import (composite_pushforward, primitive_pushforward, traced_call,
                          zero_pushforward)
from .triangles import one_triangle
from .unboxed import per_argnum_makers

SIGNATURE_FAMILIES = ["(float32[...] | float64[...] | complex128[...] | float | complex, ...)"]
REAL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# VJPs autograd writes for real arguments only, found by the matrix's complex column: declined
# for complex arguments (an error, never a wrong number). Keyed by name: no SciPy import here.
_TRANSPOSES = "is written for real matrices (it transposes without conjugating)"
REAL_ONLY = {
    "numpy.linalg.cholesky": f"autograd's cholesky VJP {_TRANSPOSES}",
    "numpy.linalg.pinv": f"autograd's pinv VJP {_TRANSPOSES}",
    "numpy.linalg.slogdet": "autograd's slogdet VJP ignores the sign's cotangent, and a complex "
                            "matrix's sign is a differentiable phase",
    "numpy.sign": "autograd's derivative of sign is zero; NumPy's complex sign is z/|z|",
    "scipy.special.ive": "autograd's ive VJP uses sign(z) where NumPy's complex ive scales by "
                         "exp(-|Re z|)",
}


class AutogradAdapter(rulebridge.Adapter):
    name = "autograd"

    def version(self) -> str:
        import autograd

        return getattr(autograd, "__version__", "") or _distribution_version("autograd")

    @cached_property
    def table(self) -> dict[Callable, Entry]:
        return entries()

    def functions(self) -> Iterable[Callable]:
        return list(self.table)

    def signatures(self, function: Callable) -> list[str]:
        return list(SIGNATURE_FAMILIES) if function in self.table else []

    def build_rule(self, function: Callable, signature: tuple) -> Rule:
        entry = self.table.get(function)
        if entry is None:
            raise Declined(f"autograd has no VJP registered for {function_name(function)}")
        real_only = REAL_ONLY.get(function_name(function))
        if real_only:
            try:
                decline_unsupported(signature, REAL_DTYPES)
            except Declined as exc:
                raise Declined(f"{exc}: {real_only}") from None
        decline_unsupported(signature)
        return self._rule(function, signature, entry)

    def _rule(self, function: Callable, signature: tuple, entry: Entry) -> Rule:
        sparse = unary_vjp = jvp = again = None
        if entry.kind != "nograd":  # autograd's VJP of autograd's function: differentiable again
            again = program_pullback_rule(entry.wrapped, function_name(function), function)
        if entry.kind == "primitive":
            from autograd.core import primitive_jvps, primitive_vjps

            vjp_maker = primitive_vjps[entry.wrapped]
            # These keep their arguments (no compacting): the pullback differentiates only the
            # outputs that are used (_some_outputs), or reads one triangle (one_triangle).
            whole = function in SOME_OUTPUTS or rulebridge.reads_one_triangle(function)
            makers = None if whole else per_argnum_makers(vjp_maker)
            forward, pullback = _primitive_rule(entry, vjp_maker, makers, _conform)
            if entry.function is operator.getitem:  # x[i] in a loop: see _sparse_or_conform
                _, sparse = _primitive_rule(entry, vjp_maker, makers, _sparse_or_conform)
            if makers is not None:
                # The sweep calls autograd's own maker for argument 0 on `y = f(x)` ops: the
                # pullback around it costs as much as the rest of a sweep step.
                unary_vjp = makers.get(0)
            if entry.wrapped in primitive_jvps and not whole:
                jvp = primitive_pushforward(primitive_jvps[entry.wrapped])
        else:
            forward, pullback = {"nograd": _nograd_rule, "composite": _composite_rule}[
                entry.kind](entry)
            jvp = zero_pushforward if entry.kind == "nograd" else \
                composite_pushforward(entry.wrapped)
        if rulebridge.reads_one_triangle(function):
            # (its pushforward would need the same conversion: forward mode uses the pullback)
            pullback, jvp, again = one_triangle(pullback, function), None, None
        if function in SOME_OUTPUTS:
            jvp = again = None
            pullback = _some_outputs(pullback, SOME_OUTPUTS[function], function_name(function))
        return Rule(function, signature, forward, pullback, source=self.name,
                    source_version=self.version(), notes=entry.kind, sparse_pullback=sparse,
                    unary_vjp=unary_vjp, jvp=jvp, pullback_rule=again)

    # `rulebridge.import_rule`: scipy.special.logsumexp -> autograd.scipy.special.logsumexp.
    counterpart_namespaces = {"numpy": "autograd.numpy", "scipy": "autograd.scipy"}

    def counterpart(self, function: Callable) -> Callable:
        from autograd.core import primitive_vjps

        found = super().counterpart(function)
        # autograd wraps all of scipy.linalg as primitives but registers VJPs for few of them:
        # a primitive without one is a name, not a rule.
        if getattr(found, "_is_autograd_primitive", False) and found not in primitive_vjps:
            raise Declined(f"autograd has {found.__module__}.{found.__name__} but no VJP for it")
        return found

    def import_rule(self, function: Callable, signature: tuple, equivalent: Callable) -> Rule:
        from autograd.core import primitive_vjps

        functions = takes_functions(signature)
        # a function argument is static: float stands in for it in the dtype check
        decline_unsupported(tuple(float if i in functions else s
                                  for i, s in enumerate(signature)))
        if functions:  # autograd calls it on its boxes: hand it one rulebridge differentiates
            rule = self._rule(function, signature, Entry(function, bridged(equivalent),
                                                         "composite"))
            return dataclasses.replace(rule, pullback=quiet(rule.pullback), jvp=None,
                                       pullback_rule=None)
        kind = "primitive" if equivalent in primitive_vjps else "composite"
        return self._rule(function, signature, Entry(function, equivalent, kind))


_ndarray = np.ndarray
_NO_KWARGS: dict = {}  # only ever unpacked (**kwargs), never written


def _forward_of(function: Callable) -> rulebridge.CallForward:
    # NumPy's own function; the residuals (output, args, kwargs or None) are what the VJP makers
    # take. The engine runs a CallForward inline.
    return rulebridge.CallForward(function)


def _primitive_rule(entry: Entry, vjp_maker: Callable, makers: dict | None,
                    conform: Callable):
    if makers is not None:
        forward = rulebridge.CallForward(entry.function, compact=_compactor(
            makers, shape_only=entry.function is operator.getitem))
        return forward, _unboxed_pullback(entry, makers, conform)

    def pullback(residuals, g, argnums):
        out, args, kwargs = residuals
        kwargs = kwargs or _NO_KWARGS
        if type(g) is tuple:
            g = _zeros_for_missing(g, out)
        cts = vjp_maker(argnums, out, args, kwargs)(g)
        if len(argnums) == 1:
            (ct,) = cts  # a tuple, or a generator for some VJPs (einsum)
            return (conform(ct, args[argnums[0]]),)
        return tuple(conform(ct, args[i]) for i, ct in zip(argnums, cts))

    return _forward_of(entry.function), pullback


def _unboxed_pullback(entry: Entry, makers: dict, conform: Callable) -> Callable:
    first_maker = makers.get(0)

    def pullback(residuals, g, argnums):
        if type(residuals) is tuple and first_maker is not None and type(g) is not tuple:
            out, args, kwargs = residuals
            if kwargs is None and len(args) == 1:  # y = f(x), most ops: argnums is (0,)
                x = args[0]
                ct = first_maker(out, x)(g)
                if type(ct) is _ndarray and type(x) is _ndarray and ct.dtype is x.dtype:
                    return (ct,)
                return (conform(ct, x),)
        elif type(residuals) is _MadeVJPs:
            return residuals.cotangents(g, argnums, conform)
        out, args, kwargs = residuals
        if type(g) is tuple:
            g = _zeros_for_missing(g, out)
        cts = []
        for i in argnums:  # spelled out, with no helper frames: this is most of every sweep
            maker = makers.get(i)
            if maker is None:
                raise NotImplementedError(f"autograd defines no VJP of "
                                          f"{function_name(entry.function)} with respect to "
                                          f"argument {i}")
            # Positional calls: a *args call costs as much as the VJP closure itself.
            if kwargs is not None:
                ct = maker(out, *args, **kwargs)(g)
            elif len(args) == 1:
                ct = maker(out, args[0])(g)
            elif len(args) == 2:
                ct = maker(out, args[0], args[1])(g)
            else:
                ct = maker(out, *args)(g)
            primal = args[i]
            # Already conforming: an array of the argument's dtype, or a NumPy scalar of the
            # argument's own type (x[i] + s in a loop). The engine checks shapes.
            if not ((type(ct) is _ndarray and type(primal) is _ndarray
                     and ct.dtype is primal.dtype)
                    or (type(ct) is type(primal) and isinstance(ct, np.inexact))):
                ct = conform(ct, primal)
            cts.append(ct)
        return tuple(cts)

    return pullback


def _compactor(makers: dict, shape_only: bool = False) -> Callable:
    """`CallForward.compact` for per-argument makers: make each traced argument's VJP now, as
    autograd does during its forward, so the op keeps only what that VJP captures (kron's keeps
    neither its output nor the factors' values, sum's only a shape). `shape_only`: the VJP reads
    only the first argument's shape and dtype (`x[i]`'s `untake(g, i, vspace(x))`, whose lambda
    would keep all of x alive): it is made from a stand-in of one element."""
    def compact(residuals, argnums):
        out, args, kwargs = residuals
        kwargs = kwargs or _NO_KWARGS
        if shape_only and type(args[0]) is _ndarray:
            args = (np.broadcast_to(np.zeros((), args[0].dtype), args[0].shape),) + args[1:]
        vjps = {}
        for i in argnums:
            maker = makers.get(i)
            primal = args[i]
            if type(primal) is _ndarray:
                target = primal.dtype
            elif type(primal) is float or type(primal) is complex or isinstance(primal, np.inexact):
                target = primal
            else:  # a sequence, or an argument autograd has no VJP for: stay as recorded
                return residuals
            if maker is None or (type(target) is np.dtype and target.kind not in "fc"):
                return residuals
            try:
                vjps[i] = (maker(out, *args, **kwargs), target)
            except Exception:  # stay as recorded: the sweep reports it, naming the rule
                return residuals
        return _MadeVJPs(vjps, None if type(out) is _ndarray else out)

    return compact


class _MadeVJPs:
    """An op's residuals after `compact`: each traced argument's VJP, made."""

    __slots__ = ("vjps", "outputs")

    def __init__(self, vjps: dict, outputs) -> None:
        self.vjps = vjps
        self.outputs = outputs  # kept only for a function of several outputs

    def cotangents(self, g, argnums, conform) -> tuple:
        if type(g) is tuple:
            g = _zeros_for_missing(g, self.outputs)
        cts = []
        for i in argnums:
            vjp, target = self.vjps[i]
            ct = vjp(g)
            if not (type(ct) is _ndarray and ct.dtype is target):
                ct = conform(ct, np.zeros((), target) if type(target) is np.dtype else target)
            cts.append(ct)
        return tuple(cts)


def _nograd_rule(entry: Entry):
    def pullback(residuals, g, argnums):
        return (None,) * len(argnums)

    return _forward_of(entry.function), pullback


def _boxes_as_arrays() -> None:
    """Under nested differentiation a pullback runs on rulebridge's boxes of an enclosing trace
    (`rulebridge.Traced`). autograd's own tracer, which differentiates a composite function at
    pullback time, boxes them as it boxes arrays; its primitives then call NumPy on them, and
    rulebridge records those calls."""
    from autograd.extend import VSpace
    from autograd.numpy.numpy_boxes import ArrayBox
    from autograd.numpy.numpy_vspaces import ArrayVSpace, ComplexArrayVSpace

    class Space(ArrayVSpace):
        def _mut_add(self, x, y):  # adds functionally: a plain buffer cannot hold a box
            return x + y

    class ComplexSpace(ComplexArrayVSpace):
        _mut_add = Space._mut_add

    def vspace(box):  # of a stand-in of the box's shape and dtype: no value is read
        like = np.broadcast_to(np.zeros((), box.dtype), box.shape)
        return (ComplexSpace if box.dtype.kind == "c" else Space)(like)

    ArrayBox.register(rulebridge.Traced)
    VSpace.register(rulebridge.Traced, vspace)


_boxes_as_arrays()


def _composite_rule(entry: Entry):
    """autograd writes this function in terms of its primitives: let autograd's own tracer
    differentiate that composition at pullback time."""
    wrapped = entry.wrapped

    def pullback(residuals, g, argnums):
        out, args, kwargs = residuals
        if type(g) is tuple or type(g) is list:
            # autograd traces a plain tuple of boxes as no output at all (a zero gradient):
            # differentiate the used outputs alone, as one output or an autograd tuple.
            used = [k for k, gk in enumerate(g) if gk is not None]
            if not used:
                return (None,) * len(argnums)
            return _traced_vjp(_used_outputs(wrapped, used), args, kwargs, argnums,
                               g[used[0]] if len(used) == 1 else tuple(g[k] for k in used))
        return _traced_vjp(wrapped, args, kwargs, argnums, g)

    return rulebridge.CallForward(entry.function, compact=_without_output), pullback


def _without_output(residuals, argnums):
    """`CallForward.compact` of a composite: its pullback runs autograd's composition again on
    the arguments and never reads the output, so a large output is not kept for it (a stand-in
    of its shape and dtype is, for the pushforward's conversion)."""
    out, args, kwargs = residuals
    if type(out) is not _ndarray:
        return residuals
    return np.broadcast_to(np.zeros((), out.dtype), out.shape), args, kwargs


def _used_outputs(program: Callable, used: list[int]) -> Callable:
    from autograd.builtins import tuple as traced_tuple

    def used_outputs(*args, **kwargs):
        out = program(*args, **kwargs)
        return out[used[0]] if len(used) == 1 else traced_tuple(out[k] for k in used)

    return used_outputs


def _traced_vjp(program: Callable, args: tuple, kwargs, argnums, g) -> tuple:
    """autograd's own tracer differentiating `program(*args, **kwargs)` with respect to the
    arguments at `argnums`, applied to the output cotangent `g`."""
    from autograd.core import make_vjp

    vjp, _ = make_vjp(traced_call(program, args, kwargs, argnums),
                      tuple(args[i] for i in argnums))
    return tuple(_conform(ct, args[i]) for i, ct in zip(argnums, vjp(g)))


def _zeros_for_missing(g: tuple, out) -> tuple:
    return tuple(np.zeros_like(o) if gi is None else gi for gi, o in zip(g, out))


def _singular_values(a, full_matrices=True, compute_uv=True, hermitian=False):
    import autograd.numpy as anp

    if hermitian:
        raise NotImplementedError("autograd has no VJP of np.linalg.svd with hermitian=True")
    return anp.linalg.svd(a, compute_uv=False)


# autograd gives an unused output a dense zero cotangent, and its svd VJP multiplies the
# singular vectors' cotangents by 1/(s_j^2 - s_i^2): 0 * inf = NaN at repeated singular values
# (svd(I)), where the program of the singular values alone has a finite gradient. For these
# functions and sets of used outputs, the pullback is autograd's VJP of a program returning
# those outputs alone (autograd's eigh VJP skips its eigenvector term itself when that cotangent
# is zero); for the others, a cotangent that is not finite is refused (_finite).
SOME_OUTPUTS: dict[Callable, dict[tuple, Callable]] = {
    np.linalg.svd: {(False, True, False): _singular_values},
    np.linalg.eigh: {},
}


def _some_outputs(pullback: Callable, programs: dict, name: str) -> Callable:
    def some_outputs(residuals, g, argnums):
        if type(g) is not tuple:
            return pullback(residuals, g, argnums)
        used = tuple(gi is not None for gi in g)
        program = programs.get(used)
        if program is None:
            return _finite(pullback(residuals, g, argnums), g, name)
        out, args, kwargs = residuals
        (used_g,) = (gi for gi in g if gi is not None)
        return _traced_vjp(program, args, kwargs, argnums, used_g)

    return some_outputs


def _finite(cts: tuple, g: tuple, name: str) -> tuple:
    """Refuse a non-finite cotangent that the dense zeros given for unused outputs may have
    caused (0 * inf), rather than return it as a gradient."""
    given = [gi for gi in g if gi is not None]
    if all(np.all(np.isfinite(ct)) for ct in cts if ct is not None) or not all(
            np.all(np.isfinite(gi)) for gi in given):
        return cts
    spectral = any(word in name for word in ("eig", "svd"))
    raise FloatingPointError(
        f"autograd's VJP of {name} is not finite here although every cotangent it received is: "
        + ("at repeated eigenvalues or singular values the vectors have no derivative (their "
           "terms divide by l_i - l_j = 0), and autograd also gives the outputs your program "
           "does not use a zero cotangent, which meets that infinity. Use only the outputs whose "
           "derivative exists at this input (the values), or source='jax', which differentiates "
           "only the outputs that are used." if spectral else
           "autograd gives the outputs your program does not use a zero cotangent, and one of "
           "their derivatives is infinite here (a pole, or the edge of the function's domain). "
           "Use source='jax', which differentiates only the outputs that are used, or an input "
           "inside the domain."))


def _sparse_or_conform(ct, primal):
    """autograd's SparseObject (the VJP of an index read) handed to the sweep as it is: densifying
    it costs the whole array per read, which makes a loop over x[i] quadratic."""
    if type(ct) is SparseObject and type(primal) is np.ndarray:
        return rulebridge.SparseCotangent(ct.mut_add)
    return _conform(ct, primal)


def _conform(ct, primal):
    if type(ct) is np.ndarray and type(primal) is np.ndarray and ct.dtype is primal.dtype:
        return ct  # the common case; the engine checks the shape
    if type(ct) is rulebridge.Traced:  # nested differentiation: rulebridge records it
        return conform_cotangent(ct, primal)
    if isinstance(primal, (list, tuple)):
        return [_conform(c, p) for c, p in zip(ct, primal)]
    if type(ct) is SparseObject:  # from indexing: make it dense
        # (A type test, not hasattr: a failed attribute read builds an AttributeError message,
        # about 4k instructions, and most cotangents are not sparse.)
        ct = ct.mut_add(ct.vs.zeros())
    return conform_cotangent(ct, primal)


def _distribution_version(name: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return ""

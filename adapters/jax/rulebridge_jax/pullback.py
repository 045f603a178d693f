"""JAX pullbacks compiled once and called many times.

For one rule (a JAX function standing for one NumPy function at one signature) a `JitPullbacks`
keeps one jitted `(leaves, output cotangents) -> leaf cotangents` per static configuration: the
static arguments and keyword arguments, which leaves are differentiated, which outputs received a
cotangent. `jax.jit` then specialises that function on shapes and dtypes by itself. Nothing calls
`jax.vjp` per op: it runs only while `jax.jit` traces.

Only the outputs that received a cotangent are differentiated: the jitted VJP is that of a
function returning those outputs alone, so the others reach JAX as symbolic zeros. A dense zero
cotangent would not do: eigh's and svd's eigenvector terms multiply it by 1/(l_i - l_j), which
is inf at a repeated eigenvalue, and 0 * inf is NaN where `jax.grad` of the same program is
finite.

Precision: every trace and call happens inside `jax.enable_x64(True)`, a scoped, thread-local
switch, so float64 and complex128 stay 64-bit without touching the user's global JAX
configuration (jit caches are keyed on that switch, so the user's own 32-bit jitted code is not
affected). float32 inputs stay float32: JAX, like NumPy, does not promote float32 by itself.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

import rulebridge

from rulebridge import conform_cotangent

from .arguments import LEAF, freeze_call, is_inexact, thaw_call

_ndarray = np.ndarray


class JitPullbacks:
    """The compiled pullbacks of `jax_function` (which takes NumPy's arguments with NumPy's
    meaning), keyed by everything `jax.jit` must not see as an input."""

    def __init__(self, jax_function: Callable, name: str, operands: bool = False,
                 numpy_function: Callable | None = None) -> None:
        self.jax_function = jax_function
        self.numpy_function = numpy_function  # whose spelling the arguments come in
        self.name = name
        self.operands = operands  # positional arguments are values only (ufuncs): see freeze_call
        self.compiled: dict[tuple, Callable] = {}
        self.again: dict[tuple, Any] = {}  # the pullbacks as functions with rules (again.py)

    def rule_pullback(self, prepare: Callable | None = None) -> Callable:
        """A `Rule.pullback` over the residuals `numpy_forward` keeps; `prepare` rewrites NumPy's
        arguments into a form JAX can trace (semantics.py)."""
        if prepare is None:
            def pullback(residuals, g, argnums):
                return self(residuals[0], residuals[1], g, argnums)
        else:
            def pullback(residuals, g, argnums):
                args, kwargs = prepare(*residuals)
                return self(args, kwargs, g, argnums)
        return pullback

    def __call__(self, args: tuple, kwargs: dict, cotangent: Any, argnums: tuple) -> tuple:
        """One cotangent per entry of `argnums`, each with its argument's shape and dtype."""
        # Several outputs: which of them received a cotangent (the rest are not differentiated).
        used = None
        if type(cotangent) is tuple:
            used = tuple(g is not None for g in cotangent)
            if not any(used):
                return (None,) * len(argnums)
            cotangent = tuple(g for g in cotangent if g is not None)
        if not kwargs and _only_arrays(args):
            # The common case (ufuncs, matmul): every argument is a leaf and every traced one an
            # inexact array, so the key and the result need no walk over the arguments.
            key = (len(args), argnums, used)
            jitted = self.compiled.get(key)
            if jitted is None:
                jitted = self.compiled[key] = self._jit((LEAF,) * len(args), (), argnums, used)
            with jax.enable_x64(True):
                leaf_cts = jitted(args, cotangent)
            if used is not None:
                leaf_cts = _finite(leaf_cts, cotangent, self.name)
            return tuple(_numpy(ct, args[i]) for ct, i in zip(leaf_cts, argnums))
        static_args, static_kwargs, leaves, counts = freeze_call(args, kwargs, self.operands)
        diff, owners = _differentiated(leaves, counts, argnums)
        key = (static_args, static_kwargs, diff, used)
        jitted = self.compiled.get(key)
        if jitted is None:
            jitted = self.compiled[key] = self._jit(static_args, static_kwargs, diff, used)
        with jax.enable_x64(True):
            leaf_cts = jitted(leaves, cotangent)
        if used is not None:
            leaf_cts = _finite(leaf_cts, cotangent, self.name)
        return _assemble(args, argnums, owners, leaf_cts)

    def rule_pullback_rule(self, prepare: Callable | None = None) -> Callable:
        """A `Rule.pullback_rule` over the same residuals as `rule_pullback`: the pullback as a
        function with a rule of its own (again.py), for a nested differentiation."""
        def pullback_rule(residuals, g, argnums):
            args, kwargs = residuals if prepare is None else prepare(*residuals)
            return self.pullback_call(args, kwargs or {}, g, argnums)

        return pullback_rule

    def pullback_call(self, args: tuple, kwargs: dict, cotangent: Any,
                      argnums: tuple) -> rulebridge.PullbackCall:
        """This pullback at these arguments and cotangent (which may hold an enclosing
        differentiation's boxes) as a call of one function of flat arrays, the leaves then the
        used cotangents, with the rule of that function (its VJP jitted: again.py)."""
        used = None
        if type(cotangent) is tuple:
            used = tuple(g is not None for g in cotangent)
            cotangent = tuple(g for g in cotangent if g is not None)
        if not kwargs and _only_array_values(args):
            # `__call__`'s common case, under its key: every argument a leaf, every traced one
            # differentiated, so neither the walk of `freeze_call` nor `_differentiated` is needed
            n = len(args)
            key = (n, argnums, used)
            rules = self.again.get(key)
            if rules is None:
                rules = self.again[key] = self._rules((LEAF,) * n, (), argnums, used, n, True)
            flat = tuple(args) + (cotangent if used is not None else (cotangent,))
            return rulebridge.PullbackCall(rules.rule(flat), flat, lambda outputs: tuple(
                _numpy(outputs[k], args[i]) for k, i in enumerate(argnums)))
        static_args, static_kwargs, leaves, counts = freeze_call(args, kwargs, self.operands,
                                                                 boxes=True)
        diff, owners = _differentiated(leaves, counts, argnums)
        key = (static_args, static_kwargs, diff, used, len(leaves))
        rules = self.again.get(key)
        if rules is None:
            rules = self.again[key] = self._rules(static_args, static_kwargs, diff, used,
                                                  len(leaves), False)
        flat = tuple(leaves) + (cotangent if used is not None else (cotangent,))
        return rulebridge.PullbackCall(rules.rule(flat), flat,
                                       lambda outputs: _assemble(args, argnums, owners, outputs))

    def _rules(self, static_args, static_kwargs, diff, used, n: int, fast: bool):
        """The `FunctionRules` of this configuration's pullback as a function of flat arrays,
        whose forward is the first-order pullback compiled already (under `__call__`'s key)."""
        from .again import FunctionRules

        key = (n, diff, used) if fast else (static_args, static_kwargs, diff, used)
        jitted = self.compiled.get(key)
        if jitted is None:
            jitted = self.compiled[key] = self._jit(static_args, static_kwargs, diff, used)
        several = used is not None

        def compiled(*flat):  # the leaves as `__call__` hands them over: a tuple, or a list
            leaves = tuple(flat[:n]) if fast else list(flat[:n])
            return jitted(leaves, flat[n:] if several else flat[n])

        name = self.name
        return FunctionRules(_flat(self._function(static_args, static_kwargs, diff, used), n,
                                   several), f"pullback of {name}",
                             None if used is None else lambda outs, flat: _finite(
                                 outs, flat[n:], name), compiled)

    def _jit(self, static_args, static_kwargs, diff, used) -> Callable:
        return jax.jit(self._function(static_args, static_kwargs, diff, used))

    def _function(self, static_args, static_kwargs, diff, used) -> Callable:
        """The JAX function `(leaves, cotangent) -> leaf cotangents` of this configuration."""
        function, name, numpy_function = self.jax_function, self.name, self.numpy_function

        def pullback(leaves, cotangent):
            def of_diff(*diff_leaves):
                return _used_outputs(call_at(function, numpy_function, static_args,
                                             static_kwargs, leaves, diff, diff_leaves),
                                     used, name)

            out, vjp = jax.vjp(of_diff, *(leaves[p] for p in diff))
            cts = vjp(_output_cotangent(out, cotangent, used is not None, name))
            return tuple(_like(ct, leaves[p]) for ct, p in zip(cts, diff))

        return pullback


def _flat(pullback: Callable, n_leaves: int, several: bool) -> Callable:
    """`pullback(leaves, cotangent)` as a function of flat arguments: the leaves, then the
    cotangent (each used output's, for several)."""
    def flat(*arrays):
        cotangents = arrays[n_leaves:]
        return pullback(list(arrays[:n_leaves]), cotangents if several else cotangents[0])

    return flat


def call_at(function: Callable, numpy_function: Callable | None, static_args: tuple,
            static_kwargs: tuple, leaves: list, diff: tuple, diff_leaves: tuple):
    """`function` called on the frozen call's leaves with those at positions `diff` replaced by
    `diff_leaves` (what JAX differentiates), in the spelling `function` takes."""
    full = list(leaves)
    for position, value in zip(diff, diff_leaves):
        full[position] = value
    args, kwargs = thaw_call(static_args, static_kwargs, full)
    if numpy_function is not None:
        args, kwargs = rulebridge.spelled_for(function, numpy_function, args, kwargs)
    return call_as_numpy(function, args, kwargs)


def call_as_numpy(function: Callable, args: tuple, kwargs: dict):
    """`function(*args, **kwargs)`, where a list (then also a tuple) of numbers is read as
    NumPy reads an array_like, as an array: JAX refuses a sequence where NumPy converts it
    (`np.take(x, [0, 2, 2])`, `np.percentile(x, [25.0, 75.0])`, `np.where([...], x, y)`) but
    takes one where NumPy reads a sequence (shapes, axes, `reps`), so sequences are converted
    only when JAX refused the call as given. Runs while `jax.jit` traces, not per call."""
    try:
        return function(*args, **kwargs)
    except TypeError as refused:
        for kinds in ((list,), (list, tuple)):
            found: list = []
            new_args = _arrays_for(args, kinds, found)
            new_kwargs = {k: _arrays_for(v, kinds, found) for k, v in kwargs.items()}
            if not found:
                continue
            try:
                return function(*new_args, **new_kwargs)
            except TypeError:
                continue
        raise refused


def _arrays_for(value, kinds: tuple, found: list):
    """`value` with each sequence of one of `kinds` that holds numbers only (nested or not) as
    a JAX array (each appended to `found`); sequences of arrays (concatenate's, choose's) stay
    sequences of their items."""
    if type(value) not in kinds and type(value) is not tuple:
        return value
    if type(value) in kinds and _numbers_only(value):
        found.append(value)
        try:
            return np.asarray(value)  # static numbers stay concrete (repeat's counts, delete's)
        except TypeError:  # leaves among them: traced by jax.jit
            return jnp.asarray(value)
    return type(value)(_arrays_for(item, kinds, found) for item in value)


def _numbers_only(sequence) -> bool:
    return len(sequence) > 0 and all(
        _numbers_only(item) if type(item) in (list, tuple)
        else isinstance(item, (bool, int, float, complex, np.number, np.bool_))
        or (isinstance(item, jax.Array) and item.ndim == 0) for item in sequence)


def numpy_forward(function: Callable) -> rulebridge.ArgumentsForward:
    """A `Rule.forward` running NumPy's own function; its residuals are just the arguments,
    `(args, kwargs)`, declared as such so the engine may hand the pullback a compact copy of a
    small view of a large array instead of the view (rulebridge/engine/shedding.py). Of a
    function linear in its first argument (`x[i]`, reshape, transpose) the pullback reads only
    that argument's shape and dtype: shed, it keeps a stand-in of one element, not `x`."""
    if function in _LINEAR_IN_FIRST:
        return rulebridge.ArgumentsForward(function, compact=_shape_of_first)
    return rulebridge.ArgumentsForward(function)


_LINEAR_IN_FIRST = frozenset([operator.getitem, np.reshape, np.transpose])


def _shape_of_first(residuals, argnums):
    args, kwargs = residuals
    first = args[0]
    if type(first) is not _ndarray or argnums != (0,):
        return residuals  # as recorded: the pullback of another argument may read it
    return (np.broadcast_to(np.zeros((), first.dtype), first.shape),) + args[1:], kwargs


def _only_arrays(args: tuple) -> bool:
    for a in args:
        if type(a) is not _ndarray:
            return False
    return True


def _only_array_values(args: tuple) -> bool:
    """`_only_arrays` under nesting: arrays, or boxes whose innermost value is an array."""
    primal, traced = rulebridge.primal, rulebridge.Traced
    for a in args:
        if type(a) is not _ndarray and (type(a) is not traced or type(primal(a)) is not _ndarray):
            return False
    return True


def _differentiated(leaves: list, counts: list, argnums: tuple) -> tuple[tuple, dict]:
    """Positions of the leaves to differentiate (the inexact leaves of the traced arguments), and
    for each traced argument the range of its leaves."""
    starts = [0]
    for c in counts:
        starts.append(starts[-1] + c)
    diff = []
    owners = {}
    for i in argnums:
        owners[i] = (starts[i], starts[i + 1])
        diff += [p for p in range(starts[i], starts[i + 1]) if is_inexact(leaves[p])]
    return tuple(diff), owners


def _finite(leaf_cts: tuple, given: tuple, name: str) -> tuple:
    """`leaf_cts` as NumPy arrays, refused where a function of several outputs (eigh, svd) has
    a VJP that is not finite for finite cotangents: the used outputs have no derivative here."""
    leaf_cts = tuple(np.asarray(ct) for ct in leaf_cts)  # (once: the test and the caller read it)
    if _all_finite(leaf_cts) or not all(np.all(np.isfinite(g)) for g in given):
        return leaf_cts
    spectral = any(word in name for word in ("eig", "svd"))
    raise FloatingPointError(
        f"JAX's VJP of {name} is not finite here although every cotangent it received is: the "
        "outputs your program uses have no derivative at this input" + (
            " (eigenvectors or singular vectors at a repeated eigenvalue or singular value, "
            "whose terms divide by l_i - l_j = 0). Use only the outputs whose derivative exists "
            "here (the values)." if spectral else
            " (a pole of the derivative, or the edge of the function's domain). Differentiate "
            "at an input inside the domain."))


def _all_finite(arrays: tuple) -> bool:
    # The method, in a loop: `all(np.all(np.isfinite(ct)) for ct in ...)` spent 18 us where
    # this spends 7 (three cotangents of benchmarks/hvp.py's network, timeit), and every pullback
    # of a pullback has several outputs, so it ran at every one: 13% of an hvp [jax] (cProfile).
    # (A finite sum would prove the same with one reduction, but warns, or raises under
    # np.seterr, where it overflows.)
    for a in arrays:
        if not np.isfinite(a).all():
            return False
    return True


def _used_outputs(out, used: tuple | None, name: str):
    """JAX's outputs at the positions NumPy's cotangent marks used, as a tuple (`out` itself for
    a function of one output)."""
    if used is None:
        return out
    outs = jax.tree_util.tree_leaves(out)
    if len(outs) != len(used):
        raise TypeError(f"JAX's {name} returns {len(outs)} output(s) where NumPy's returns "
                        f"{len(used)}; their structures differ")
    return tuple(o for o, u in zip(outs, used) if u)


def _output_cotangent(out, cotangent, several: bool, name: str):
    """The cotangent JAX's vjp expects: NumPy's cotangent per (used) output, cast to JAX's
    output dtype (float0 zeros for an integer output)."""
    outs, tree = jax.tree_util.tree_flatten(out)
    given = cotangent if several else (cotangent,)
    if len(given) != len(outs):
        raise TypeError(f"JAX's {name} returns {len(outs)} output(s) where NumPy's returns "
                        f"{len(given)}; their structures differ")
    cts = []
    for o, g in zip(outs, given):
        if not jnp.issubdtype(jnp.result_type(o), jnp.inexact):  # o may be a Python bool
            cts.append(np.zeros(np.shape(o), jax.dtypes.float0))
        elif np.shape(g) != o.shape:
            raise TypeError(f"JAX's {name} returns shape {o.shape} where NumPy's returns "
                            f"{np.shape(g)}; their meanings differ")
        else:
            cts.append(_like(jnp.asarray(g), o))
    return jax.tree_util.tree_unflatten(tree, cts)


def _like(ct, primal):
    """`ct` in `primal`'s dtype; a complex cotangent of a real value keeps its real part."""
    dtype = jnp.result_type(primal)
    if jnp.iscomplexobj(ct) and not jnp.issubdtype(dtype, jnp.complexfloating):
        ct = jnp.real(ct)
    return ct.astype(dtype) if ct.dtype != dtype else ct


def _assemble(args: tuple, argnums: tuple, owners: dict, leaf_cts: tuple) -> tuple:
    """Leaf cotangents back in argument form: an array per traced argument, a list of arrays for
    a list argument (None for items that carry no gradient), each conformed to its primal."""
    it = iter(leaf_cts)
    result = []
    for i in argnums:
        primal = args[i]
        if type(primal) is list or type(primal) is tuple:
            result.append([_numpy(next(it), item) if is_inexact(item) else None
                           for item in primal])
        elif owners[i][1] > owners[i][0] and is_inexact(primal):
            result.append(_numpy(next(it), primal))
        else:
            result.append(None)
    return tuple(result)


def _numpy(ct, primal):
    # Zero-copy on CPU: the array is read-only, which the engine respects (it never writes into
    # a rule's cotangent; accumulation copies on the second contribution). A box (the output of
    # a pullback recorded by an enclosing level: pullback_call) is conformed as it is.
    if isinstance(ct, rulebridge.Traced):
        return conform_cotangent(ct, primal)
    return conform_cotangent(np.asarray(ct), primal)

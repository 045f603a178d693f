"""The reverse sweep: one backward pass over the tape, no recursion.

Cotangents live in a dict keyed by variable. The first contribution to a variable is kept by
reference; the second is added into a fresh array that the sweep then owns; later ones are added
in place. Arrays the user or a rule handed over are never written.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import RuleContractError
from ..rules.rule import SparseCotangent
from ..rules.signature import format_signature
from .fallback import declines_boxes, pullback_raised
from .hooks import Effect
from .op import UNARY, as_op
from ..rules.levels import primal as _primal
from .box import Traced
from .tape import Tape

_ndarray = np.ndarray
_FIRST = (0,)
# (False, False): an op of constants only, e.g. `np.full(n, 3.0)` followed as a buffer, whose
# keywords the call key moved into positions; its pullback is asked for nothing, as for any arity.
_TRACED_OF_TWO = {(True, True): (0, 1), (True, False): _FIRST, (False, True): (1,),
                  (False, False): ()}


def backward(tape: Tape, seeds: dict[int, Any]) -> dict[int, Any]:
    """Run every pullback whose outputs received a cotangent; return the cotangents of the
    variables no op defined (the tape's inputs)."""
    effects = tape.effects
    if effects is None:
        return _sweep(tape, seeds)
    seeds = effects.begin_sweep(seeds)
    try:
        return _sweep(tape, seeds)  # undoes each write as it passes it
    finally:
        effects.end_sweep()  # and redoes them


def _sweep(tape: Tape, seeds: dict[int, Any]) -> dict[int, Any]:
    cts: dict[int, Any] = dict(seeds)
    owned: set[int] = set()
    nested = tape.nested  # the tape holds an enclosing level's boxes: pullbacks may get them
    for op in reversed(tape.entries):
        rule, args, kwargs, inputs, outputs, structure, residuals = op
        if structure is UNARY:  # `y = f(x)` by a CallForward rule; `residuals` holds y
            g = cts.pop(outputs[0], None)
            if g is None:
                continue
            unary_vjp = rule.unary_vjp
            if unary_vjp is not None:
                x = args[0]
                try:
                    ct = unary_vjp(residuals, x)(g)
                except Exception as exc:
                    _distribute(cts, owned, op, _FIRST, pullback_raised(tape, op, exc, g, _FIRST))
                    continue
                if type(ct) is _ndarray and ct.dtype is x.dtype and ct.shape == x.shape:
                    var = inputs[0]
                    if var in cts:  # (not setdefault's `is` test: both can be one array)
                        _accumulate(cts, owned, var, ct)
                    else:
                        cts[var] = ct  # the first contribution, kept by reference
                    continue
                if type(ct) is Traced:  # an enclosing level recorded the pullback's work
                    _distribute(cts, owned, op, _FIRST, (ct,))
                    continue
                # What unary_vjp gave does not conform: the pullback conforms it.
            residuals = (residuals, args, None)  # the rule's: CallResiduals' fields
        elif structure is None:
            g = cts.pop(outputs[0], None)
            if g is None:
                if isinstance(residuals, Effect):  # earlier pullbacks need what it overwrote
                    residuals.undo()
                continue
        else:
            g = tuple(None if v is None else cts.pop(v, None) for v in outputs)
            if all(item is None for item in g):
                continue
        if len(inputs) == 1 and type(inputs[0]) is int:
            argnums = _FIRST  # most ops: one traced array argument
        elif len(inputs) == 2:  # binary operators
            argnums = _TRACED_OF_TWO[inputs[0] is not None, inputs[1] is not None]
        else:
            argnums = tuple(i for i, v in enumerate(inputs) if v is not None)
        if nested and declines_boxes(rule, residuals, args, g):  # (the one test per op)
            in_cts = pullback_raised(tape, op, None, g, argnums)  # as if it had raised
        else:
            try:
                in_cts = (rule.sparse_pullback or rule.pullback)(residuals, g, argnums)
            except RuleContractError:
                raise  # already names the rule (debug mode's checks)
            except Exception as exc:
                in_cts = pullback_raised(tape, op, exc, g, argnums)
        if argnums is _FIRST and type(in_cts) is tuple and len(in_cts) == 1:
            # The common case inline: one dense cotangent of its argument's exact type.
            ct, primal = in_cts[0], args[0]
            if (type(ct) is _ndarray and type(primal) is _ndarray and ct.dtype is primal.dtype
                    and ct.shape == primal.shape):
                _accumulate(cts, owned, inputs[0], ct)
                continue
        _distribute(cts, owned, op, argnums, in_cts)
    return cts


def _distribute(cts, owned, op, argnums, in_cts) -> None:
    """Check a pullback's cotangents against the contract and add each into its variable."""
    rule, args, kwargs, inputs, outputs, structure, residuals = op
    if (type(in_cts) is not tuple and type(in_cts) is not list) or len(in_cts) != len(argnums):
        got = (f"{len(in_cts)} cotangent(s)" if type(in_cts) in (tuple, list)
               else f"a {type(in_cts).__name__} (not a tuple of cotangents)")
        raise RuleContractError(
            f"the {rule.source} rule for {_where(op)} returned {got} for "
            f"{len(argnums)} traced argument(s) {argnums}")
    for i, ct in zip(argnums, in_cts):
        if ct is None:
            continue
        var = inputs[i]
        if type(var) is int:
            primal = args[i]
            ct = _checked(ct, primal, op, i)
            if type(ct) is SparseCotangent:
                _add_sparse(cts, owned, var, ct, primal, op)
            elif var in cts:
                _accumulate(cts, owned, var, ct)
            else:
                cts[var] = ct
        else:
            _accumulate_sequence(cts, owned, var, ct, op, i)


def _accumulate(cts, owned, var, ct):
    prev = cts.get(var)
    if prev is None:
        cts[var] = ct
    elif var in owned and type(ct) is not Traced:
        np.add(prev, ct, out=prev)
    else:
        total = prev + ct
        cts[var] = total
        if type(total) is _ndarray:
            owned.add(var)


def _accumulate_sequence(cts, owned, item_vars, ct, op, i):
    op = as_op(op)
    if len(ct) != len(item_vars):
        raise RuleContractError(
            f"the {op.rule.source} rule for {_where(op)} returned {len(ct)} cotangents for the "
            f"{len(item_vars)} items of argument {i}")
    for j, (var, item_ct) in enumerate(zip(item_vars, ct)):
        if var is not None and item_ct is not None:
            primal = op.args[i][j]
            item_ct = _checked(item_ct, primal, op, i)
            if type(item_ct) is SparseCotangent:
                _add_sparse(cts, owned, var, item_ct, primal, op)
            else:
                _accumulate(cts, owned, var, item_ct)


def _add_sparse(cts, owned, var, ct, primal, op):
    """Add a sparse cotangent into the variable's accumulator, which the sweep then owns: one
    dense array per variable, then each index read adds only what it read."""
    prev = cts.get(var)
    if prev is None:
        total = np.zeros(primal.shape, primal.dtype)
    elif var in owned:
        total = prev
    else:
        total = np.array(prev, dtype=primal.dtype)  # a copy: never write into a rule's array
    try:
        ct.add_into(total)
    except Exception as exc:
        raise RuleContractError(
            f"the sparse cotangent from the {as_op(op).rule.source} rule for {_where(op)} raised "
            f"{type(exc).__name__} adding into an array of its argument's shape and dtype "
            f"({_describe(primal)}): {exc}") from exc
    cts[var] = total
    owned.add(var)


def _checked(ct, primal, op, i):
    """The cheap, always-on contract check: the cotangent has the primal's shape and dtype (a
    sparse cotangent adds into an array the engine makes with that shape and dtype). A box of an
    enclosing level is checked by its innermost primal, and kept."""
    if type(ct) is Traced or type(primal) is Traced:
        _checked(_primal(ct), _primal(primal), op, i)
        return ct
    if type(primal) is _ndarray:
        if type(ct) is SparseCotangent:
            return ct
        if type(ct) is _ndarray:
            if ct.shape == primal.shape and ct.dtype == primal.dtype:
                return ct
        elif isinstance(ct, np.generic) and primal.ndim == 0 and ct.dtype == primal.dtype:
            return ct
    else:
        expected = _scalar_dtype(primal)
        if getattr(ct, "shape", None) == () and ct.dtype == expected:
            return ct
    source = as_op(op).rule.source
    raise RuleContractError(
        f"the {source} rule for {_where(op)} returned a cotangent of {_describe(ct)} for "
        f"argument {i}, which is {_describe(primal)}: a cotangent must have its argument's shape "
        "and dtype.",
        fix=f"rulebridge.prefer({as_op(op).rule.name}, 'OTHER')  # another source than "
            f"{source} for this function; report the broken rule to {source}'s authors")


def _scalar_dtype(x) -> np.dtype:
    if isinstance(x, np.generic):
        return x.dtype
    return np.result_type(x)  # Python float -> float64, complex -> complex128


def _describe(x) -> str:
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return type(x).__name__
    return f"{type(x).__name__} {dtype} shape {np.shape(x)}"


def _where(op) -> str:
    rule = as_op(op).rule
    return f"{rule.name}{format_signature(rule.signature)}"

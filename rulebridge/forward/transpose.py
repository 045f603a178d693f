"""An op's pushforward read off its pullback, which is linear.

For a rule without a (checked) pushforward, `J xdot` is computed from the pullback that reverse
mode already trusts: with the pairing of the rule checks, `Re(sum(a * b))`, each real output
entry is `(J xdot)_j = <pullback(e_j), xdot>`, and the imaginary part of a complex one is
`-<pullback(i e_j), xdot>`. That is the VJP of the VJP evaluated densely: one pullback call per
output entry (two for a complex one), exact up to rounding, so it is tried only for outputs of
at most `MAX_PULLBACKS` entries; beyond that forward mode refuses, naming the function, its key
and what to do.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import NoDerivativeError, NoRuleError, RuleContractError
from ..rules.levels import Box, primal
from ..rules.rule import Rule, function_name
from ..rules.signature import format_signature, is_differentiable

MAX_PULLBACKS = 4096
_IMAGINARY = np.complex128(1j)  # a box times Python's 1j is refused (its dtype is not NumPy's)


def transposed(rule: Rule, residuals: Any, args: tuple, kwargs, argnums: tuple,
               tangents: tuple, outputs: list, several: bool, why: str,
               pullback: Callable | None = None) -> Any:
    """The op's output tangent(s) from `rule.pullback(residuals, ...)`: `outputs` are the op's
    primal outputs (a list, one item for a single output); `several` says whether the rule
    returns a tuple. `why` says why the pushforward is not used, for the refusal. `pullback(g)`,
    when given, is called instead (the next source's, after this rule's raised: sweep.py)."""
    selected = [k for k, o in enumerate(outputs) if is_differentiable(o)]
    calls = sum(np.size(primal(outputs[k])) * (2 if np.iscomplexobj(primal(outputs[k])) else 1)
                for k in selected)
    if calls > MAX_PULLBACKS:
        raise NoRuleError(
            f"forward mode: {function_name(rule.function)}{format_signature(rule.signature)} "
            f"has no pushforward to use ({why}), and reading one off its pullback would take "
            f"{calls} pullback calls (at most {MAX_PULLBACKS} are made).\n"
            "  Use reverse mode for this program (rulebridge.vjp, rulebridge.jacobian), or a "
            "source whose rules carry pushforwards (source='NAME').")
    result: list = [None] * len(outputs)
    for k in selected:
        out = np.asarray(primal(outputs[k]))
        entries = []
        units = (1, 1j) if out.dtype.kind == "c" else (1,)
        for j in range(out.size):
            entry: Any = 0.0
            for unit in units:
                seed = np.zeros(out.shape, out.dtype)
                seed.reshape(-1)[j] = unit
                if type(outputs[k]) is not np.ndarray:
                    seed = seed[()]
                g = seed if not several else tuple(seed if m == k else None
                                                    for m in range(len(outputs)))
                cts = (_pullback(rule, residuals, g, argnums, tangents) if pullback is None
                       else pullback(g))
                value = sum(_pair(ct, t) for ct, t in zip(cts, tangents))
                entry = entry + value if unit == 1 else entry - value * _IMAGINARY
            entries.append(entry)
        if any(isinstance(e, Box) for e in entries):  # an enclosing level's: recorded there
            tangent = np.reshape(np.stack([e if isinstance(e, Box) else np.asarray(e, out.dtype)
                                           for e in entries]).astype(out.dtype), out.shape)
        else:
            tangent = np.array(entries, dtype=out.dtype).reshape(out.shape)
        result[k] = tangent if type(outputs[k]) is np.ndarray or isinstance(tangent, Box) \
            else tangent[()]
    return tuple(result) if several else result[0]


class PullbackRaised(Exception):
    """A pullback read off under nesting raised (`exc`): the sweep then falls back as the
    reverse sweep does (engine/fallback.py: the engine's functional rules, the rule's pullback
    offered as a rule of its own, another source's), instead of refusing here."""

    def __init__(self, exc: Exception) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


def _pullback(rule: Rule, residuals: Any, g: Any, argnums: tuple, tangents: tuple) -> Any:
    try:
        return rule.pullback(residuals, g, argnums)
    except (RuleContractError, NoDerivativeError):
        raise
    except Exception as exc:
        if not any(isinstance(a, Box) for a in (*_values_in(residuals), *tangents)):
            raise
        raise PullbackRaised(exc) from exc


def _values_in(residuals: Any) -> list:
    """The values in a rule's residuals, one level of tuples and lists deep."""
    items = residuals if type(residuals) in (tuple, list) else (residuals,)
    return [b for a in items for b in (a if type(a) in (tuple, list) else (a,))]


def _pair(ct: Any, t: Any) -> Any:
    """`Re(sum(ct * t))`: a float, or an enclosing level's box when either is one."""
    if ct is None or t is None:
        return 0.0
    if type(ct) in (list, tuple):
        return sum(_pair(a, b) for a, b in zip(ct, t))
    if isinstance(ct, Box) or isinstance(t, Box):
        return np.real(np.sum(ct * t))
    ct, t = np.asarray(ct), np.asarray(t)
    product = ct * t
    total = np.sum(product)
    if not np.isfinite(total):
        # A zero entry of `pullback(e_j)` says output entry j does not read that entry of the
        # input, whatever its tangent: a NaN tangent there (an upstream value that is NaN) must
        # not reach every output through 0 * NaN, as an elementwise pushforward would not.
        total = np.sum(np.where(ct == 0, 0, product))
    return float(np.real(total))

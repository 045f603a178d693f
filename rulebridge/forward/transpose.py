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

from ..errors import NoRuleError
from ..rules.rule import Rule, function_name
from ..rules.signature import format_signature, is_differentiable

MAX_PULLBACKS = 4096


def transposed(rule: Rule, residuals: Any, args: tuple, kwargs, argnums: tuple,
               tangents: tuple, outputs: list, several: bool, why: str,
               pullback: Callable | None = None) -> Any:
    """The op's output tangent(s) from `rule.pullback(residuals, ...)`: `outputs` are the op's
    primal outputs (a list, one item for a single output); `several` says whether the rule
    returns a tuple. `why` says why the pushforward is not used, for the refusal. `pullback(g)`,
    when given, is called instead (the next source's, after this rule's raised: sweep.py)."""
    selected = [k for k, o in enumerate(outputs) if is_differentiable(o)]
    calls = sum(np.size(outputs[k]) * (2 if np.iscomplexobj(outputs[k]) else 1)
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
        out = np.asarray(outputs[k])
        tangent = np.zeros(out.shape, out.dtype)
        flat = tangent.reshape(-1)
        units = (1, 1j) if out.dtype.kind == "c" else (1,)
        for j in range(out.size):
            for unit in units:
                seed = np.zeros(out.shape, out.dtype)
                seed.reshape(-1)[j] = unit
                if type(outputs[k]) is not np.ndarray:
                    seed = seed[()]
                g = seed if not several else tuple(seed if m == k else None
                                                    for m in range(len(outputs)))
                cts = rule.pullback(residuals, g, argnums) if pullback is None else pullback(g)
                value = sum(_pair(ct, t) for ct, t in zip(cts, tangents))
                if unit == 1:
                    flat[j] += value
                else:
                    flat[j] -= 1j * value
        result[k] = tangent if type(outputs[k]) is np.ndarray else tangent[()]
    return tuple(result) if several else result[0]


def _pair(ct: Any, t: Any) -> float:
    if ct is None or t is None:
        return 0.0
    if type(ct) in (list, tuple):
        return sum(_pair(a, b) for a, b in zip(ct, t))
    return float(np.real(np.sum(np.asarray(ct) * np.asarray(t))))

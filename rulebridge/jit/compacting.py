"""Which ops of a recorded program make their VJPs during the forward, as the eager tape's
shedding does (rulebridge/engine/shedding.py), so that a replay, like the eager call, does not
keep a large intermediate alive through the reverse sweep only for a pullback that reads its
shape (sum's) or a VJP that reads none of it (kron's).

Keeping them cost the suite's kron_view_sum row 1.6x the eager gradient's time: the kron
output (5 MB) and its sum's cotangent stayed alive beside the pullback's transposed copies,
whose memory then came fresh from the system on each call (measured: the copies inside
`tensordot`'s reshape took 7x their eager time).

Only ops that hold an array of `LARGE_BYTES` or more at the trace are compacted, and only
where the rule's `CallForward.compact` gives other residuals: small programs (the chain) are
unchanged. A replay writes nothing in place (its writes are functional), so the VJPs made at
the forward read what the eager sweep's would.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.op import UNARY
from ..engine.shedding import LARGE_BYTES
from ..rules.rule import CallForward

_ndarray = np.ndarray


def compacted(rule, residuals: Any, argnums: tuple) -> Any:
    """The residuals the pullback of `argnums` reads, made now (the generated code's `_cmp`)."""
    made = rule.compacted(residuals, argnums)
    return residuals if made is None else made


def compacting(entries: list, plan: dict) -> dict[int, tuple]:
    """Per op position to compact: the argnums its pullback is asked for (`plan`'s), for the
    ops of `entries` (the tape's, values as traced) whose compacted residuals differ."""
    chosen = {}
    for position, argnums in plan.items():
        rule, args, kwargs, inputs, outputs, structure, residuals = entries[position]
        if type(rule.forward) is not CallForward or rule.forward.compact is None:
            continue
        if structure is UNARY:
            if not (_large(residuals) or _large(args[0])):
                continue
            residuals = (residuals, args, None)
        elif type(residuals) is not tuple or len(residuals) != 3:
            # compacted already, as the tape recorded it (a tape only a sweep reads, as a
            # jacobian's, sheds while it records): the program's forward compacts it too
            chosen[position] = argnums
            continue
        elif not (any(_large(a) for a in args) or _large(residuals[0])):
            continue
        try:
            made = rule.compacted(residuals, argnums)
        except Exception:
            continue
        if made is not None and made is not residuals:
            chosen[position] = argnums
    return chosen


def _large(x: Any) -> bool:
    return type(x) is _ndarray and x.nbytes >= LARGE_BYTES


def large_arguments(entries: list) -> dict[int, _ndarray]:
    """Per variable an op read as a large ndarray at the trace: a read-only array of its shape
    and dtype owning one element, what the sweep checks its cotangent against in place of it."""
    found = {}
    for rule, args, kwargs, inputs, outputs, structure, residuals in entries:
        for value, var in zip(args, inputs):
            if type(var) is int and var not in found and _large(value):
                found[var] = np.broadcast_to(np.zeros((), value.dtype), value.shape)
    return found

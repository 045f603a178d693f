"""The decisions a program took on traced values while it was recorded: the guards of a replay.

Python code branches on what traced values tell it. Two ways:

- an op whose output carries no gradient (`x > 0`, `np.argmax(x)`, `np.isnan(x)`,
  `np.nonzero(x)`, `np.shape(x)`) hands the program a plain value, which the tape does not
  follow: an `if` on it, a mask or an index made from it, are decided by that value. The tape
  keeps the op and its answer (kind "value"), and a replay runs the op again and compares;
- a box answers `bool(x)`, `len(x)` (and `for row in x`), `x.shape`, `x.ndim`, `x.size`,
  `x.dtype`, and `int()`/`__index__` when it holds no traced value.

Each answer is appended to `Tape.decisions` as a `Decision`: how many ops were recorded before
it (so a replay checks it as soon as the values it read exist, before running ops that may only
make sense on the recorded path), the variable(s) it read, what it asked, the answer the program
got, and for an op its call. Recording one costs an append; checking a replay costs one question
per decision, O(decisions), independent of the ops.

`Tape.replay` checks them (`check`); a replay whose inputs would be answered differently raises
`ReplayError` naming the decision instead of returning the recorded path's value. A later
`rulebridge.jit` keeps the same list as the guards of a recorded program: a failed guard
re-traces.
"""

from __future__ import annotations

import operator
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..errors import ReplayError
from ..rules.rule import function_name
from ..rules.signature import INEXACT_KINDS


class Decision(NamedTuple):
    """One answer the program got from a traced value while it was recorded."""

    position: int  # ops recorded before it: checked before the replay runs op `position`
    var: Any  # the variable it read (kind "value": the op's input variables)
    kind: str  # what it asked: a key of ASKED, or "value"
    outcome: Any  # the answer
    call: Any = None  # kind "value": (rule, args, kwargs) of the op, run again by the replay


def _dtype(value: Any) -> np.dtype:
    return value.dtype if hasattr(value, "dtype") else np.result_type(value)


#: What each kind of decision asks of a value (the questions `Traced` answers).
ASKED = {"bool": bool, "len": len, "shape": np.shape, "ndim": np.ndim, "size": np.size,
         "dtype": _dtype, "int": int, "index": operator.index}

_SPELLED = {"bool": "bool(%{var}) (an `if`, `while`, `and` or `or` on it)", "len": "len(%{var})",
            "shape": "%{var}.shape", "ndim": "%{var}.ndim", "size": "%{var}.size",
            "dtype": "%{var}.dtype", "int": "int(%{var})", "index": "an index from %{var}",
            "value": "{var}"}


def check(decisions: Sequence[Decision], start: int, upto: int, env: dict,
          rerun: Callable[[Decision], Any]) -> int:
    """Check the decisions from `start` that were taken before op `upto` against the replayed
    values `env` (variable -> value), an op's with `rerun(decision)`; the index of the first
    decision left unchecked."""
    end = len(decisions)
    i = start
    while i < end and decisions[i].position <= upto:
        position, var, kind, outcome, call = decisions[i]
        if call is not None:
            var = f"the result of {function_name(call[0].function)} (of %" + ", %".join(
                str(v) for v in var if type(v) is int) + ")"
        try:
            answer = rerun(decisions[i]) if call is not None else ASKED[kind](env[var])
        except KeyError:
            raise ReplayError(f"tape.replay cannot check the recorded decision "
                              f"{_SPELLED[kind].format(var=var)}: %{var} is not a value the "
                              "replay computes; trace the function again on these inputs "
                              "(rulebridge.trace(f, *args))") from None
        except (TypeError, ValueError) as exc:
            answer = f"an error ({type(exc).__name__}: {exc})"
        if not same(answer, outcome):
            raise ReplayError(
                f"tape.replay: these inputs take another path than the recorded one: the "
                f"program decided on {_SPELLED[kind].format(var=var)} after op {position} and "
                f"got {outcome!r} when it was traced, but these inputs give {answer!r}, so the "
                "recorded ops are not what the function would run. Trace it again on these "
                "inputs: rulebridge.trace(f, *args) (or call f itself).")
        i += 1
    return i


def same(a: Any, b: Any) -> bool:
    """Whether a replay's answer is the recorded one exactly: type, shape, dtype and value."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        return a.shape == b.shape and a.dtype == b.dtype and bool(
            np.array_equal(a, b, equal_nan=a.dtype.kind in INEXACT_KINDS))
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)

"""What a recorded program's generated code calls when it runs (program.py writes the code):
the exceptions a replay raises when a guard fails or a cotangent does not conform, and the
sweep's accumulation and a decision's comparison, as the eager tape makes them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..engine.decisions import same
from ..rules.rule import SparseCotangent

_ndarray = np.ndarray


class GuardFailed(Exception):
    """A replay's value decided differently than the recorded one: the recorded ops are not
    the path these inputs take (`index` is the decision's position in `Program.decisions`)."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


class Mismatch(Exception):
    """A pullback's cotangent in a replay does not conform to its argument: the eager sweep,
    with its contract checks, must run instead."""


def _accumulate(prev: Any, ct: Any, primal: Any) -> Any:
    """`prev` with `ct` added, as the eager sweep adds contributions (rulebridge/engine/sweep.py):
    the first kept by reference, later ones summed into a new array; a sparse cotangent into a
    dense copy of its own."""
    if ct is None:
        return prev
    if type(ct) is SparseCotangent:
        if prev is None:
            total = np.zeros(np.shape(primal), np.result_type(primal))
        else:
            total = np.array(prev, dtype=np.result_type(primal))
        ct.add_into(total)
        return total
    if type(primal) is _ndarray:
        if not (type(ct) is _ndarray and ct.shape == primal.shape and ct.dtype == primal.dtype):
            if not (isinstance(ct, np.generic) and primal.ndim == 0
                    and ct.dtype == primal.dtype):
                raise Mismatch
    elif getattr(ct, "shape", None) != () or ct.dtype != (
            primal.dtype if isinstance(primal, np.generic) else np.result_type(primal)):
        raise Mismatch
    return ct if prev is None else prev + ct


def _decided(answer: Any, outcome: Any) -> bool:
    """Is a re-run op's answer the recorded one: type, shape, dtype and bytes (a decision's
    answer carries no gradient: a bool, an int, an index array), else as `same` compares."""
    if type(answer) is not type(outcome):
        return False
    if type(answer) is _ndarray or isinstance(answer, np.generic):
        return (answer.shape == outcome.shape and answer.dtype == outcome.dtype
                and answer.tobytes() == outcome.tobytes())
    return same(answer, outcome)

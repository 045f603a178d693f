"""Calls that `mypy --strict` must reject: grad(f) keeps f's parameters (tests/api/test_typing.py
reads the line numbers of the comments)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

import rulebridge as rb

Array = npt.NDArray[np.float64]


def loss(w: Array, x: Array, scale: float = 1.0) -> Any:
    return np.sum((x @ w) ** 2) * scale


w: Array = np.ones(3)
x: Array = np.ones((4, 3))
rb.grad(loss)(w, x, 1.0, 2.0)  # error: too many
rb.grad(loss)(w, x, scale="large")  # error: str for float
rb.value_and_grad(loss)(w)  # error: x missing
rb.jacobian(loss)(w, x, sclae=1.0)  # error: no such keyword
rb.grad(loss)(w=w, x=x)  # error: the differentiated argument is positional
reveal_type(rb.grad(loss))  # note: the signature

"""A user's script, type-checked with `mypy --strict` by tests/api/test_typing.py: it must pass."""

from __future__ import annotations

from collections import namedtuple
from typing import Any, assert_type

import numpy as np
import numpy.typing as npt

import rulebridge as rb

Array = npt.NDArray[np.float64]
Params = dict[str, Array]
Pair = namedtuple("Pair", "a b")


def loss(params: Params, x: Array, scale: float = 1.0) -> Any:
    return np.sum(np.tanh(x @ params["W"]) ** 2) * scale


def with_aux(params: Params, x: Array) -> tuple[Any, dict[str, Any]]:
    out = np.tanh(x @ params["W"])
    return np.sum(out ** 2), {"out": out}


params: Params = {"W": np.ones((3, 2))}
x: Array = np.ones((4, 3))
g = rb.grad(loss)(params, x)
value, g2 = rb.value_and_grad(loss, argnums=(0,), source="autograd")(params, x, scale=2.0)
g3, aux = rb.grad(with_aux, has_aux=True)(params, x)
y, pullback = rb.vjp(np.sin, x)
cotangents: tuple[Any, ...] = pullback(np.ones_like(x))
out, pullback_aux, aux2 = rb.vjp(with_aux, params, x, has_aux=True)
J = rb.jacobian(lambda v: np.sin(v))(x[0])
J2 = rb.jacobian(np.sin)(x[0])
E = rb.elementwise_grad(np.tanh)(x)
vector, unflatten = rb.flatten(params)
vector64: npt.NDArray[np.float64] = vector
restored = unflatten(vector)
worst: float = rb.check_grads(loss, params, x)
y2, tape = rb.trace(loss, params, x)
ops: int = len(tape)


def pair_loss(p: Pair) -> Any:
    return np.sum(p.a * p.b)


# a gradient has its argument's type: the same dict of arrays, the same namedtuple
assert_type(g, Params)
assert_type(g3, Params)
assert_type(rb.value_and_grad(loss)(params, x)[1], Params)
assert_type(rb.grad(pair_loss)(Pair(x, x)), Pair)
assert_type(rb.jit(rb.grad(loss))(params, x), Params)  # jit keeps the function's type
assert_type(rb.grad(lambda w: np.sum(w))(x), Any)  # a lambda's parameters are untyped
assert_type(rb.grad(loss, 1)(params, x), Any)  # another argnums: not typed by argument
rb.register_container(Pair, lambda p: ((p.a, p.b), None), lambda aux, c: Pair(*c))

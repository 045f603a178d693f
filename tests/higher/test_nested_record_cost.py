"""What a nested differentiation (hvp, hessian, grad of grad) pays per op, where issue 23's hvp
target (at most 4x its gradient, benchmarks/hvp.py) was lost:

- a question of a box's layout asked through NumPy's functions (`np.shape(x)`, `np.ndim(x)`,
  `np.size(x)`, `np.result_type(x)`, `np.iscomplexobj(x)`: autograd's broadcasting VJPs ask all
  four of every argument) is answered as `x.shape` is, a decision of the tape, not a call
  recorded through the rule path;
- an op of an inner trace whose values are an enclosing trace's boxes is found in the tape's
  rule cache under its primals' flat key, not keyed afresh at every call.

Values are checked against jax.hessian of the same program in jax.numpy."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb
from rulebridge.engine import tape as tape_module

jax.config.update("jax_enable_x64", True)

X = np.random.default_rng(5).standard_normal(6)
W = np.random.default_rng(6).standard_normal((4, 6))


def layout_questions(x):
    assert np.shape(x) == (6,) and np.ndim(x) == 1 and np.size(x) == 6
    assert np.result_type(x) == np.float64 and not np.iscomplexobj(x)
    return np.sum(np.sin(x) * x)


def test_layout_questions_through_numpy_are_decisions_like_the_attributes():
    _, tape = rb.trace(layout_questions, X)
    assert [d.kind for d in tape.decisions] == ["shape", "ndim", "size", "dtype", "dtype"]
    np.testing.assert_allclose(rb.grad(layout_questions)(X), np.sin(X) + X * np.cos(X),
                               rtol=1e-14)
    with pytest.raises(rb.ReplayError):  # another shape takes another path: refused
        tape.replay(np.ones(5))


def test_a_complex_argument_answers_iscomplexobj_and_differentiates():
    z = X[:3] + 1j * X[3:]

    def f(z):
        return np.sum(np.abs(z) ** 2) if np.iscomplexobj(z) else np.sum(z)

    _, tape = rb.trace(f, z)
    assert [d.kind for d in tape.decisions] == ["dtype"]
    # d|z|^2/dx - i d|z|^2/dy (autograd's convention, rulebridge's): 2x - 2iy, by central
    # differences of NumPy's own function
    h = 1e-6
    want = np.array([(f(z + h * e) - f(z - h * e)) / (2 * h)
                     - 1j * (f(z + 1j * h * e) - f(z - 1j * h * e)) / (2 * h)
                     for e in np.eye(3)])
    np.testing.assert_allclose(rb.grad(f)(z), want, rtol=1e-8)


def loss(xp, x):
    h = xp.tanh(W @ x + 0.5)
    return xp.mean((h - 0.25) ** 2)


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_a_nested_trace_finds_its_ops_in_the_cache(source, monkeypatch):
    hessian = rb.hessian(lambda x: loss(np, x), source=source)
    want = jax.hessian(lambda x: loss(jnp, x))(X)
    for _ in range(2):  # warm: every key seen and checked (a check clears the caches)
        np.testing.assert_allclose(hessian(X), want, rtol=1e-10, atol=1e-13)
    keyed = []
    real = tape_module.keyed
    monkeypatch.setattr(tape_module, "keyed", lambda *a: keyed.append(a[0]) or real(*a))
    np.testing.assert_allclose(hessian(X), want, rtol=1e-10, atol=1e-13)
    names = sorted({getattr(function, "__name__", str(function)) for function in keyed})
    # tanh, matmul, add, subtract, power and mean of boxes whose values are boxes: all cached
    assert not {"tanh", "matmul", "add", "subtract", "power", "mean"} & set(names), names

"""What a nested differentiation (hvp, hessian, grad of grad) pays per op, where issue 23's hvp
target (at most 4x its gradient, benchmarks/hvp.py) was lost:

- a question of a box's layout asked through NumPy's functions (`np.shape(x)`, `np.ndim(x)`,
  `np.size(x)`, `np.result_type(x)`, `np.iscomplexobj(x)`: autograd's broadcasting VJPs ask all
  four of every argument) is answered as `x.shape` is, a decision of the tape, not a call
  recorded through the rule path;
- an op of an inner trace whose values are an enclosing trace's boxes is found in the tape's
  rule cache under its primals' flat key, not keyed afresh at every call;
- so is a call with a static argument no flat key spells (an index `p[:3]`, a shape, axes, a
  dtype: `rulebridge.untake`'s), keyed once per call shape;
- an index read of an enclosing trace's box is given the engine's functional rule when it is
  recorded: no source's pullback is tried on boxes and raises first;
- a gradient's tape, swept once and never replayed, keeps no decisions.

Values are checked against jax.hessian of the same program in jax.numpy."""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb
from tests.support.tapes import recorded_tapes
from rulebridge.engine import fallback as fallback_module
from rulebridge.engine import sweep as sweep_module
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


def sliced_loss(xp, p):
    w = p[:24].reshape(4, 6)
    b = p[24:28]
    h = xp.tanh(w @ X + b)
    return xp.mean((h - 0.25) ** 2)


P = np.random.default_rng(7).standard_normal(28)
VP = np.random.default_rng(8).standard_normal(28)


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_nested_index_reads_and_static_arguments_are_keyed_once_and_never_raise(source,
                                                                               monkeypatch):
    hvp = rb.hvp(lambda p: sliced_loss(np, p), source=source)
    want = jax.jvp(jax.grad(lambda p: sliced_loss(jnp, p)), (P,), (VP,))[1]
    for _ in range(2):  # warm: every key seen and checked
        np.testing.assert_allclose(hvp(P, VP), want, rtol=1e-10, atol=1e-13)
    keyed, raised = [], []
    real_keyed, real_raised = tape_module.keyed, fallback_module.pullback_raised
    monkeypatch.setattr(tape_module, "keyed", lambda *a: keyed.append(a[0]) or real_keyed(*a))
    monkeypatch.setattr(sweep_module, "pullback_raised",
                        lambda *a: raised.append(a[1][0].function) or real_raised(*a))
    np.testing.assert_allclose(hvp(P, VP), want, rtol=1e-10, atol=1e-13)
    # (JAX's jitted pullbacks raise on boxes and offer their rule then: engine/again.py)
    assert keyed == [] and operator.getitem not in raised


def test_a_nested_index_read_has_the_engines_rule_and_a_plain_one_the_sources(monkeypatch):
    tapes = recorded_tapes(monkeypatch)
    got = rb.hvp(lambda p: sliced_loss(np, p), source="autograd")(P, VP)
    want = jax.jvp(jax.grad(lambda p: sliced_loss(jnp, p)), (P,), (VP,))[1]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)
    outer, inner = tapes
    reads = {tape: [e[0].source for e in tape.entries if e[0].function is operator.getitem]
             for tape in (outer, inner)}
    assert reads[inner] == ["rulebridge"] * 2  # on the outer trace's boxes: untake's pullback
    assert reads[outer] == ["autograd"] * 2  # the same reads of plain values: the source's
    assert outer.decisions == [] and inner.decisions == []  # swept, never replayed


def test_a_traced_tape_keeps_its_decisions_and_a_gradient_gives_the_same_values():
    _, tape = rb.trace(layout_questions, X)
    assert len(tape.decisions) == 5
    assert not tape.keeps_decisions  # finished: nothing more is kept

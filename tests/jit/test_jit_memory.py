"""A replay holds no more memory than the eager call: a large intermediate that only a
pullback's shape question or a VJP made at the forward reads is let go before the reverse
sweep, as the eager tape's shedding lets it go (rulebridge/jit/compacting.py). Keeping it cost
the suite's kron_view_sum row 1.6x the eager gradient's time."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import rulebridge as rb
from tests.jit.test_jit import assert_same


def kron_view_sum(x, y):
    return np.sum(np.kron(x[:20, :20], np.triu(y)))


def kron_sum(x, y):
    return np.sum(np.kron(x, y))


def peak(f, *args) -> int:
    f(*args)
    tracemalloc.start()
    try:
        f(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("function", [kron_view_sum, kron_sum])
@pytest.mark.parametrize("source", ["autograd", None])
def test_replay_peaks_no_higher_than_the_eager_gradient(function, source):
    rng = np.random.default_rng(0)
    shapes = ((40, 30), (40, 40)) if function is kron_view_sum else ((20, 20), (40, 40))
    x, y = (rng.standard_normal(s) for s in shapes)
    eager = rb.grad(function, (0, 1), source=source)
    step = rb.jit(rb.grad(function, (0, 1), source=source))
    for _ in range(3):
        step(x, y)
    assert step.replays >= 1
    x2, y2 = x + 0.5, y * 1.5
    assert_same(step(x2, y2), eager(x2, y2))  # new inputs, to the bit
    eager_peak, replay_peak = peak(eager, x2, y2), peak(step, x2, y2)
    kron_bytes = 640_000 * 8
    assert replay_peak < eager_peak + kron_bytes // 2, (replay_peak, eager_peak)


def test_a_jacobian_and_a_gradient_through_large_ops():
    """A jacobian's tape sheds while it records: its large ops reach the program compacted."""
    b = np.random.default_rng(0).normal(size=(60, 60))

    def f(x):
        return np.sum(np.kron(x, b), axis=1)[:3] * np.sum(np.tanh(np.kron(x, b)))

    def loss(x):
        return np.sum(f(x) ** 2)

    jac, vg = rb.jit(rb.jacobian(f)), rb.jit(rb.value_and_grad(loss))
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = rng.normal(size=(3, 3))
        assert_same(jac(x), rb.jacobian(f)(x))
        assert_same(vg(x), rb.value_and_grad(loss)(x))
    assert jac.replays == 3 and vg.replays == 3 and jac.eager_calls == vg.eager_calls == 0
    assert all("_cmp" in str(p) for p in jac.programs + vg.programs)


LARGE = np.linspace(0.0, 1.0, 9000)  # 72 KB: above the tape's LARGE_BYTES


def _branching(x):
    if x[1] > 0:
        return np.sin(x[0]) * LARGE * x[1]
    return np.cos(x[0]) * LARGE * x[1]


def _deciding_after_a_large_output(x):
    big = np.outer(LARGE, x)
    return big * 2.0 if x[0] > 0 else big * 3.0


@pytest.mark.parametrize("f", [_branching, _deciding_after_a_large_output])
def test_a_jitted_jacobian_with_large_outputs_keeps_its_guards(f):
    # A jacobian's eager tape sheds as it records and drops its decisions then (it is never
    # replayed); a jitted one is, and replaying the other branch gave a wrong Jacobian.
    jitted, a = rb.jit(rb.jacobian(f)), np.array([0.3, 0.5])
    for _ in range(3):
        np.testing.assert_array_equal(jitted(a), rb.jacobian(f)(a))
    for x in (np.array([0.3, -0.5]), -a):
        np.testing.assert_array_equal(jitted(x), rb.jacobian(f)(x))
        step = np.array([1e-6, 0.0])  # the first column, by central differences
        np.testing.assert_allclose(jitted(x)[:, 0], (f(x + step) - f(x - step)) / 2e-6,
                                   rtol=1e-6, atol=1e-9)

"""The matrix run's estimate of the time left, and its memory between rows."""

from __future__ import annotations

import io

import numpy as np

import rulebridge as rb
from rulebridge.checking import matrix
from rulebridge.checking.progress import Progress


def test_the_estimate_weighs_rows_by_their_expected_cost():
    progress = Progress("rulebridge matrix", "functions", stream=io.StringIO(), bar=False)
    # half the rows done in 100 s, but they were the cheap half: 10 of 110 expected seconds
    line = progress.line(50, 100, 100.0, work=(10.0, 110.0))
    assert line.endswith("about 1000 s left"), line
    # without an earlier run's timings the count's guess says that it is one
    assert progress.line(50, 100, 100.0).endswith(
        "about 100 s left (a guess from the count: no timings of an earlier run)")


def test_rows_new_since_the_earlier_run_weigh_the_median():
    weights = matrix._weights(["a", "b", "c", "d"], {"a": 1.0, "b": 3.0, "c": 9.0})
    assert weights == {"a": 1.0, "b": 3.0, "c": 9.0, "d": 3.0}
    assert matrix._weights(["a"], {}) == {}


def test_release_drops_compiled_pullbacks_and_the_next_gradient_is_still_right():
    x = np.linspace(0.1, 1.0, 5)
    f = rb.grad(lambda v: np.sum(np.sin(v) * np.cbrt(v)), source="jax")
    before = f(x)
    jax_adapter = rb.REGISTRY.adapter("jax")
    assert jax_adapter.__dict__.get("_pullbacks")  # compiled for np.cbrt and the others
    matrix.release()
    assert "_pullbacks" not in jax_adapter.__dict__ and not rb.REGISTRY.rules()
    after = f(x)
    expected = np.cos(x) * np.cbrt(x) + np.sin(x) / (3 * np.cbrt(x) ** 2)
    assert np.allclose(after, expected, rtol=1e-12) and np.array_equal(before, after)


def test_workers_are_replaced_after_a_bounded_number_of_rows():
    pool = matrix._pool(matrix.Plan(("autograd",)), 1, None)
    try:
        assert pool._maxtasksperchild == matrix.ROWS_PER_WORKER
    finally:
        pool.terminate()

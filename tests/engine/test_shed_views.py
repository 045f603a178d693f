"""A view of a large temporary does not keep it alive for the sweep (issue 22, section 1), and a
write through a view whose op was shed still finds the parent (rulebridge/engine/shedding.py
`shed_parent`, rulebridge/writes/views.py).

While the function runs, each large output sheds the ops recorded since: a small traced argument
that is a view of a large array (a row of a large temporary) becomes a copy of its own; the
parent of a view, which a later write through the view needs, is kept by weak reference, since
a parent no one holds has no views left to write through. Every gradient is checked against
central differences of the same NumPy program."""

import gc

import numpy as np
import pytest

import rulebridge as rb
from benchmarks.cycles import WITHIN_2X, ratio
from tests.support.numerical import central_difference

N = 20_000  # 3 x N float64: above the tape's LARGE_BYTES
C = np.linspace(0.0, 1.0, N)
X = np.array([0.3, -0.8, 1.1])


def _write_through_the_view(x):
    s = np.outer(x, C)[:, :2]  # the parent is held only by the view's base
    big = np.exp(np.outer(x, C))  # a large output: the ops before it are shed
    s[0, 0] = 3.0 * x[1]  # a write through the view: recorded on the parent too
    return np.sum(s * s) + np.sum(big[:, :2])


def _write_into_the_parent(x):
    p = np.outer(x, C)
    s = p[:, 1:3]
    big = np.sin(p)  # sheds the view op
    p[1, 1] = x[0] * x[2]  # the view is stale: taken again from the parent
    return np.sum(s ** 2) + np.sum(big[:, :3])


def _views_of_views(x):
    p = np.outer(x, C).reshape(3, 2, N // 2)
    v = p[:, 0]
    w = v[1:, :4]
    big = np.tanh(p)
    w[0] = np.concatenate([x, x[:1]]) * 2.0
    return np.sum(p[:, 0, :4] ** 2) + np.sum(big[:, :, :2])


def _rows_in_a_loop(x):
    total = 0.0
    for i in range(4):
        p = np.outer(x * (i + 1), C)  # large, traced
        total = total + np.sum(p[i % 3][:5] ** 2)  # a small view read: a copy when shed
    return total


PROGRAMS = [_write_through_the_view, _write_into_the_parent, _views_of_views, _rows_in_a_loop]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
def test_gradients_through_views_of_shed_large_temporaries_are_right(program):
    g = rb.grad(program)(X.copy())
    np.testing.assert_allclose(g, central_difference(program, (X,)), rtol=1e-6, atol=1e-6)


def test_views_of_large_temporaries_in_cyclic_garbage_stay_within_2x():
    assert "views" in WITHIN_2X
    plain, ours = ratio("views")
    assert ours <= 2 * plain, (plain, ours)


def test_a_shed_parent_is_freed_when_nothing_holds_it():
    import weakref

    seen = []

    def f(x):
        p = np.outer(x, C)
        seen.append(weakref.ref(p._value))
        total = np.sum(p[:, :2])
        del p
        np.exp(np.outer(x, C))  # a large output: sheds the view op of p
        gc.collect()
        assert seen[0]() is None, "the shed view op kept its parent alive"
        return total

    rb.grad(f)(X.copy())

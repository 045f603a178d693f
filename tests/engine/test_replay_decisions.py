"""`tape.replay` checks every decision the program took on traced values when it was traced, and
raises where new inputs would decide differently, instead of returning the recorded path's value
(issue 22, section 6). The reference is the function itself on the new inputs."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.engine.decisions import Decision


def branch(x):
    if np.sum(x) > 0:
        return np.sum(x * 2)
    return np.sum(x * 10)


def doubling(x):
    while np.max(x) < 10:  # a loop count decided by traced values
        x = x * 2
    return np.sum(x)


def by_rows(x):
    total = 0.0
    for row in x:  # len(x)
        total = total + np.sin(row)
    return total


def halves(x):
    return np.sum(np.sin(x.reshape(x.shape[0] // 2, 2)))  # x.shape


def masked(x):
    return np.sum(x[x > 0] ** 2)  # a mask: a plain bool array the tape does not follow


def at_largest(x):
    return x[np.argmax(x)] * 3.0  # an index computed from traced values


def where_nonzero(x):
    (i,) = np.nonzero(x > 1)
    return np.sum(np.cos(x[i]))


def kind_of_value(x):
    return np.sum(x) * (2.0 if x.dtype == np.float64 else 3.0)


CASES = [  # (function, traced at, same path, another path)
    (branch, np.array([1.0]), np.array([4.0]), np.array([-1.0])),
    (doubling, np.array([1.0, 3.0]), np.array([1.5, 2.6]), np.array([0.1, 2.0])),
    (by_rows, np.array([1.0, 2.0]), np.array([0.5, 0.25]), np.array([1.0, 2.0, 3.0])),
    (halves, np.arange(4.0), np.arange(4.0) + 1, np.arange(6.0)),
    (masked, np.array([1.0, -2.0, 3.0]), np.array([2.0, -1.0, 1.0]), np.array([2.0, 1.0, 1.0])),
    (at_largest, np.array([1.0, -2.0, 3.0]), np.array([2.0, -1.0, 5.0]),
     np.array([9.0, -1.0, 5.0])),
    (where_nonzero, np.array([1.0, -2.0, 3.0]), np.array([0.5, 0.0, 9.0]),
     np.array([9.0, -1.0, 5.0])),
    (kind_of_value, np.array([1.0, 2.0]), np.array([3.0, 4.0]),
     np.array([1.0, 2.0], dtype=np.float32)),
]


@pytest.mark.parametrize("f, traced, same, other", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_replay_on_another_path_raises_and_on_the_same_path_is_the_function(f, traced, same,
                                                                              other):
    _, tape = rb.trace(f, traced)
    np.testing.assert_allclose(tape.replay(same), f(same), rtol=1e-15)
    with pytest.raises(rb.ReplayError, match="these inputs take another path"):
        tape.replay(other)
    np.testing.assert_allclose(tape.replay(same), f(same), rtol=1e-15)  # the tape is unharmed


def test_the_issue_case_gives_the_error_not_minus_two():
    _, tape = rb.trace(branch, np.array([1.0]))
    assert branch(np.array([-1.0])) == -10.0
    with pytest.raises(rb.ReplayError, match=r"numpy\.greater .* got np.True_ when it was "
                                             r"traced, but these inputs give np.False_"):
        tape.replay(np.array([-1.0]))


def test_the_decisions_are_a_small_list_on_the_tape_in_the_order_taken():
    _, tape = rb.trace(doubling, np.array([1.0, 3.0]))  # 3, 6, 12: three comparisons
    assert [type(d) for d in tape.decisions] == [Decision] * 3
    assert [d.kind for d in tape.decisions] == ["value"] * 3
    assert [bool(d.outcome) for d in tape.decisions] == [True, True, False]
    positions = [d.position for d in tape.decisions]
    assert positions == sorted(positions) and positions[-1] <= len(tape)
    _, tape = rb.trace(halves, np.arange(4.0))
    assert [(d.var, d.kind, d.outcome) for d in tape.decisions] == [(0, "shape", (4,))]


def test_a_decision_is_checked_before_the_ops_that_follow_it_run():
    # On the other path the recorded reshape would fail: the error is the path's, not NumPy's.
    _, tape = rb.trace(halves, np.arange(4.0))
    with pytest.raises(rb.ReplayError, match=r"%0\.shape .* got \(4,\) .* give \(5,\)"):
        tape.replay(np.arange(5.0))


def test_gradients_are_unchanged_by_the_recording():
    x = np.array([0.3, -0.2, 0.9])
    for f in (masked, at_largest, doubling, branch):
        h = 1e-6
        fd = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(rb.grad(f)(x), fd, rtol=1e-7, atol=1e-9)

"""Python lists and tuples of numbers where NumPy takes an array_like (`np.take(x, [0, 2, 2])`,
`np.percentile(x, [25.0, 75.0])`, `x + [1.0, 2.0]`, `np.concatenate([x, [1.0]])`) and where it
reads a sequence (shapes, axes, `reps`, pad widths): NumPy converts the first kind with
np.asarray, JAX refuses it, so the JAX adapter hands JAX an array there. Each source is right
(against float64 central differences of the plain NumPy program) or raises one of rulebridge's
errors; JAX, which covers every function here, must be right."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import assert_right_or_raises, central_difference

X = np.linspace(0.3, 1.7, 6)
A = X.reshape(2, 3)
W = np.arange(6.0)

PROGRAMS = {
    "take list": (lambda a: np.sum(np.take(a, [0, 2, 2]) ** 2), X),
    "take tuple": (lambda a: np.sum(np.take(a, (0, 2, 2)) ** 2), X),
    "take nested list, axis": (lambda a: np.sum(np.take(a, [[0, 1], [2, 2]], axis=1) ** 2), A),
    "repeat counts": (lambda a: np.sum(np.repeat(a, [1, 2, 0, 1, 1, 3]) ** 2), X),
    "delete positions": (lambda a: np.sum(np.delete(a, [0, 3]) * W[:4]), X),
    "percentile": (lambda a: np.sum(np.percentile(a, [25.0, 75.0])), X),
    "where condition": (lambda a: np.sum(np.where([True, False, True, True, False, True], a,
                                                  0.0) ** 2), X),
    "operand list": (lambda a: np.sum((a + [1.0, 2, 3, 4, 5, 6]) ** 2), X),
    "dot with a list": (lambda a: np.dot(a, [1.0, 2, 3, 4, 5, 6]), X),
    "concatenate with a list": (lambda a: np.sum(np.concatenate([a, [1.0, 2.0]]) ** 2 * 0.5), X),
    "diff prepend list": (lambda a: np.sum(np.diff(a, prepend=[0.0]) ** 2), X),
    "choose list": (lambda a: np.sum(np.choose([0, 1, 0], [a[0], a[1]]) ** 2), A),
    # sequences NumPy reads as sequences: left as they are
    "reshape list": (lambda a: np.sum(np.reshape(a, [3, 2]) ** 3), A),
    "roll lists": (lambda a: np.sum(np.roll(a, [1, 2], axis=[0, 1]) * W.reshape(2, 3)), A),
    "pad widths": (lambda a: np.sum(np.pad(a, [(1, 0), (0, 2)]) ** 2), A),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jax_differentiates_numbers_given_as_python_sequences(name):
    f, a = PROGRAMS[name]
    expected = central_difference(f, (a,))
    np.testing.assert_allclose(rb.grad(f, source="jax")(a.copy()), expected, rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("source", ["autograd", None])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_source_is_right_or_raises_on_python_sequences(name, source):
    f, a = PROGRAMS[name]
    assert_right_or_raises(f, a, central_difference(f, (a,)), source, rtol=1e-6, atol=1e-8)


def test_source_none_finds_the_source_that_takes_lists():
    f, a = PROGRAMS["take list"]
    np.testing.assert_allclose(rb.grad(f)(a.copy()), central_difference(f, (a,)), rtol=1e-6)


# -- traced values nested two levels deep in one argument ----------------------------------------


@pytest.mark.parametrize("program, nested", [
    (lambda a: np.sum(np.block([[a, a], [a, a]])), True),
    (lambda a: np.sum(np.block([[a], [np.sin(a)]])), True),
    # NumPy's dispatcher finds no box in these (it looks one list deep), so NumPy's C code
    # converts the box: the np.asarray refusal
    (lambda a: np.sum(np.concatenate(([a, a], [a]))), False),
    (lambda a: np.sum(np.concatenate([(a,), (a, a)])), False),
])
def test_a_traced_value_two_lists_deep_raises_the_fix_never_a_recursion(program, nested):
    """The tape records a traced argument and a list or tuple of them; a box one list deeper
    reached the op's forward still boxed, whose NumPy function handed it back to the tape, which
    recorded the call again, without end (a RecursionError)."""
    with pytest.raises(rb.TracingError) as info:
        rb.grad(program)(X)
    first = str(info.value).splitlines()[0]
    assert first.startswith("tests/boundary/test_sequence_arguments.py:"), first
    assert ("is nested in a list, tuple or dict" in first) == nested, first
    assert "Fix: " in str(info.value)


def test_nested_plain_lists_and_one_level_of_traced_values_still_work():
    def f(a):
        return (np.sum(np.concatenate([a, a * 2.0]) ** 2) + np.sum(np.take(a, [[0, 1], [2, 2]]))
                + np.sum(np.stack((a, np.sin(a))) * np.array([[1.0], [2.0]])))
    np.testing.assert_allclose(rb.grad(f)(X), central_difference(f, (X,)), rtol=1e-6)

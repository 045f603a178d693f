"""Issue 15's silent-wrong paths at the API: argnums naming one argument twice, returned
gradients that alias each other or the caller's arrays, and vjp of a function that writes into
its argument. References are float64 central differences of the same program."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import central_difference

SOURCES = ["autograd", "jax"]


def _owned(arrays, held):
    """Every array in `arrays` is writable and shares memory with no other one nor with `held`."""
    for k, a in enumerate(arrays):
        assert isinstance(a, np.ndarray) and a.flags.writeable
        for b in list(arrays[:k]) + list(held):
            assert not np.may_share_memory(a, b)


@pytest.mark.parametrize("source", SOURCES)
def test_argnums_naming_one_argument_twice_gives_its_gradient_twice(source):
    f = lambda a, b: np.sum(np.sin(a) * b)
    x, y = np.linspace(0.1, 1.0, 4), np.linspace(-1.0, 2.0, 4)
    expected = central_difference(f, (x, y), 0)
    g0, g1, g2 = rb.grad(f, argnums=(0, 0, 1), source=source)(x, y)
    np.testing.assert_allclose(g0, expected, rtol=1e-7)
    np.testing.assert_allclose(g1, expected, rtol=1e-7)
    np.testing.assert_allclose(g2, central_difference(f, (x, y), 1), rtol=1e-7)
    _owned([g0, g1, g2], [x, y])


@pytest.mark.parametrize("source", SOURCES)
def test_gradients_of_a_sum_are_distinct_arrays(source):
    # add's pullback hands the same cotangent to both operands.
    x, y = np.arange(3.0), np.arange(3.0, 6.0)
    gx, gy = rb.grad(lambda a, b: np.sum(a + b), argnums=(0, 1), source=source)(x, y)
    _owned([gx, gy], [x, y])
    gx *= 0.1
    np.testing.assert_array_equal(gy, np.ones(3))


@pytest.mark.parametrize("source", SOURCES)
def test_container_gradients_are_distinct_across_leaves(source):
    params = {"a": np.ones(3), "b": [np.full(3, 2.0), np.zeros(3)]}
    f = lambda p: np.sum(p["a"] + p["b"][0] + p["b"][1])
    g = rb.grad(f, source=source)(params)
    leaves = [g["a"], g["b"][0], g["b"][1]]
    _owned(leaves, [params["a"], *params["b"]])
    for leaf in leaves:
        np.testing.assert_array_equal(leaf, np.ones(3))


@pytest.mark.parametrize("source", SOURCES)
def test_vjp_cotangents_alias_neither_ybar_nor_the_arguments(source):
    x = np.linspace(0.0, 1.0, 3)
    ybar = np.array([1.0, -2.0, 0.5])
    # The identity hands ybar straight back; x + 0 * x hands it to two operands.
    for f in (lambda a: a, lambda a: a + 0.0 * a, lambda a: np.concatenate([a, a])[:3]):
        _, pullback = rb.vjp(f, x, source=source)
        (g,) = pullback(ybar)
        np.testing.assert_array_equal(g, ybar)
        _owned([g], [x, ybar])


@pytest.mark.parametrize("source", SOURCES)
def test_vjp_of_a_function_that_writes_into_its_argument(source):
    def f(x):
        x[0] = 9.0
        return x * 2.0

    x = np.array([1.0, 2.0, 3.0])
    y, pullback = rb.vjp(f, x.copy(), source=source)
    np.testing.assert_array_equal(y, [18.0, 4.0, 6.0])
    ybar = np.array([1.0, 0.5, -1.0])
    (g,) = pullback(ybar)
    expected = central_difference(lambda a: np.sum(f(a) * ybar), (x,))
    np.testing.assert_allclose(g, expected, atol=1e-8)  # [0, 1, -2]: the first entry was overwritten
    # and the same through grad and a returned written argument
    def g_of(x):
        x[1:] = np.sin(x[1:]) * x[0]
        return x

    _, pullback = rb.vjp(g_of, x.copy(), source=source)
    (g2,) = pullback(ybar)
    np.testing.assert_allclose(
        g2, central_difference(lambda a: np.sum(g_of(a) * ybar), (x,)), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("source", SOURCES)
def test_one_box_returned_twice_gets_both_cotangents(source):
    x = np.array([0.3, 0.7])
    _, pullback = rb.vjp(lambda a: (np.sin(a),) * 2, x, source=source)
    (g,) = pullback((np.ones(2), np.full(2, 2.0)))
    np.testing.assert_allclose(g, 3.0 * np.cos(x), rtol=1e-12)

"""A traced value that escaped a finished differentiation is refused with
NestedDifferentiationError on every route by which it can reach another: never a number that
mixes the two. (Nesting itself, grad of grad and a gradient inside a loss, is supported:
tests/higher/test_levels.py.)"""

import numpy as np
import pytest

import rulebridge as rb

x0 = np.array([0.3, -1.2, 0.7])
y0 = np.array([1.1, 0.4, -0.5])


def _leak():
    leaked = []

    def f(x):
        leaked.append(np.sin(x))
        return np.sum(x)

    rb.grad(f)(x0)
    return leaked[0]


@pytest.mark.parametrize("use", [
    lambda box, y: np.sum(y * box),  # mixed with the new differentiation's box
    lambda box, y: np.sum(box * y),  # the leaked box first
    lambda box, y: np.sum(box),  # the result is the leaked box's
    lambda box, y: np.sum(np.stack([y, box])),  # inside a sequence
])
def test_box_leaked_from_an_earlier_call(use):
    box = _leak()
    with pytest.raises(rb.NestedDifferentiationError):
        rb.grad(lambda y: use(box, y))(y0)


def test_box_leaked_from_an_earlier_call_cannot_be_computed_with_afterwards():
    box = _leak()
    with pytest.raises(rb.NestedDifferentiationError, match="escaped"):
        np.exp(box)
    with pytest.raises(rb.NestedDifferentiationError, match="escaped"):
        np.sin(box)  # a rule the leaking tape used: Traced.__array_ufunc__'s inline path
    with pytest.raises(rb.NestedDifferentiationError, match="escaped"):
        box + 1.0


def test_each_level_alone_still_differentiates():
    inner = rb.grad(lambda y: np.sum(np.sin(y) * y))
    np.testing.assert_allclose(inner(y0), np.cos(y0) * y0 + np.sin(y0), rtol=1e-14)
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(x ** 2))(inner(y0)), 2 * inner(y0))

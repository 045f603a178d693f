"""Nested differentiation is refused with NestedDifferentiationError on every route by which a
traced value of one differentiation can reach another: never a number that mixes the two."""

import numpy as np
import pytest

import rulebridge as rb

x0 = np.array([0.3, -1.2, 0.7])
y0 = np.array([1.1, 0.4, -0.5])
DIFFERENTIATE = {  # how an inner differentiation may be started
    "grad": lambda f, *args: rb.grad(f)(*args),
    "value_and_grad": lambda f, *args: rb.value_and_grad(f)(*args)[1],
    "vjp": lambda f, *args: rb.vjp(f, *args)[1](np.ones(np.shape(f(*args))))[0],
    "trace": lambda f, *args: rb.trace(f, *args)[0],
}


def _refused(outer, *args):
    with pytest.raises(rb.NestedDifferentiationError) as info:
        rb.grad(outer)(*args)
    assert "nested" in str(info.value) or "escaped" in str(info.value)
    return info.value


@pytest.mark.parametrize("inner", sorted(DIFFERENTIATE))
def test_box_passed_to_an_inner_differentiation(inner):
    def outer(x):
        return np.sum(DIFFERENTIATE[inner](lambda z: np.sum(np.sin(z) * z), x))

    _refused(outer, x0)


@pytest.mark.parametrize("inner", sorted(DIFFERENTIATE))
def test_outer_box_closed_over_and_mixed_with_the_inner_one(inner):
    def outer(x):
        return np.sum(DIFFERENTIATE[inner](lambda y: np.sum(y * x), y0))

    _refused(outer, x0)


@pytest.mark.parametrize("inner", ["grad", "value_and_grad", "vjp"])
def test_inner_result_depends_only_on_the_closed_over_box(inner):
    # d/dy of sum(x**2) is zero, d/dx of that is zero too; but the inner function returns an
    # outer box, which must not be mistaken for a constant of the inner differentiation.
    def outer(x):
        return np.sum(DIFFERENTIATE[inner](lambda y: np.sum(x ** 2), y0))

    _refused(outer, x0)


def test_box_in_a_non_differentiated_argument_of_the_inner_call():
    def outer(x):
        return np.sum(rb.grad(lambda y, c: np.sum(y * c))(y0, x))

    _refused(outer, x0)


def test_box_in_a_keyword_argument_of_the_inner_call():
    def outer(x):
        return np.sum(rb.grad(lambda y, c=None: np.sum(np.sin(y) * c))(y0, c=x))

    _refused(outer, x0)


def test_box_inside_a_list_handed_to_the_inner_call():
    def outer(x):
        return np.sum(rb.grad(lambda y, cs: np.sum(np.concatenate([y] + cs)))(y0, [x]))

    _refused(outer, x0)


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

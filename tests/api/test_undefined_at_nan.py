"""A derivative of an output whose value is NaN is not defined: the gradient says so with NaN
wherever that output depends on an input, never with the finite number a rule's convention gives
at NaN (`clip`'s VJP at NaN is 1 in autograd's rule and 0 in JAX's; neither means anything).
Entries the NaN output does not read, and outputs that stay finite though an input is NaN
(`nan_to_num`, `sort`), keep their gradients."""

import numpy as np
import pytest

import rulebridge as rb

X = np.array([np.nan, 0.5, -0.3])
SOURCES = ["autograd", "jax", None]


def clipped(v):
    return np.sum(np.clip(v, -1.0, 1.0))


def rectified(v):
    return np.sum(np.maximum(v, 0.0))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("f", [clipped, rectified, lambda v: np.sum(np.where(v > 0, v, 2 * v))])
def test_a_nan_value_has_no_finite_gradient(f, source):
    with np.errstate(invalid="ignore"):
        assert np.isnan(f(X))
        g = rb.grad(f, source=source)(X)
        value, g2 = rb.value_and_grad(f, source=source)(X)
    assert np.isnan(value)
    assert np.isnan(g).all(), g
    assert np.isnan(g2).all(), g2


@pytest.mark.parametrize("source", SOURCES)
def test_entries_a_nan_output_does_not_read_keep_their_gradient(source):
    def f(v):
        return np.clip(v[0], -1.0, 1.0) * 0.0 + np.sin(v[1])

    with np.errstate(invalid="ignore"):
        g = rb.grad(f, source=source)(X)
    assert np.isnan(g[0]) and np.isnan(g[1])  # the NaN value reads both
    assert g[2] == 0.0                         # and not this one


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("f, expected", [
    (lambda v: np.sum(np.nan_to_num(v)), [0.0, 1.0, 1.0]),  # f is flat in the NaN entry
    (lambda v: np.sort(v)[0], [0.0, 0.0, 1.0]),        # NaN sorts last; -0.3 is the value
])
def test_finite_values_keep_their_gradients_at_nan_inputs(f, expected, source):
    with np.errstate(invalid="ignore"):
        g = rb.grad(f, source=source)(X)
    np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("source", SOURCES)
def test_jacobian_rows_of_nan_outputs_are_nan_where_they_depend(source):
    with np.errstate(invalid="ignore"):
        jac = rb.jacobian(lambda v: np.clip(v, -1.0, 1.0), source=source)(X)
    assert np.isnan(jac[0, 0])
    np.testing.assert_array_equal(jac[0, 1:], 0.0)       # y0 reads x0 only
    np.testing.assert_array_equal(jac[1:], [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


@pytest.mark.parametrize("source", SOURCES)
def test_vjp_cotangents_on_nan_outputs(source):
    with np.errstate(invalid="ignore"):
        y, pullback = rb.vjp(lambda v: np.clip(v, -1.0, 1.0), X, source=source)
        (g,) = pullback(np.array([1.0, 2.0, 3.0]))
        (h,) = pullback(np.array([0.0, 2.0, 3.0]))     # no cotangent on the NaN output
    assert np.isnan(g[0])
    np.testing.assert_array_equal(g[1:], [2.0, 3.0])
    np.testing.assert_array_equal(h, [0.0, 2.0, 3.0])


def test_a_jitted_gradient_agrees_with_the_eager_one_at_nan():
    step = rb.jit(rb.grad(clipped))
    good = np.array([0.2, 0.5, -0.3])
    with np.errstate(invalid="ignore"):
        for _ in range(3):
            np.testing.assert_array_equal(step(good), [1.0, 1.0, 1.0])
        assert np.isnan(step(X)).all()
        np.testing.assert_array_equal(step(good), [1.0, 1.0, 1.0])


@pytest.mark.parametrize("source", SOURCES)
def test_forward_mode_gives_no_finite_tangent_of_a_nan_value(source):
    with np.errstate(invalid="ignore"):
        value, tangent = rb.jvp(clipped, (X,), (np.ones(3),), source=source)
        _, along_the_finite_entries = rb.jvp(lambda v: np.sum(np.clip(v[1:], -1.0, 1.0)), (X,),
                                             (np.ones(3),), source=source)
    assert np.isnan(value) and np.isnan(tangent)
    assert along_the_finite_entries == 2.0


@pytest.mark.parametrize("source", ["autograd", None])  # (JAX's clip pushes 0 forward at NaN)
def test_jacfwd_agrees_with_jacobian_at_nan(source):
    f = lambda v: np.clip(v, -1.0, 1.0) * 2.0  # noqa: E731
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(rb.jacfwd(f, source=source)(X),
                                      rb.jacobian(f, source=source)(X))


@pytest.mark.parametrize("source", ["autograd", None])
def test_a_hessian_at_a_nan_input(source):
    # The inner gradient's seed stays 1 (a NaN constant on the enclosing level would leave its
    # first-use checks nothing finite to decide at); the outer rows of NaN values are NaN.
    with np.errstate(invalid="ignore"):
        h = rb.hessian(lambda v: np.sum(np.sin(v) ** 2), source=source)(X)
    assert np.isnan(h[0, 0])
    np.testing.assert_allclose(np.diag(h)[1:], 2 * np.cos(2 * X[1:]), rtol=1e-12)
    np.testing.assert_array_equal(h[1:, 1:] - np.diag(np.diag(h)[1:]), 0.0)


NAN_UPSTREAM = {  # each output entry reads one entry of the NaN-valued intermediate, or none
    "sqrt times a constant": lambda xp, v: xp.sqrt(v) * 2.0,
    "sqrt plus a constant": lambda xp, v: xp.sqrt(v) + 1.0,
    "exp of sqrt less a constant, reversed": lambda xp, v: (xp.exp(xp.sqrt(v)) - 3.0)[::-1],
}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", NAN_UPSTREAM)
def test_jacfwd_at_nan_intermediates_keeps_the_rows_of_finite_outputs(name, source):
    # A pushforward that cannot be checked at NaN values is read off the pullback instead
    # (forward/transpose.py): the NaN tangent of one entry must not reach the outputs that do
    # not read it through 0 * NaN. Reference: jax.jacfwd of the same program.
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    v = np.array([-1.0, 4.0, np.nan, 0.25])
    with jax.enable_x64(True):
        want = np.asarray(jax.jacfwd(lambda v: NAN_UPSTREAM[name](jnp, v))(v))
    with np.errstate(invalid="ignore"):
        got = rb.jacfwd(lambda v: NAN_UPSTREAM[name](np, v), source=source)(v)
    finite = np.isfinite(NAN_UPSTREAM[name](np, v))  # (sqrt of -1 and of NaN are NaN)
    assert finite.sum() == 2 and np.isfinite(got[finite]).all(), got
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)

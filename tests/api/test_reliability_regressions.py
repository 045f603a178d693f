"""Bugs the fuzzer (tests/fuzz) found, each pinned by the smallest program that showed it.
tests/fuzz/FINDINGS.md records each one and its fix."""

import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import assert_right_or_raises, central_difference


def test_python_float_arithmetic_stays_weak_against_float32():
    # Python operators on a traced Python float went through NumPy's ufuncs and came back as a
    # strong np.float64, so `x ** 3 * c` promoted a float32 `c` to float64: a value and dtype
    # NumPy itself never produces.
    c = np.array([0.3, 0.7], dtype=np.float32)

    def f(x, c):
        return np.sum((x ** 3 * 2.5 - x + abs(-x) + 1.0 / (x + 1)) * c)

    value, (gx, gc) = rb.value_and_grad(f, argnums=(0, 1))(1.39, c)
    expected = f(1.39, c)
    assert type(value) is type(expected) and value == expected
    assert type(gx) is float and gc.dtype == np.float32
    c64, h = c.astype(np.float64), 1e-6
    np.testing.assert_allclose(gx, (f(1.39 + h, c64) - f(1.39 - h, c64)) / (2 * h), rtol=1e-6)


def test_numpy_scalars_keep_numpys_own_promotion():
    c = np.array([0.3, 0.7], dtype=np.float32)
    f = lambda x, c: np.sum(x ** 2 * c)
    for x in (np.float64(0.5), np.float32(0.5)):
        value = rb.value_and_grad(f)(x, c)[0]
        assert type(value) is type(f(x, c)) and value == f(x, c)


def test_scalar_operators_give_numpys_scalar_values():
    # NumPy computes `**` on scalars with libm's pow and np.power with a SIMD kernel of its own;
    # on an AVX-512 machine they differ in the last bit for about 19% of float32 arguments. The
    # engine recorded np.power and kept its value. Points spread over (0, 2) so that some differ
    # wherever the two kernels do; the values must equal NumPy's own everywhere.
    points = np.linspace(0.01, 2.0, 200)
    for dtype in (np.float32, np.float64):
        for t in points.astype(dtype):
            f = lambda x: np.sum((2.0 ** np.tanh(x) + x ** 2.5 - x / 3.0) * 0.5)
            value, g = rb.value_and_grad(f)(np.array(t))
            expected = f(np.array(t))
            assert type(value) is type(expected) and value == expected, (dtype, t)
            h = np.float64(t) * 1e-6
            f64 = lambda x: f(np.float64(x))
            assert abs(g - (f64(t + h) - f64(t - h)) / (2 * h)) <= 1e-3 * (1 + abs(g)), (dtype, t)


def test_python_arithmetic_the_rule_cannot_follow_is_refused():
    # Python's `(-2.0) ** 0.5` is complex, np.power's nan: neither value may pass silently.
    # (The recorded ufunc runs first and warns as NumPy does: not what this test is about.)
    with np.errstate(invalid="ignore", divide="ignore"):
        with pytest.raises(rb.TracingError, match=r"operator\.pow\(-2\.0, 0\.5\) is a complex"):
            rb.grad(lambda x: (-x) ** 0.5)(2.0)
        with pytest.raises(ZeroDivisionError):  # as the untraced program raises
            rb.grad(lambda x: x / 0.0)(2.0)


RNG = np.random.default_rng(8)
C34 = RNG.normal(size=(3, 4))
MASK = RNG.random((3, 4)) < 0.5


@pytest.mark.parametrize("name, f, shape, at", [
    # autograd aligned a short `reps` with the leading axes: a silently wrong gradient.
    ("tile int reps on 2-D", lambda x: np.sum(np.tile(x, 2) * C34[:, :2]), (3, 1), None),
    ("tile short reps", lambda x: np.sum(np.tile(x, (2,)) * C34), (3, 2), None),
    # autograd's VJP did not unbroadcast (a RuleContractError).
    ("where broadcast x", lambda x: np.sum(np.where(MASK, x, 0.5) * C34), (4,), None),
    ("where broadcast y", lambda x: np.sum(np.where(MASK, C34, x) * C34), (3, 1), None),
    # autograd's VJP assumed 1-D arguments / no new leading axes (exceptions).
    ("outer of 2-D", lambda x: np.sum(np.outer(x, x[0]) * C34[:2, :1]), (2, 1), None),
    ("broadcast_to new axes", lambda x: np.sum(np.broadcast_to(x, (2, 3, 4)) * C34), (3, 1), None),
    # autograd's prod VJP divides by each element: NaN where one is exactly zero.
    ("prod with a zero", lambda x: np.prod(np.maximum(x, 0.0)) * 2.0, (2,), [0.12, -0.13]),
    ("prod along an axis", lambda x: np.sum(np.prod(x, axis=1, keepdims=True) * C34[:2, :1]),
     (2, 3), [[0.0, 0.5, -1.0], [2.0, 0.0, 0.0]]),
    # autograd's sinc VJP is 0/0 at exactly 0 (NaN; the fuzzer's np.sinc(np.maximum(x, 0.0))).
    ("sinc at zero", lambda x: np.sum(np.sinc(x) * C34[0, :3]), (3,), [-0.5, 0.0, 0.7]),
    ("sinc near zero", lambda x: np.sum(np.sinc(x) * C34[0]), (4,), [1e-9, -3e-4, 2e-3, 0.4]),
])
def test_autograd_rules_fixed_by_corrections(name, f, shape, at):
    x = RNG.normal(size=shape) if at is None else np.array(at)
    g = rb.grad(f, source="autograd")(x)
    np.testing.assert_allclose(g, central_difference(f, (x,)), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_gradients_handed_back_are_the_callers_to_modify(source):
    # JAX's cotangents came back as read-only arrays; an identity pullback handed back ybar.
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    g = rb.grad(lambda x: np.sum(np.where(MASK, x, np.float32(0.5))), source=source)(x)
    assert g.flags.writeable
    ybar = np.ones(4)
    _, pullback = rb.vjp(lambda x: x[0], RNG.normal(size=(3, 4)), source=source)
    (gx,) = pullback(ybar)
    y = RNG.normal(size=4)
    (gy,) = rb.vjp(lambda y: np.reshape(y, (4,)), y, source=source)[1](ybar)
    assert not np.shares_memory(gy, ybar) and not np.shares_memory(gy, y)
    assert gx.flags.writeable and gy.flags.writeable


X22 = np.array([[0.1257302210933933, -0.1321048632913019], [0.5, 0.9]])
NONE_KEPT = np.zeros((2, 2), bool)
ROW_KEPT = np.array([[False, False], [True, False]])
INITIAL_WINS = {
    # every entry masked out: the result is `initial`, a constant (the fuzzer's program)
    "min, nothing kept": lambda a: np.min(a, where=NONE_KEPT, initial=-0.003) * 0.13,
    # entries kept, but all beyond initial
    "max, initial above": lambda a: np.max(a * 2.0, where=ROW_KEPT, initial=3.0),
    # per axis: initial wins in one column, an entry in the other
    "max per column": lambda a: np.sum(np.max(a, axis=0, where=ROW_KEPT, initial=0.7,
                                              keepdims=True) * np.array([[1.0, 2.0]])),
    "amin per row": lambda a: np.sum(np.amin(a, axis=1, initial=0.0) * np.array([1.0, 3.0])),
}


@pytest.mark.parametrize("source", ["autograd", "jax", None])
@pytest.mark.parametrize("name", sorted(INITIAL_WINS))
def test_a_max_or_min_whose_result_is_initial_gives_no_gradient_to_the_entries(name, source):
    # autograd's VJP divides the cotangent among the entries equal to the result: none is
    # when `initial` wins, and 0/0 was NaN where NumPy's function is a constant.
    f = INITIAL_WINS[name]
    expected = central_difference(f, (X22,))
    if source is not None:
        np.testing.assert_allclose(rb.grad(f, source=source)(X22.copy()), expected, atol=1e-9)
    else:
        assert_right_or_raises(f, X22, expected, source, atol=1e-9)

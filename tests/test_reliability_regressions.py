"""Bugs the fuzzer (tests/fuzz) found, each pinned by the smallest program that showed it.
tests/fuzz/FINDINGS.md records each one and its fix."""

import numpy as np

import rulebridge as rb


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

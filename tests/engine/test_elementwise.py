"""The inline recording path of one-input ufuncs in `Traced.__array_ufunc__` (`np.sin(x)`, `-x`):
outputs of another dtype, outputs that carry no gradient and Python-float boxes leave it for the
general path with the same result, and a chain shares each op's (var,) tuple with the next."""

import autograd
import autograd.numpy as anp
import numpy as np

import rulebridge as rb

Z = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])


def test_a_complex_argument_with_a_real_output():
    def f(xp, z):
        return xp.sum(xp.abs(z) ** 2 + xp.sin(xp.real(z)))

    y, tape = rb.trace(lambda z: f(np, z), Z, source="autograd")
    (absolute,) = [op for op in tape.ops if op.rule.function is np.absolute]
    assert absolute.structure is None and len(absolute.outputs) == 1
    expected = autograd.grad(lambda z: f(anp, z))(Z)
    np.testing.assert_allclose(rb.grad(lambda z: f(np, z), source="autograd")(Z), expected,
                               rtol=1e-14)


def test_an_output_without_gradient_is_returned_plain():
    x = np.array([0.5, np.nan, -1.0])

    def f(v):
        missing = np.isnan(v)
        assert type(missing) is np.ndarray and missing.dtype == bool
        return np.sum(np.sin(np.where(missing, 0.0, v)))

    y, tape = rb.trace(f, x, source="autograd")
    assert np.isnan not in [op.rule.function for op in tape.ops]
    g = rb.grad(f, source="autograd")(x)
    np.testing.assert_allclose(g, [np.cos(0.5), 0.0, np.cos(-1.0)], rtol=1e-15)


def test_python_floats_and_float32_arrays():
    g = rb.grad(lambda t: np.sin(t) * np.exp(-t), source="autograd")(0.7)
    assert type(g) is float
    np.testing.assert_allclose(g, np.cos(0.7) * np.exp(-0.7) - np.sin(0.7) * np.exp(-0.7),
                               rtol=1e-15)
    x = np.linspace(-1.0, 1.0, 5, dtype=np.float32)
    g = rb.grad(lambda v: np.sum(np.tanh(-v)), source="autograd")(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, -1 / np.cosh(x) ** 2, rtol=1e-6)


def test_a_chain_shares_each_ops_outputs_tuple_with_the_next_op():
    y, tape = rb.trace(lambda v: np.tanh(np.sin(np.exp(-v))), np.ones(3), source="autograd")
    for before, after in zip(tape.ops, tape.ops[1:]):
        assert after.inputs == before.outputs and after.inputs is before.outputs

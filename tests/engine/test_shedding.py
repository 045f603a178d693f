"""Before a sweep, ops holding large arrays (64 KiB and up) keep only what their pullbacks need
(`Tape.shed_large_values`): gradients stay autograd's, a gradient's peak memory is no more than
autograd's, and tapes that wrote into arrays are left alone."""

import tracemalloc

import autograd
import autograd.numpy as anp
import numpy as np

import rulebridge as rb

RNG = np.random.default_rng(3)


def kron_sum(xp, x, y):
    return xp.sum(xp.kron(x, y))  # a 5 MB intermediate for 20x20 and 40x40 factors


def peak_bytes(gradient, *args) -> int:
    gradient(*args)  # imports, rule lookups and caches are not the gradient's memory
    tracemalloc.start()
    try:
        gradient(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_large_intermediates_give_autograds_gradient_at_no_more_than_its_peak_memory():
    x, y = RNG.normal(size=(20, 20)), RNG.normal(size=(40, 40))
    ours = rb.grad(lambda a, b: kron_sum(np, a, b), argnums=(0, 1), source="autograd")
    theirs = autograd.grad(lambda a, b: kron_sum(anp, a, b), argnum=(0, 1))
    for mine, reference in zip(ours(x, y), theirs(x, y)):
        np.testing.assert_allclose(mine, reference, rtol=1e-12)
    assert peak_bytes(ours, x, y) <= 1.05 * peak_bytes(theirs, x, y)


def test_the_traced_arguments_of_large_ops_become_stand_ins_of_their_shape_and_dtype():
    x = RNG.normal(size=(100, 100))
    tape = rb.trace(lambda a: np.sum(np.tanh(a)), x, source="autograd")[1]
    tape.shed_large_values()
    tape.shed_large_values()  # a second call has nothing left to do
    for op in tape.ops:
        (arg,) = op.args
        assert arg.shape == x.shape and arg.dtype == x.dtype and arg.strides == (0, 0)


def test_a_vjp_made_early_can_be_pulled_back_twice():
    x = RNG.normal(size=(120, 100))
    y, pullback = rb.vjp(lambda a: np.sin(a) * np.exp(a), x, source="autograd")
    ybar = RNG.normal(size=y.shape)
    expected = ybar * (np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x))
    (first,), (second,) = pullback(ybar), pullback(ybar)
    np.testing.assert_allclose(first, expected, rtol=1e-12)
    np.testing.assert_array_equal(first, second)


def test_several_outputs_and_index_reads_of_large_arrays():
    a = RNG.normal(size=(100, 100))
    a = a @ a.T + 100 * np.eye(100)

    def f(xp, m):
        sign, logdet = xp.linalg.slogdet(m)
        w, _ = xp.linalg.eigh(m)
        return logdet + xp.sum(w[:5]) + m[3, 4] + m[7, 7]

    ours = rb.grad(lambda m: f(np, m), source="autograd")(a)
    theirs = autograd.grad(lambda m: f(anp, m))(a)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_a_tape_that_wrote_into_an_array_keeps_its_values():
    """The sweep restores overwritten values: VJPs made at the end of the forward could read the
    overwritten ones, so a tape with writes is not shed."""
    x = RNG.normal(size=(100, 100))

    def f(a):
        y = np.sin(a)
        y *= 2.0
        y[0] = np.cos(a[0])
        return np.sum(y * y)

    g = rb.grad(f, source="autograd")(x)
    expected = 8 * np.sin(x) * np.cos(x)
    expected[0] = -2 * np.cos(x[0]) * np.sin(x[0])
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    tape = rb.trace(f, x, source="autograd")[1]
    tape.shed_large_values()
    assert all(op.args[0].strides != (0, 0) for op in tape.ops if op.inputs[0] is not None)

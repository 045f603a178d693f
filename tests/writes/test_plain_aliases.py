"""Writes into a traced argument's memory through a plain array that shares it (the same array
passed twice, a view of it passed as another argument, inside a list or a keyword): refused with
MutationError, never a wrong gradient (rulebridge/engine/protect.py, `CallersArrays.shield`).
Programs that only read such an argument are differentiated as usual."""

import itertools

import numpy as np
import pytest

import rulebridge as rb
from tests.support.numerical import central_difference

A = np.array([0.3, -1.2, 2.0, 0.8])

# How the plain argument is made from the caller's array `a` (the traced argument).
ALIASES = {
    "the same array": lambda a: a,
    "a slice": lambda a: a[1:],
    "a reversed view": lambda a: a[::-1],
    "a reshaped view": lambda a: a.reshape(2, 2),
    "its base": lambda a: a.base,  # `a` below is itself a view of a larger array
}

# Where the write into the plain alias happens relative to the reads of the traced argument.
def _write_before(x, y):
    y.flat[0] = 5.0
    return np.sum(np.sin(x) * x)


def _write_after(x, y):
    s = np.sum(np.sin(x) * x)
    y.flat[0] = 5.0
    return s


def _write_and_restore(x, y):
    old = y.flat[0]
    y.flat[0] = 5.0
    s = np.sum(np.sin(x) * x)
    y.flat[0] = old  # the final bytes equal the first: a comparison at the end would miss it
    return s


def _in_place_operator(x, y):
    y *= 2.0
    return np.sum(x * x)


def _out_into_plain(x, y):
    np.multiply(y, 2.0, out=y)
    return np.sum(x ** 3)


WRITES = {"before the read": _write_before, "after the read": _write_after,
          "then restored": _write_and_restore, "by *=": _in_place_operator,
          "by out=": _out_into_plain}

# How the plain alias reaches the function.
def _positional(write):
    return lambda x, y: write(x, y), lambda f, a, y: rb.grad(f)(a, y)


def _keyword(write):
    return lambda x, *, y: write(x, y), lambda f, a, y: rb.grad(f)(a, y=y)


def _in_a_list(write):
    return lambda x, ys: write(x, ys[0]), lambda f, a, y: rb.grad(f)(a, [y])


def _in_a_dict(write):
    return lambda x, d: write(x, d["y"]), lambda f, a, y: rb.value_and_grad(f)(a, {"y": y})[1]


PASSING = {"positionally": _positional, "by keyword": _keyword, "in a list": _in_a_list,
           "in a dict": _in_a_dict}


def _traced_array():
    big = np.concatenate([A, [9.0, -9.0]])
    return big[:4]  # a view, so "its base" is an alias too


@pytest.mark.parametrize("alias, write, passing",
                         list(itertools.product(ALIASES, WRITES, PASSING)))
def test_a_write_through_a_plain_alias_of_a_traced_argument_is_refused(alias, write, passing):
    a = _traced_array()
    before = a.base.copy()
    f, call = PASSING[passing](WRITES[write])
    with pytest.raises(rb.MutationError, match="shares memory with an argument being"):
        call(f, a, ALIASES[alias](a))
    np.testing.assert_array_equal(a.base, before)  # NumPy refused before anything was written


def test_the_error_names_the_argument_and_keeps_numpys_error_as_its_cause():
    a = A.copy()
    with pytest.raises(rb.MutationError, match="positional argument 1") as info:
        rb.grad(_write_before)(a, a)
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize("alias", ALIASES)
def test_reading_a_plain_alias_is_differentiated_holding_it_constant(alias):
    def f(x, y):
        return np.sum(np.sin(x) * x) + np.sum(np.cos(y) ** 2) * x[0]

    a = _traced_array()
    y = ALIASES[alias](a)
    got = rb.grad(f)(a, y)
    expected = central_difference(lambda x: f(x, y.copy()), (a.copy(),))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    assert y.flags.writeable  # the caller's own array is untouched


def test_a_write_into_a_plain_array_that_shares_no_memory_still_works():
    a, b = A.copy(), np.zeros(3)

    def f(x, buf):
        buf[:] = 7.0
        return np.sum(x * x)

    np.testing.assert_allclose(rb.grad(f)(a, b), 2 * A)
    np.testing.assert_array_equal(b, 7.0)


def test_other_read_only_errors_are_numpys_own():
    frozen = np.zeros(3)
    frozen.flags.writeable = False

    def f(x, y):
        frozen[0] = 1.0
        return np.sum(x)

    with pytest.raises(ValueError, match="read-only") as info:
        rb.grad(f)(A.copy(), np.ones(2))  # nothing shielded: NumPy's error, untouched
    assert not isinstance(info.value, rb.MutationError)


@pytest.mark.parametrize("write", ["before the read", "then restored"])
def test_both_traced_a_write_through_one_before_reading_the_other_is_refused(write):
    a = A.copy()
    with pytest.raises(rb.MutationError):
        rb.grad(WRITES[write], argnums=(0, 1))(a, a)


def test_both_traced_a_write_after_the_read_is_differentiated():
    a = A.copy()
    gx, gy = rb.grad(_write_after, argnums=(0, 1))(a, a)
    np.testing.assert_allclose(gx, np.cos(A) * A + np.sin(A))
    np.testing.assert_array_equal(gy, 0.0)
    _, pullback = rb.vjp(_write_after, A.copy(), A.copy())
    np.testing.assert_allclose(pullback(1.0)[0], np.cos(A) * A + np.sin(A))


@pytest.mark.parametrize("seed", range(40))
def test_fuzz_random_programs_on_aliased_arguments_are_right_or_raise(seed):
    """Random chains of reads and plain writes over a traced argument and a plain alias; the
    gradient, when one is returned, equals central differences of the same program run on an
    independent copy (which has no alias to write through, so any write makes it differ)."""
    rng = np.random.default_rng(seed)
    steps = [rng.choice(["read", "write", "view-write"]) for _ in range(rng.integers(1, 5))]
    alias = list(ALIASES)[rng.integers(len(ALIASES))]
    writes = [int(rng.integers(3)) for _ in steps]

    def f(x, y):
        total = 0.0
        for step, i in zip(steps, writes):
            if step == "read":
                total = total + np.sum(np.tanh(x) * x[::-1])
            elif step == "write":
                y.flat[i] = 4.0 + i
            else:
                v = y.reshape(-1)[i:]
                v[0] = -3.0
        return total + np.sum(x ** 2)

    a = _traced_array()
    try:
        got = rb.grad(f)(a, ALIASES[alias](a))
    except rb.MutationError:
        assert any(step != "read" for step in steps)  # refused only when something was written
        return
    assert all(step == "read" for step in steps)
    expected = central_difference(lambda x: f(x, x.copy()), (_traced_array().copy(),))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)

"""Writes into a traced argument's memory through a name the tape never saw: a global, a closure
cell, a list kept from an earlier call, a view the caller made before the call (issue 22). NumPy
writes them, so every op recorded after one reads memory its history does not explain: the
gradient would be silently wrong. rulebridge compares each traced argument's bytes at the end of
the forward with what the program's own recorded writes explain, and refuses with MutationError
naming the argument. The program's own writes (through the box, a view of it, `out=`) and reads
of an alias (a constant, as in autograd and JAX) are differentiated as before."""

import numpy as np
import pytest

import rulebridge as rb
from tests.support.numerical import central_difference

X = np.array([0.3, 0.7, -0.4])
GLOBALS: dict = {}


def _setitem(a):
    a[-1] = 5.0


def _inplace(a):
    a *= 3.0


def _out(a):
    np.multiply(a, 2.0, out=a)


def _fill(a):
    a.fill(1.0)


def _view_write(a):
    a[1:] += 1.0


WRITES = {"setitem": _setitem, "*=": _inplace, "out=": _out, "fill": _fill,
          "view +=": _view_write}

# How f reaches the caller's array without the tape: f(x) is called with x = `ALIASES[k](a)`'s
# array, and `write` is applied to the alias.
ALIASES = {
    "a global dict": lambda a: GLOBALS.__setitem__("a", a) or (lambda: GLOBALS["a"]),
    "a closure cell": lambda a: (lambda: a),
    "a view made before the call": lambda a: (lambda view=a[:]: view),
    "its base": lambda a: (lambda: a.base),  # `a` is a view of a larger array
}


def _program(where: str, alias, write):
    def f(x):
        if where == "before":
            write(alias())
        s = np.sum(np.sin(x) * x)
        if where == "after":
            write(alias())
        return s + np.sum(x ** 2)
    return f


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("alias", ALIASES)
def test_a_write_through_an_alias_the_tape_never_saw_is_refused(alias, write, where):
    base = np.concatenate([[9.0], X])
    a = base[1:]
    f = _program(where, ALIASES[alias](a), WRITES[write])
    with pytest.raises(rb.MutationError, match="argument 0"):
        rb.grad(f)(a)


def test_an_alias_kept_from_an_earlier_plain_call_is_refused():
    kept = []

    def f(x):
        if not kept:
            kept.append(x)  # the first, plain call keeps the caller's array
        else:
            kept[0][0] = 2.0 * float(np.sum(kept[0]))  # a write through it while tracing
        return np.sum(np.exp(x))

    a = X.copy()
    f(a)
    with pytest.raises(rb.MutationError, match="argument 0") as info:
        rb.grad(f)(a)
    assert "write through another name" in str(info.value)


def test_a_write_through_an_alias_is_refused_also_where_the_program_itself_writes():
    a = X.copy()

    def f(x):
        x[1] = 2.0 * x[2]  # the program's own write: recorded
        y = np.sin(x)
        a[2] = 4.0  # the same memory through the caller's name: not recorded
        return np.sum(y * x)

    with pytest.raises(rb.MutationError, match="argument 0"):
        rb.grad(f)(a)


def test_a_write_through_an_alias_into_a_container_leaf_names_its_path():
    p = {"w": X.copy(), "b": np.array([0.5])}
    w = p["w"]

    def f(q):
        s = np.sum(q["w"] ** 2) + q["b"][0]
        w[0] = 1.0
        return s

    with pytest.raises(rb.MutationError, match=r"argument 0 ?\['w'\]"):
        rb.grad(f)(p)


def test_vjp_refuses_a_write_through_an_alias_during_the_forward():
    a = X.copy()

    def f(x):
        y = np.exp(x)
        a[0] = 0.0
        return y

    with pytest.raises(rb.MutationError, match="argument 0"):
        rb.vjp(f, a)


def test_the_programs_own_writes_into_its_argument_still_work():
    a = X.copy()

    def f(x):
        x[0] = 2.0 * x[1]
        x[1:] *= 3.0
        np.multiply(x, x, out=x)
        return np.sum(np.sin(x))

    g = rb.grad(f)(a.copy())
    np.testing.assert_allclose(g, central_difference(f, (a,)), rtol=1e-6, atol=1e-8)


def test_reading_an_alias_of_the_argument_treats_it_as_a_constant():
    """As autograd and JAX do: the derivative of f with the global held fixed."""
    a = X.copy()

    def f(x):
        return np.sum(np.sin(x) * a)

    g = rb.grad(f)(a)
    np.testing.assert_allclose(g, np.cos(X) * X, rtol=1e-12)
    np.testing.assert_array_equal(a, X)


def test_an_alias_written_and_restored_to_the_same_bytes_is_not_refused():
    """What the check cannot see it need not: the bytes every op read are the entry's."""
    a = X.copy()

    def f(x):
        s = np.sum(np.sin(x))
        old = a[0]
        a[0] = 7.0
        a[0] = old
        return s

    np.testing.assert_allclose(rb.grad(f)(a), np.cos(X), rtol=1e-12)


def test_an_alias_write_over_the_programs_own_write_is_refused():
    """Undoing the program's write would restore that position and hide the alias's write: each
    recorded write into the argument checks that it still finds what it left."""
    a = X.copy()

    def f(x):
        x[0] = 2.0 * x[1]  # recorded: x'[0] = 2 x1
        a[0] *= 1.5  # the memory now holds 3 x1, which no recorded op explains
        return np.sum(x ** 2)

    with pytest.raises(rb.MutationError, match="argument 0"):
        rb.grad(f)(a)

"""Fuzzed writes into a traced argument through a name the tape never saw (issue 22): a global,
a closure cell, a view made before the call, the base of a view passed in. Drawn with
hypothesis: how the alias is reached, how it is written (`a[i] = v`, `*=`, `out=`, `fill`, a
slice's `+=`), where among the reads, whether the program also writes through its argument,
and whether the write changes the bytes at all (the same values written back).

A write that changes the argument's bytes must raise MutationError naming the argument; one
that writes the same bytes must give the gradient of the program without it (central
differences of NumPy's own program on fresh copies). Never a wrong number.
"""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import rulebridge as rb
from tests.support.numerical import central_difference

TOLERANCE = 1e-6
GLOBALS: dict = {}


class Mismatch(AssertionError):
    """A silently wrong gradient, or a refusal where nothing changed."""


# Each write, given whether it writes the bytes already there (`same`) or changes them.
WRITES = {
    "setitem": lambda a, i, same: a.__setitem__(i, a[i].copy() if same else a[i] + 0.5),
    "*=": lambda a, i, same: a.__imul__(1.0 if same else 1.5),  # x * 1.0 keeps x's bytes
    "out=": lambda a, i, same: np.multiply(a, 1.0 if same else -1.0, out=a),
    "fill": lambda a, i, same: a.__setitem__(Ellipsis, a.copy()) if same else a.fill(7.0),
    "slice": lambda a, i, same: a[i:].__isub__(0.0) if same else a[i:].__iadd__(0.25),
}
ALIASES = ("global", "closure", "view before the call", "base")
WHEN = ("before", "between", "after")


def program(alias: str, write: str, when: str, own: bool, same: bool, i: int, a: np.ndarray,
            with_write: bool = True):
    """f(x), with x the caller's array `a` (a view of a larger array for "base")."""
    if alias == "global":
        GLOBALS["a"] = a
        reach = lambda: GLOBALS["a"]  # noqa: E731
    elif alias == "closure":
        reach = lambda: a  # noqa: E731
    elif alias == "view before the call":
        view = a[:]
        reach = lambda: view  # noqa: E731
    else:
        reach = lambda: a.base[1:]  # noqa: E731 (the same memory, through the base)
    do = WRITES[write]

    def f(x):
        if with_write and when == "before":
            do(reach(), i, same)
        s = np.sum(np.sin(x) * x)
        if own:
            x[i] = 2.0 * x[(i + 1) % x.size]
        if with_write and when == "between":
            do(reach(), i, same)
        s = s + np.sum(np.tanh(x) ** 2)
        if with_write and when == "after":
            do(reach(), i, same)
        return s

    return f


@st.composite
def drawn(draw):
    return (draw(st.sampled_from(ALIASES)), draw(st.sampled_from(sorted(WRITES))),
            draw(st.sampled_from(WHEN)), draw(st.booleans()), draw(st.booleans()),
            draw(st.integers(0, 3)),
            draw(st.lists(st.floats(-1.5, 1.5), min_size=4, max_size=4, unique=True)))


def outcome(case) -> str:
    alias, write, when, own, same, i, values = case
    base = np.concatenate([[9.0], values])
    a = base[1:]
    entry = a.copy()
    f = program(alias, write, when, own, same, i, a)
    changes = not same
    try:
        g = rb.grad(f)(a)
    except rb.MutationError as exc:
        if changes and "argument 0" in str(exc):
            return "refused"
        raise Mismatch(f"{case}: refused, though the write changed nothing: {exc}") from None
    if changes:
        raise Mismatch(f"{case}: a write through an alias changed the argument, and the "
                       f"gradient {g} was returned")

    def plain(x):
        return program(alias, write, when, own, same, i, x, with_write=False)(x)

    expected = central_difference(plain, (entry,))
    if not np.allclose(g, expected, rtol=TOLERANCE, atol=1e-6):
        raise Mismatch(f"{case}: gradient {g}, central differences {expected}")
    return "pass"


def run(n: int) -> collections.Counter:
    tally: collections.Counter = collections.Counter()

    @settings(max_examples=n, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(drawn())
    def aliases(case):
        tally[f"aliases:{outcome(case)}"] += 1

    aliases()
    return tally

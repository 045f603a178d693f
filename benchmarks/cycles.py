"""Peak memory of programs that make cyclic garbage holding large arrays in a loop, against
plain NumPy's in the same run (issue 22, section 1: within 2x).

Each program runs ITERATIONS times a loop body that makes a reference cycle (an object that
refers to itself, or a closure that refers to itself) holding an array of N float64 (800 KB),
and reads a little of it into the traced result. Plain NumPy frees the cycles when Python's
cyclic collector runs; rulebridge must not keep them (or the arrays in them) alive for the
sweep. The peak is tracemalloc's (NumPy reports its buffers to it), over one call after a
warm-up, for `f(x)` and for `rulebridge.grad(f)(x)`:

    python -m benchmarks.cycles                 # every program
    python -m benchmarks.cycles objects traced  # some

Programs within 2x: `objects` (a plain temporary in a self-referencing object, a slice of it
read by a traced op), `closures` (a closure cycle holding a followed buffer's product, one
element read), `scalars` (only a plain reduction of the temporary read), `views` (a
reduction of a slice of a traced temporary: the slice op's parent is kept by weak reference,
the reduction's slice as a copy of its own, autograd's composite `outer` keeps no output, and
one copy of `C[: N // 3]` serves every iteration) and `written` (a followed buffer written with
a traced value every iteration: the ops before each write are shed at the memory they read, the
write's record holds a buffer that owns its memory weakly, the alias log forgets a freed owner,
and the cotangent buffers the writes hand on are held weakly in the sweep). Printed beside them,
not within 2x, with what holds the memory (`HELD`): `traced` (a traced temporary
`s * np.ones(N)` in a cycle: the pullback for `s` is `sum(g * ones)`, which reads all N
elements, so the factor `ones` of every iteration is kept for the sweep: 2000 x 800 KB). The
same program under autograd's and JAX's own reverse modes is measured beside it
(benchmarks/cycles_sources.py; docs/performance.md has the figures): both keep that factor too,
and autograd's `n.data[0]` VJP keeps the 800 KB product as well (its closure reads `vspace(A)`
at the sweep), about twice rulebridge's peak. JAX's buffers are not tracemalloc's, so its peak
is resident memory's, each in a process of its own, beside plain NumPy's and rulebridge's
measured the same way.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc

import numpy as np

import rulebridge as rb

N = 100_000  # elements of each temporary: 800 KB, above the tape's LARGE_BYTES
ITERATIONS = 2000
X = np.array([0.1, 0.2, 0.3])
C = np.linspace(0.0, 1.0, N)  # a closure constant


class Node:
    """An object in a reference cycle with itself, holding `data`."""

    def __init__(self, data):
        self.data = data
        self.me = self


def objects(x):
    s = 0.0
    for i in range(ITERATIONS):
        n = Node(np.exp(C * (i / ITERATIONS)))  # a plain temporary
        s = s + np.sum(x * n.data[:3])
    return s


def _closure(i):
    big = np.ones(N) * i  # a followed buffer, times a constant

    def again():
        return again, big  # again -> its cell -> again: a cycle holding big

    return again


def closures(x):
    s = 0.0
    for i in range(ITERATIONS):
        g = _closure(i)
        s = s + np.sum(x * g()[1][0])
    return s


def traced_in(xp, iterations: int | None = None):
    """`traced`, written with `xp` (numpy, autograd.numpy or jax.numpy: the sources' own
    reverse modes measure it so, benchmarks/cycles_sources.py)."""
    def traced(x):
        s = 0.0
        for _ in range(ITERATIONS if iterations is None else iterations):
            n = Node(xp.sum(x) * xp.ones(N))  # depends on x
            s = s + n.data[0]
        return s

    return traced


traced = traced_in(np)


def scalars(x):
    s = 0.0
    for i in range(ITERATIONS):
        n = Node(np.exp(C * (i / ITERATIONS)))
        s = s + np.sum(x * np.sum(n.data))
    return s


def views(x):
    s = 0.0
    for _ in range(ITERATIONS):
        n = Node(np.outer(x, C[: N // 3]))
        s = s + np.sum(n.data[:, :2])
    return s


def written(x):
    s = 0.0
    for _ in range(ITERATIONS):
        buffer = np.zeros(N)
        buffer[:3] = x
        n = Node(buffer)
        s = s + np.sum(n.data[:3] * 2.0)
    return s


PROGRAMS = {f.__name__: f for f in (objects, closures, traced, scalars, views, written)}
WITHIN_2X = ("objects", "closures", "scalars", "views", "written")
HELD = {  # what keeps each iteration's 800 KB alive until the sweep, where it is kept
    "traced": "needed: the product's pullback for s reads the whole factor (sum(g * ones)); "
              "autograd and JAX keep it too",
}


def peak_bytes(call, *args) -> int:
    """tracemalloc's peak while `call(*args)` runs, above what was allocated before."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        call(*args)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def ratio(name: str) -> tuple[int, int]:
    """(plain NumPy's peak, rulebridge's) for the program `name`."""
    f = PROGRAMS[name]
    rb.grad(f)(X)  # warm-up: imports, rules, first-use checks
    return peak_bytes(f, X), peak_bytes(rb.grad(f), X)


def main(names: list[str]) -> None:
    print(f"peak memory, {ITERATIONS} cycles of {N * 8 // 1000} KB each (tracemalloc):")
    for name in names or list(PROGRAMS):
        plain, ours = ratio(name)
        print(f"  {name:9} plain NumPy {plain / 1e6:7.1f} MB   rulebridge.grad {ours / 1e6:7.1f} MB"
              f"   {ours / plain:5.2f}x"
              f"{'' if name in WITHIN_2X else '  (not within 2x: ' + HELD[name] + ')'}")
        if name == "traced":  # the same program under the sources' own reverse modes
            from benchmarks.cycles_sources import report

            print(report(plain))


if __name__ == "__main__":
    main(sys.argv[1:])

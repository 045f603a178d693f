"""What following plain buffers costs, counted by valgrind (see rulebridge/writes/follow.py).

While a trace runs, `np.zeros`, `np.array` and friends in the numpy module are wrappers that
follow the buffers the differentiated code allocates; they are installed when the first trace
starts and removed when the last ends. Three figures:

- per gradient: the installing and removing, on a small program that allocates nothing
  (following on minus following off, per `rb.grad` call);
- per followed allocation: a program that fills `np.zeros(n)` in a loop, against the same
  program building its result with `np.stack` (what a user would write without following);
- outside a trace: `np.zeros(5)` costs the same before, between and after traces, because
  nothing is left installed (the wrapper is NumPy's own function again; the test suite checks
  this too, tests/writes/test_plain_buffers.py).

    python -m benchmarks.follow
"""

from __future__ import annotations

import argparse
import shutil
import sys

import numpy as np

from benchmarks.instructions import count_instructions
from benchmarks.timing import table

CALLS = 200  # gradients (or plain calls) counted, after one warm-up
X = np.linspace(0.1, 1.0, 8)


def small(x):
    return np.sum(np.sin(x) * x)


def filled(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out)


def stacked(x):
    return np.sum(np.stack([np.sin(x[i]) * x[i] for i in range(len(x))]))


PROGRAMS = {"small": small, "filled": filled, "stacked": stacked}


def run_child(program: str, follow: bool, calls: int) -> None:
    import rulebridge as rb

    rb.follow_plain_buffers(follow)
    if program == "plain-zeros":
        rb.grad(small, source="autograd")(X)  # a trace (that installed the wrappers), now ended
        for _ in range(1 + calls):
            np.zeros(5)
        return
    g = rb.grad(PROGRAMS[program], source="autograd")
    for _ in range(1 + calls):
        g(X)


def per_call(program: str, follow: bool) -> float:
    def count(calls: int) -> int:
        return count_instructions(["benchmarks.follow", "--child", program,
                                   "--follow", str(int(follow)), "--calls", str(calls)])

    return (count(CALLS) - count(0)) / CALLS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--follow", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, default=CALLS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, bool(args.follow), args.calls)
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH (Debian: apt-get install valgrind)")
    on, off = per_call("small", True), per_call("small", False)
    filled_on, stacked_on = per_call("filled", True), per_call("stacked", True)
    zeros_on, zeros_off = per_call("plain-zeros", True), per_call("plain-zeros", False)
    rows = [
        ["a gradient of a 3-op program, following on / off", f"{on:,.0f} / {off:,.0f}",
         f"{on - off:+,.0f} per gradient ({(on - off) / off:+.1%})"],
        [f"np.zeros({len(X)}) filled in a loop / the same by np.stack", f"{filled_on:,.0f} / "
         f"{stacked_on:,.0f}", f"{(filled_on - stacked_on) / len(X):+,.0f} per item"],
        ["np.zeros(5) outside any trace, after traces with following on / off",
         f"{zeros_on:,.0f} / {zeros_off:,.0f}", f"{zeros_on - zeros_off:+,.0f}"],
    ]
    print(table(["case", "instructions per call", "difference"], rows))


if __name__ == "__main__":
    main()

"""Instructions per op of the sin/tanh chain's gradient, counted by valgrind: a figure this
machine's noise cannot move, to read beside overhead.py's timings.

Each contestant runs in two processes under `valgrind --tool=callgrind`, both building the same
N-op chain and running one warm-up gradient; one of them then runs GRADIENTS more. The difference
of the two totals, divided by N and by GRADIENTS, is what one op of one gradient costs (imports,
rule lookups, start-up and any set-up cancel out). "autograd rules alone" is
benchmarks/rules_floor.py: NumPy's forwards and autograd's VJPs with no engine around them.
Needs valgrind on PATH.

    python -m benchmarks.instructions              # N = 1000
    python -m benchmarks.instructions --n 2000 --sources autograd jax
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

from benchmarks.overhead import X, chain, hand_written
from benchmarks.rules_floor import RULES_ALONE
from benchmarks.timing import table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the child imports benchmarks.*
GRADIENTS = 3  # timed gradients, after one warm-up gradient


def run_contestant(name: str, n: int, gradients: int) -> None:
    """The body a valgrind child runs: one warm-up gradient, then `gradients` more."""
    if name == RULES_ALONE:
        from benchmarks.rules_floor import RulesFloor

        gradient = RulesFloor(chain(np, n), X).run
    elif name == "hand-written":
        gradient = lambda: hand_written(X, n)  # noqa: E731
    elif name == "autograd":
        import autograd
        import autograd.numpy as anp

        g = autograd.grad(chain(anp, n))
        gradient = lambda: g(X)  # noqa: E731
    else:
        import rulebridge as rb

        g = rb.grad(chain(np, n), source=name.removeprefix("rulebridge[").removesuffix("]"))
        gradient = lambda: g(X)  # noqa: E731
    for _ in range(1 + gradients):
        gradient()


def instructions(name: str, n: int, gradients: int) -> int:
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-m", "benchmarks.instructions", "--child", name, "--n", str(n), "--gradients",
         str(gradients)],
        capture_output=True, text=True, check=True, cwd=ROOT,
        # The same dict layouts in every child, and no idle BLAS workers spinning (they count).
        env={**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1",
             "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    match = re.search(r"Collected : (\d+)", result.stderr)
    if match is None:
        raise RuntimeError(f"valgrind printed no instruction count for {name}:\n{result.stderr}")
    return int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--sources", nargs="+", default=["autograd"])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--gradients", type=int, default=GRADIENTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_contestant(args.child, args.n, args.gradients)
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH (Debian: apt-get install valgrind)")
    names = (["hand-written", "autograd", RULES_ALONE]
             + [f"rulebridge[{s}]" for s in args.sources])
    per_op = {}
    for name in names:
        extra = instructions(name, args.n, GRADIENTS) - instructions(name, args.n, 0)
        per_op[name] = extra / args.n / GRADIENTS
        print(f"  {name}: {per_op[name]:,.0f} instructions per op", flush=True)
    header = ["contestant", "instructions per op", "/ hand-written", "/ autograd"]
    rows = [[name, f"{value:,.0f}", f"{value / per_op['hand-written']:.2f}x",
             f"{value / per_op['autograd']:.2f}x"] for name, value in per_op.items()]
    print(table(header, rows))


if __name__ == "__main__":
    main()

"""Instructions per op of the sin/tanh chain's gradient, counted by valgrind: a figure this
machine's noise cannot move, to read beside overhead.py's timings.

The "keywords" rows run a chain of alternating `sin(x)` and `cumsum(x, axis=0)`: every other op
is a call with a keyword argument, whose key (rulebridge/rules/keys.py) the engine normalises,
so what the keyword path costs per op is measured, not guessed.

Each contestant runs in two processes under `valgrind --tool=callgrind`, both building the same
N-op chain and running one warm-up gradient; one of them then runs GRADIENTS more. The difference
of the two totals, divided by N and by GRADIENTS, is what one op of one gradient costs (imports,
rule lookups, start-up and any set-up cancel out). "autograd rules alone" is
benchmarks/rules_floor.py: NumPy's forwards and autograd's VJPs with no engine around them.
Needs valgrind on PATH.

    python -m benchmarks.instructions              # N = 1000
    python -m benchmarks.instructions --n 2000 --sources autograd jax

"rulebridge.jit[autograd]" is `rulebridge.jit(rulebridge.grad(f, source="autograd"))` after
`JIT_WARM` calls (the trace, the trace that checks the first replay, and warm replays): a replay
of the recorded program (rulebridge/jit).
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


KEYWORDS = ", keywords"  # a contestant's name ending in this runs `keyword_chain`
JIT = "rulebridge.jit["  # rulebridge.jit(rulebridge.grad(f, source=...)), replayed
# Calls of a jitted gradient before the counted ones: the trace, the trace that checks the first
# replay, then replays until CPython has specialised the program's straight-line bytecode (an
# instruction specialises after it has run a few dozen times; a replay runs each once).
JIT_WARM = 40


def keyword_chain(xp, n: int):
    """sum(... cumsum(sin(x), axis=0) ...) with n ops, every other one a keyword call."""
    sin, cumsum = xp.sin, xp.cumsum

    def f(x):
        for i in range(n):
            x = sin(x) if i % 2 == 0 else cumsum(x, axis=0)
        return xp.sum(x)

    return f


def run_contestant(name: str, n: int, gradients: int) -> None:
    """The body a valgrind child runs: one warm-up gradient, then `gradients` more."""
    program = chain
    if name.endswith(KEYWORDS):
        name, program = name.removesuffix(KEYWORDS), keyword_chain
    if name == RULES_ALONE:
        from benchmarks.rules_floor import RulesFloor

        gradient = RulesFloor(program(np, n), X).run
    elif name == "hand-written":
        gradient = lambda: hand_written(X, n)  # noqa: E731
    elif name == "autograd":
        import autograd
        import autograd.numpy as anp

        g = autograd.grad(program(anp, n))
        gradient = lambda: g(X)  # noqa: E731
    elif name.startswith(JIT):  # recorded by its first call, checked by its second
        import rulebridge as rb

        g = rb.jit(rb.grad(program(np, n), source=name.removeprefix(JIT).removesuffix("]")))
        for _ in range(JIT_WARM):
            g(X)
        gradient = lambda: g(X)  # noqa: E731
    else:
        import rulebridge as rb

        g = rb.grad(program(np, n), source=name.removeprefix("rulebridge[").removesuffix("]"))
        gradient = lambda: g(X)  # noqa: E731
    for _ in range(1 + gradients):
        gradient()


def instructions(name: str, n: int, gradients: int) -> int:
    return count_instructions(["benchmarks.instructions", "--child", name, "--n", str(n),
                               "--gradients", str(gradients)])


def count_instructions(module_and_args: list[str]) -> int:
    """Instructions valgrind counts for `python -m MODULE ARGS...`, run from the repository."""
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         "-m", *module_and_args],
        capture_output=True, text=True, check=True, cwd=ROOT,
        # The same dict layouts in every child, and no idle BLAS workers spinning (they count).
        env={**os.environ, "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1",
             "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    match = re.search(r"Collected : (\d+)", result.stderr)
    if match is None:
        raise RuntimeError(f"valgrind printed no instruction count for {module_and_args}:\n"
                           f"{result.stderr}")
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
             + [f"rulebridge[{s}]" for s in args.sources]
             + [f"{JIT}{s}]" for s in args.sources]
             + ["autograd" + KEYWORDS, RULES_ALONE + KEYWORDS]
             + [f"rulebridge[{s}]{KEYWORDS}" for s in args.sources]
             + [f"{JIT}{s}]{KEYWORDS}" for s in args.sources])
    per_op = {}
    for name in names:
        extra = instructions(name, args.n, GRADIENTS) - instructions(name, args.n, 0)
        per_op[name] = extra / args.n / GRADIENTS
        print(f"  {name}: {per_op[name]:,.0f} instructions per op", flush=True)
    header = ["contestant", "instructions per op", "/ hand-written", "/ autograd"]
    rows = []
    for name, value in per_op.items():
        keywords = name.endswith(KEYWORDS)  # no hand-written floor for that chain
        rows.append([name, f"{value:,.0f}",
                     "-" if keywords else f"{value / per_op['hand-written']:.2f}x",
                     f"{value / per_op['autograd' + KEYWORDS * keywords]:.2f}x"])
    print(table(header, rows))


if __name__ == "__main__":
    main()

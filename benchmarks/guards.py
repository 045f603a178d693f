"""What one guard of a `rulebridge.jit` replay costs, counted by valgrind.

Each program is the 1,000-op sin chain on 10 elements, jitted and replayed; the guarded ones
also take one decision after every op, of one kind:

- "shape": the program reads `y.shape` (a box's answer, checked by asking the replayed value);
- "bool": `if y[0] > -9.0:` on a traced value (`x > c` is an op whose answer carries no
  gradient: the replay runs it again and compares its answer, then the `if` reads it);
- "len": `len(y)`.

Per guard = (instructions of the guarded program's replay - the plain chain's) / decisions.
The decision's own op (the comparison) is part of its cost: the eager program runs it too.

    python -m benchmarks.guards            # needs valgrind on PATH
"""

from __future__ import annotations

import argparse
import shutil
import sys

import numpy as np

from benchmarks.instructions import count_instructions
from benchmarks.timing import table

KINDS = ("none", "shape", "bool", "len")
N = 1000
REPLAYS = 3
WARM = 40  # as benchmarks.instructions: replays until CPython has specialised the program


def program(kind: str, n: int):
    def f(x):
        y = x
        for _ in range(n):
            y = np.sin(y)
            if kind == "shape":
                assert y.shape == (10,)
            elif kind == "bool":
                if y[0] > -9.0:
                    y = y + 0.0
            elif kind == "len":
                assert len(y) == 10
        return y

    return f


def run_child(kind: str, n: int, replays: int) -> None:
    import rulebridge as rb

    jitted = rb.jit(program(kind, n))
    x = np.linspace(0.1, 1.0, 10)
    for _ in range(WARM + replays):
        jitted(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--replays", type=int, default=REPLAYS, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=N)
    args = parser.parse_args()
    if args.child:
        run_child(args.child, args.n, args.replays)
        return
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not on PATH (Debian: apt-get install valgrind)")
    per_replay = {}
    for kind in KINDS:
        counted = [count_instructions(["benchmarks.guards", "--child", kind, "--n", str(args.n),
                                       "--replays", str(r)]) for r in (REPLAYS, 0)]
        per_replay[kind] = (counted[0] - counted[1]) / REPLAYS
    rows = [["none", f"{per_replay['none'] / args.n:,.0f}", "-"]]
    for kind in KINDS[1:]:
        extra = (per_replay[kind] - per_replay["none"]) / args.n
        rows.append([kind, f"{per_replay[kind] / args.n:,.0f}", f"{extra:,.0f}"])
    print(table(["decision after each op", "instructions per op", "per guard"], rows))


if __name__ == "__main__":
    main()

"""The figures of the README's "Reliability" section, each measured by running it:

    python -m tools.reliability                # everything (several minutes)
    python -m tools.reliability --programs 200 # a shorter fuzz run

Fuzzing reuses tests/fuzz (the same derandomized programs as the slow test), threads reuse
tests/engine/test_threads.py's programs, memory reuses tests/engine/test_memory.py's measurement, and the
error classes come from tools/errors_doc.py.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import rulebridge as rb

ROOT = Path(__file__).resolve().parent.parent


def fuzzing(programs: int, checked: int) -> list[str]:
    from tests.fuzz.catalog import STEPS
    from tests.fuzz.runner import fuzz

    tally = fuzz(programs)
    debug = fuzz(checked, checked=True)
    errors = {k: v for k, v in tally.outcomes.items() if k.startswith("error:")}
    findings = (ROOT / "tests" / "fuzz" / "FINDINGS.md").read_text()
    fixed = len(re.findall(r"^\| \d+ .*\(fixed\) \|$", findings, re.MULTILINE))
    found = len(re.findall(r"^\| \d+ ", findings, re.MULTILINE))
    writes = sum(v for k, v in tally.ops.items() if k.startswith("write."))
    return [
        f"programs fuzzed: {tally.programs} ({tally.dtypes['float64']} float64, "
        f"{tally.dtypes['float32']} float32) in {tally.seconds:.0f} s, "
        f"{sum(tally.ops.values())} statements from {len(set(tally.ops))} of {len(STEPS)} "
        f"catalog entries ({writes} in-place writes)",
        f"  gradient equal to finite differences: {tally.outcomes['pass']}; "
        f"clear rulebridge errors: {sum(errors.values())} {dict(sorted(errors.items()))}; "
        f"inconclusive (finite differences near a kink): {tally.outcomes['inconclusive']}; "
        "silently wrong: 0, changed caller arrays: 0 (any would have stopped the run)",
        f"  in debug mode (every rule boundary checked): {debug.programs} programs, "
        f"{sum(v for k, v in debug.outcomes.items() if 'RuleContract' in k)} contract violations",
        f"  real defects the fuzzer found: {found}, fixed: {fixed} (tests/fuzz/FINDINGS.md)",
    ]


def threads(rounds: int = 3) -> list[str]:
    from tests.engine.test_threads import PROGRAMS, THREADS

    rng = np.random.default_rng(0)
    jobs = [(f, rng.normal(size=(4, 4))) for f in PROGRAMS for _ in range(6)]
    serial = [rb.value_and_grad(f)(x) for f, x in jobs]

    def run(worker):
        return [(i, rb.value_and_grad(jobs[i][0])(jobs[i][1]))
                for i in list(range(worker % 2, len(jobs), 2)) * rounds]

    with ThreadPoolExecutor(THREADS) as pool:
        results = [r for per in pool.map(run, range(THREADS)) for r in per]
    equal = sum(value == serial[i][0] and np.array_equal(g, serial[i][1])
                for i, (value, g) in results)
    return [f"threads: {THREADS} threads, {len(results)} concurrent gradient calls, "
            f"{equal} bit-identical to the serial results"]


def memory(calls: int) -> list[str]:
    from tests.engine.test_memory import _growth, _model

    growth = _growth(_model, calls)
    return [f"memory: {calls} gradient calls of a model with writes and linear algebra: heap "
            f"growth {growth / 1024:.1f} KiB (tracemalloc, after warm-up)"]


def error_types() -> list[str]:
    from tools import errors_doc

    classes = [c.__name__ for c in errors_doc.library_classes()]
    return [f"error and warning types documented with a generated example: "
            f"{len(errors_doc.EXAMPLES)} ({len(classes)} library classes: {', '.join(classes)}; "
            "plus TypeError/ValueError for API misuse), docs/errors.md"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--debug-programs", type=int, default=400)
    parser.add_argument("--calls", type=int, default=10000)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    lines = (fuzzing(args.programs, args.debug_programs) + threads() + memory(args.calls)
             + error_types())
    print("\n".join(lines))
    print(f"(measured in {time.perf_counter() - start:.0f} s; numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

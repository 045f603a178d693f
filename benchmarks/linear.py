"""Cost is linear in the length of the tape.

1. Differentiating a 40k-op chain costs at most 2.5x a 20k-op chain.
2. Replacing every op of a 100k-op tape by a two-output op (`Tape.replace`, in its own slot, no
   renumbering) costs linear time, and so does the reverse sweep over the replaced tape. The
   replacing loop runs without full collections of Python's cyclic collector, as the engine's own
   passes over a tape do (rulebridge/engine/collector.py): with them, the collections the loop's
   allocations start walk the whole live tape, and that cost grows faster than the tape through
   the cache (it is printed too, for information).

    python -m benchmarks.linear [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import rulebridge as rb
from rulebridge.engine.collector import collector_paused
from rulebridge.engine.sweep import backward

from benchmarks.timing import add_clock_option, median_seconds, now, use_clock

X = np.linspace(0.1, 1.0, 10)


def chain(n: int):
    def f(x):
        for i in range(n):
            x = np.sin(x) if i % 2 == 0 else np.tanh(x)
        return np.sum(x)

    return f


def two_output(rule: rb.Rule) -> rb.Rule:
    """`rule` with its output returned twice, `(y, y)`: a two-output op with the same meaning, so
    a tape whose every op was replaced by one still gives the same gradient and replay."""

    def forward(args, kwargs):
        out, residuals = rule.forward(args, kwargs)
        return (out, out), residuals

    def pullback(residuals, g, argnums):
        first, second = g
        total = first if second is None else second if first is None else first + second
        return rule.pullback(residuals, total, argnums)

    return rb.Rule(rule.function, rule.signature, forward, pullback, source=rule.source)


def replace_all(tape: rb.Tape) -> None:
    """Replace op i, `%k = f(%j)`, by `%k, %new = f2(%j)` in its own slot: it keeps its first
    output variable, so no other op changes."""
    doubled: dict = {}
    for i, op in enumerate(tape.ops):
        rule = doubled.get(id(op.rule))
        if rule is None:
            rule = doubled[id(op.rule)] = two_output(op.rule)
        outputs = (op.outputs[0], tape.new_var())
        tape.replace(i, rb.Op(rule, op.args, op.kwargs, op.inputs, outputs, tuple, op.residuals))


def time_replacement(n: int, repeats: int) -> tuple[float, float, float]:
    """Median seconds to replace every op of an n-op tape (collector paused, then running), and
    to sweep the replaced tape."""
    paused_times, running_times, sweep_times = [], [], []
    for _ in range(repeats):
        _, tape = rb.trace(chain(n), X)
        start = now()
        with collector_paused:
            replace_all(tape)
        paused_times.append(now() - start)
        start = now()
        cts = backward(tape, {tape.outputs: np.float64(1.0)})
        sweep_times.append(now() - start)
        assert tape.inputs[0] in cts
        _, tape = rb.trace(chain(n), X)
        start = now()
        replace_all(tape)
        running_times.append(now() - start)
    return tuple(float(np.median(t)) for t in (paused_times, sweep_times, running_times))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    add_clock_option(parser)
    args = parser.parse_args(argv)
    use_clock(args.clock)

    print("1. Gradient of an n-op sin/tanh chain (median seconds):")
    times = {}
    for n in (20_000, 40_000):
        g = rb.grad(chain(n))
        times[n] = median_seconds(lambda: g(X), args.repeats)
        print(f"   n={n:,}: {times[n]:.3f} s ({times[n] / n * 1e6:.2f} us/op)")
    ratio = times[40_000] / times[20_000]
    print(f"   40k / 20k = {ratio:.2f}x  (target <= 2.5x): {'ok' if ratio <= 2.5 else 'MISSED'}")

    print("2. Replace every op by a two-output op, then sweep the replaced tape (median seconds):")
    results = {}
    for n in (50_000, 100_000):
        results[n] = time_replacement(n, args.repeats)
        replace_s, sweep_s, running_s = results[n]
        print(f"   n={n:,}: replace {replace_s:.3f} s ({replace_s / n * 1e6:.2f} us/op), "
              f"sweep {sweep_s:.3f} s ({sweep_s / n * 1e6:.2f} us/op); replace with the "
              f"collector running {running_s:.3f} s ({running_s / n * 1e6:.2f} us/op)")
    for k, what in enumerate(("replace", "sweep")):
        ratio = results[100_000][k] / results[50_000][k]
        print(f"   {what}: 100k / 50k = {ratio:.2f}x  (linear: 2x; target <= 2.5x): "
              f"{'ok' if ratio <= 2.5 else 'MISSED'}")
    ratio = results[100_000][2] / results[50_000][2]
    print(f"   (replace with the collector running: 100k / 50k = {ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

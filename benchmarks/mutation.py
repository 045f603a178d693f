"""The cost of a recorded write is proportional to what it writes, not to the array's size.

Each program writes K single elements of a length-N buffer allocated like the input (forward and
reverse sweep, `rulebridge.grad`), and the Mooncake loop `y[n] = sin(cos(exp(x[n])))` is timed
against autograd's functional equivalent (autograd cannot differentiate the write). Prints
medians and the ratios that matter:

- time(4K writes) / time(K writes), expected about 4 (linear in the number of writes);
- time per write at N = 400K / at N = 4K, expected about 1 (independent of the array's size);
  per-write times are differences, (time(4K) - time(K)) / 3K, so the one-off full-size work
  (allocating, summing, one copy of the cotangent) cancels out.

    python -m benchmarks.mutation
    python -m benchmarks.mutation --writes 250 --json mutation.json
"""

from __future__ import annotations

import argparse

import numpy as np

import rulebridge as rb

from benchmarks.timing import median_seconds, rulebridge_sources, table, write_json
from tests.test_mutation import mooncake_loop  # the program the tests check


def single_writes(k: int):
    """K element writes of one traced scalar into a buffer like x; the sum reads the buffer once,
    so everything beyond the first full-size copy in each direction scales with K only."""
    def f(x):
        buf = np.zeros_like(x)
        s = x[0] * 2.0
        for i in range(k):
            buf[i] = s
        return np.sum(buf)

    return f


def autograd_functional(x):
    import autograd.numpy as anp

    return anp.sum(anp.sin(anp.cos(anp.exp(x))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=1000, help="K, the smaller write count")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args()
    k = args.writes
    figures: dict = {}
    rows = []
    for source in rulebridge_sources():
        timings = {}
        small, big = 4 * k, 400 * k
        for n in (small, big):
            x = np.linspace(0.1, 1.0, n)
            for writes in (k, 4 * k):
                grad = rb.grad(single_writes(writes), source=source)
                timings[(n, writes)] = median_seconds(lambda: grad(x), args.repeats)
        linear = timings[(small, 4 * k)] / timings[(small, k)]
        size = (timings[(big, 4 * k)] - timings[(big, k)]) / (timings[(small, 4 * k)]
                                                              - timings[(small, k)])
        per_write = (timings[(small, 4 * k)] - timings[(small, k)]) / (3 * k) * 1e6
        rows.append([source, f"{per_write:.1f}", f"{linear:.2f}", f"{size:.2f}"])
        figures[source] = {"us_per_write": per_write, "ratio_4k_over_k": linear,
                           "per_write_big_over_small": size,
                           "seconds": {f"n={n},k={w}": t for (n, w), t in timings.items()}}
    print(f"K = {k} single-element writes (grad: forward + reverse), medians of {args.repeats}\n")
    print(table(["source", "us per write", "time(4K) / time(K)",
                 "us per write at N=400K / at N=4K"], rows))

    x = np.linspace(0.1, 1.0, 200)
    rows = []
    from autograd import grad as autograd_grad

    reference = median_seconds(lambda: autograd_grad(autograd_functional)(x), args.repeats)
    for source in rulebridge_sources():
        grad = rb.grad(mooncake_loop, source=source)
        seconds = median_seconds(lambda: grad(x), args.repeats)
        rows.append([source, f"{seconds * 1e3:.2f}", f"{seconds / reference:.0f}x"])
        figures.setdefault(source, {})["mooncake_loop_ms"] = seconds * 1e3
    figures["autograd_functional_ms"] = reference * 1e3
    print("\nMooncake's loop y[n] = sin(cos(exp(x[n]))), n < 200, then sum; against autograd's "
          f"vectorised sum(sin(cos(exp(x)))) ({reference * 1e3:.2f} ms), which cannot write\n")
    print(table(["source", "ms", "vs autograd vectorised"], rows))
    if args.json:
        write_json(args.json, figures)


if __name__ == "__main__":
    main()

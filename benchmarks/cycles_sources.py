"""benchmarks/cycles.py's `traced` program under autograd's and JAX's own reverse modes: what
each keeps alive for its sweep, measured rather than claimed.

The program is the same, spelled in each library's NumPy (`traced_in(xp)`): a loop making a
reference cycle that holds a traced 800 KB product `sum(x) * ones(N)`, of which one element is
read. autograd's peak is tracemalloc's, as for rulebridge and plain NumPy (autograd's arrays are
NumPy's, which report their buffers to tracemalloc). JAX's buffers are XLA's, which tracemalloc
does not see, so JAX is measured by peak resident memory instead: in a fresh process, the
kernel's high-water mark (VmHWM) reset after a warm-up of 3 iterations, above the resident
memory then, with glibc's mmap threshold fixed (`_FIXED_MMAP`). Plain NumPy and rulebridge are
measured the same way, each in a process of its own, and only figures of one method are
compared with each other. Where both methods apply (plain NumPy, rulebridge) they agree within
1%, which is why JAX's figure is taken as fair. jax.grad runs eagerly (no jit: the loop is
Python's, as in the other two), in float64 (x64 on), so each factor is 800 KB as in NumPy.
Linux only (/proc/self/status, /proc/self/clear_refs).

    python -m benchmarks.cycles traced          # prints these beside rulebridge's
    python -m benchmarks.cycles_sources         # these alone
"""

from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys

from benchmarks.cycles import ITERATIONS, X, peak_bytes, traced_in

WARM_ITERATIONS = 3  # a warm-up this short leaves the high-water mark where it was
# glibc raises its mmap threshold past a freed large buffer, and later buffers then come from
# the heap, whose freed pages may stay resident: the high-water mark then counts fragmentation
# as well as live memory (jax.grad's 1.88 GB with glibc's default, 1.64 GB with this; plain
# NumPy's and rulebridge's move by under 1%). A fixed threshold keeps every large buffer
# mmapped and returned on free, so resident memory follows live memory, as tracemalloc does.
_FIXED_MMAP = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(1 << 16)}


def autograd_peak() -> int:
    """tracemalloc's peak of `autograd.grad` of the program, after a warm-up."""
    import autograd
    import autograd.numpy as anp

    autograd.grad(traced_in(anp, WARM_ITERATIONS))(X)
    return peak_bytes(autograd.grad(traced_in(anp)), X)


def rss_peaks() -> dict[str, int]:
    """Peak resident bytes above the warmed-up process's, of plain NumPy's call, of
    rulebridge.grad's and of jax.grad's, each in a process of its own."""
    peaks = {}
    for who in ("numpy", "rulebridge", "jax"):
        out = subprocess.run([sys.executable, "-m", "benchmarks.cycles_sources", "--child", who],
                             capture_output=True, text=True, check=True, env=_FIXED_MMAP).stdout
        peaks[who] = json.loads(out.strip().splitlines()[-1])["peak"]
    return peaks


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def _child(who: str) -> None:
    if who == "rulebridge":
        import numpy as np

        import rulebridge as rb

        def run(iterations):
            return rb.grad(traced_in(np, iterations))(X)
    elif who == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        def run(iterations):
            return jax.grad(traced_in(jnp, iterations))(X)
    else:
        import numpy as np

        def run(iterations):
            return traced_in(np, iterations)(X)
    run(WARM_ITERATIONS)  # imports, compilation of each primitive
    gc.collect()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the high-water mark starts again from here
    before = _resident_bytes()
    run(ITERATIONS)
    print(json.dumps({"peak": _high_water_bytes() - before}))


def _high_water_bytes() -> int:
    """This process's peak resident memory (VmHWM). Not `resource.getrusage`'s ru_maxrss:
    Linux carries that over from the parent across fork and exec, so a child of a process that
    once held 1.9 GB reports at least 1.9 GB."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    raise RuntimeError("/proc/self/status has no VmHWM")


def report(plain_traced: int) -> str:
    """The figures as cycles.py prints them under the `traced` row, whose plain NumPy peak
    (tracemalloc's) is `plain_traced`."""
    rss = rss_peaks()
    plain = rss["numpy"]
    ours = autograd_peak()
    return (f"            autograd.grad {ours / 1e6:7.1f} MB (tracemalloc)   "
            f"{ours / plain_traced:5.2f}x\n"
            f"            peak RSS, a process each: plain NumPy {plain / 1e6:.1f} MB, "
            f"rulebridge.grad {rss['rulebridge'] / 1e6:.1f} MB "
            f"({rss['rulebridge'] / plain:.2f}x), jax.grad {rss['jax'] / 1e6:.1f} MB "
            f"({rss['jax'] / plain:.2f}x)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2])
    else:
        print(report(peak_bytes(traced_in(__import__("numpy")), X)))

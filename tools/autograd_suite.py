"""Run autograd's own examples and test suite with the drop-in swap (issue 25), and print pass and
fail counts with the failure classes.

    python -m tools.autograd_suite --sdist /tmp/ag/autograd-1.9.1.tar.gz
        [--sources none,autograd,jax] [--test-sources none] [--examples-only | --tests-only]
        [--timeout 30] [--iters 5] [--jobs 2] [--only NAME,...] [--keep DIR]
        [--mnist-stand-in]

autograd's tests and examples are not in site-packages; the sdist of the installed version has
them (`pip download autograd==<version> --no-binary :all: --no-deps -d /tmp/ag`). They are
copied to a temporary folder and their imports rewritten, line by line, by `rewrite` (the whole
rewrite; nothing else of the sources changes):

- `autograd.numpy` -> `numpy` (also `autograd.numpy.random`, `.linalg`, `.fft`);
- `autograd.scipy` -> `rulebridge.scipy`; `import autograd.scipy.stats.norm as norm` (autograd's
  module layout) -> `from rulebridge.scipy.stats import norm as norm` (SciPy's);
- `from autograd import grad, ...`, `from autograd.misc[.flatten] import flatten`,
  `from autograd.test_util import ...` and `from autograd.misc.optimizers import ...`: the names
  tools/autograd_swap.py gives (rulebridge's grad, value_and_grad, elementwise_grad, jacobian,
  hessian, hessian_vector_product, flatten and flatten_func; autograd.test_util's checks
  computed with rulebridge's vjp and jvp; autograd's optimizers with `num_iters` capped by
  --iters) come from it,
  copied beside them as `_rulebridge_swap.py`; every other name still comes from autograd
  (`make_vjp`, `deriv`, `autograd.extend`, `autograd.builtins`: autograd-only APIs).

matplotlib, where it is installed (requirements-dev.txt), is the real one with the non-interactive
Agg back end (`MPLBACKEND=Agg`: plots are drawn, never shown, and fluidsim reads its images with
`imread`); where it is not, a stub whose every attribute is a no-op stands in for it (plots are not
measured; `imread` raises). Each example runs in a subprocess of its own, in its folder, once per
source (`AG_SUITE_SOURCE`), with a timeout: an example still running then counts as "timed out",
not "failed". The tests run under pytest (with xdist, so a crashed worker is counted). Not part
of the default test run: it takes minutes. docs/autograd-compat.md records its figures.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
SWAPPED = {"grad", "value_and_grad", "elementwise_grad", "jacobian", "hessian",
           "hessian_vector_product", "flatten", "flatten_func", "check_grads", "combo_check",
           "scalar_close", "check_equivalent", "adam", "sgd", "rmsprop"}
HELPERS = {"__init__.py", "data.py", "data_mnist.py"}  # imported by examples, not examples

_STUB = '''"""A stand-in for matplotlib: every attribute and call is a no-op."""
class _Nothing:
    def __getattr__(self, name): return self
    def __call__(self, *args, **kwargs): return self
    def __iter__(self): return iter((self, self))
    def __getitem__(self, key): return self
    def __bool__(self): return False
_NOTHING = _Nothing()
def imread(*args, **kwargs):
    raise ModuleNotFoundError("matplotlib is not installed: imread reads this example's data")
def __getattr__(name): return _NOTHING
'''


def rewrite(source: str) -> str:
    """The drop-in swap of one file's imports (see the module's docstring)."""
    source = _join_parenthesised_imports(source)
    out = []
    for line in source.splitlines():
        out.append(_rewrite_line(line))
    return "\n".join(out) + "\n"


def _join_parenthesised_imports(source: str) -> str:
    return re.sub(r"from (autograd[\w.]*) import \(([^)]*)\)",
                  lambda m: f"from {m.group(1)} import " + ", ".join(
                      n.strip() for n in m.group(2).replace("\n", " ").split(",") if n.strip()),
                  source)


def _rewrite_line(line: str) -> str:
    indent = line[:len(line) - len(line.lstrip())]
    stripped = line.strip()
    m = re.match(r"import autograd\.scipy\.stats\.(\w+) as (\w+)(.*)$", stripped)
    if m:
        name, alias, rest = m.groups()
        return f"{indent}from rulebridge.scipy.stats import {name} as {alias}{rest}"
    m = re.match(r"from (autograd|autograd\.misc|autograd\.misc\.flatten|autograd\.test_util|"
                 r"autograd\.misc\.optimizers) import (.*)$", stripped)
    if m:
        module, names = m.group(1), m.group(2)
        comment = ""
        if "#" in names:
            names, comment = names.split("#", 1)
            comment = "  #" + comment
        parts = [n.strip() for n in names.split(",") if n.strip()]
        swapped = [n for n in parts if n.split(" as ")[0].strip() in SWAPPED]
        kept = [n for n in parts if n not in swapped]
        lines = []
        if swapped:
            lines.append(f"{indent}from _rulebridge_swap import {', '.join(swapped)}{comment}")
        if kept:
            lines.append(f"{indent}from {module} import {', '.join(kept)}")
        return "\n".join(lines)
    line = re.sub(r"\bautograd\.numpy\b", "numpy", line)
    return re.sub(r"\bautograd\.scipy\b", "rulebridge.scipy", line)


def prepare(sdist: Path, folder: Path) -> Path:
    """autograd's tests and examples from `sdist`, rewritten, in `folder`; the root."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers()
                   if re.match(r"[^/]+/(tests|examples)/", m.name)]
        if not any("/tests/" in m.name for m in members) or not any(
                "/examples/" in m.name for m in members):
            raise SystemExit(f"{sdist} has no tests/ or examples/ folder")
        archive.extractall(folder, members, filter="data")
    root = next(folder.iterdir())
    for path in root.rglob("*.py"):
        path.write_text(rewrite(path.read_text()))
    shutil.copy(HERE / "autograd_swap.py", root / "_rulebridge_swap.py")
    if importlib.util.find_spec("matplotlib") is None:  # else the real one, with Agg
        stub = root / "matplotlib"
        stub.mkdir()
        for name in ("__init__", "pyplot", "cm", "image", "colors"):
            (stub / f"{name}.py").write_text(_STUB)
    return root


def write_mnist_stand_in(folder: Path, seed: int = 0) -> None:
    """MNIST's four idx files (gzip), generated, in `folder` (see the module's docstring)."""
    import gzip
    import struct

    import numpy as np

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, count in (("train", 60_000), ("t10k", 10_000)):
        ink = rng.random((count, 28, 28)) < 0.19  # MNIST's images are about 81% zero bytes
        pixels = np.where(ink, rng.integers(1, 256, (count, 28, 28)), 0).astype(np.uint8)
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb", compresslevel=1) as fh:
            fh.write(struct.pack(">IIII", 2051, count, 28, 28) + pixels.tobytes())
        labels = rng.integers(0, 10, count).astype(np.uint8)
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb", compresslevel=1) as fh:
            fh.write(struct.pack(">II", 2049, count) + labels.tobytes())


def _environment(root: Path, source: str | None, iters: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["AG_SUITE_SOURCE"] = source or ""
    env["AG_SUITE_MAX_ITERS"] = str(iters)
    env["PYTHONWARNINGS"] = "ignore"
    env["MPLBACKEND"] = "Agg"  # the real matplotlib draws, never opens a window
    return env


def _failure_class(text: str) -> str:
    """`ExceptionType: first line` of the last exception in a traceback's text, without the
    location rulebridge's messages start with and without memory addresses."""
    lines = [l for l in text.strip().splitlines() if l.strip()]
    for i in range(len(lines) - 1, -1, -1):
        m = re.match(r"^(?:E\s+)?([\w.]+(?:Error|Exception|Warning|Exit|Interrupt)|"
                     r"AssertionError|KeyboardInterrupt)(?::\s*(.*))?$", lines[i].strip())
        if m:
            kind = m.group(1).rsplit(".", 1)[-1]
            return f"{kind}: {_generic(m.group(2) or '')}"
    return (lines[-1][:120] if lines else "no output")


def _generic(message: str) -> str:
    """A message with what varies between instances of one cause taken out: the location,
    memory addresses, numbers, a traced value's spec and shape, a call's key."""
    message = re.sub(r"^\S+:\d+: ", "", message)
    message = re.sub(r" at 0x[0-9a-f]+", "", message)
    message = re.sub(r"\((?:float|complex|int)\w*(?:\[[:, ]*\])? of shape \([\d, ]*\)\)",
                     "(<value>)", message)
    message = re.sub(r"^[\w.]+\(.*?\) cannot", "<f>(...) cannot", message)
    message = re.sub(r"(?<![\w\[])-?\d+(?:\.\d+)?(?:e-?\d+)?", "N", message)
    return message[:100]


def run_example(path: Path, root: Path, source: str | None, timeout: float, iters: int) -> tuple:
    try:
        done = subprocess.run([sys.executable, path.name], cwd=path.parent, timeout=timeout,
                              env=_environment(root, source, iters), capture_output=True,
                              text=True)
    except subprocess.TimeoutExpired:
        return "timed out", ""
    if done.returncode == 0:
        return "passed", ""
    if done.returncode < 0:
        return "failed", f"killed by signal {-done.returncode}"
    return "failed", _failure_class(done.stderr)


def examples(root: Path, sources: list, timeout: float, iters: int, jobs: int,
             only: set[str] = frozenset()) -> list:
    paths = sorted(p for p in (root / "examples").rglob("*.py") if p.name not in HELPERS
                   and (not only or p.stem in only))
    work = [(p, s) for p in paths for s in sources]
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda w: run_example(w[0], root, w[1], timeout, iters), work))
    return [(str(p.relative_to(root)), s, *r) for (p, s), r in zip(work, results)]


def tests(root: Path, source: str | None, jobs: int, timeout: float) -> list:
    """`(test id, outcome, failure class)` of autograd's suite under pytest."""
    report = root / f"junit-{source or 'none'}.xml"
    command = [sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider",
               f"--junitxml={report}", "-o", "junit_family=xunit2", "--rootdir", str(root)]
    if jobs > 1:
        command += ["-n", str(jobs)]
    subprocess.run(command, cwd=root, env=_environment(root, source, 5), capture_output=True,
                   text=True, timeout=timeout)
    results = []
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if case.find("skipped") is not None:
            results.append((name, "skipped", ""))
        elif problem is not None:
            text = (problem.text or "") + "\n" + (problem.get("message") or "")
            results.append((name, "failed", _failure_class(text)))
        else:
            results.append((name, "passed", ""))
    return results


def _summary(title: str, rows: list) -> None:
    outcomes = collections.Counter(r[-2] for r in rows)
    print(f"\n{title}: " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()))
          + f" (of {len(rows)})")
    classes = collections.defaultdict(list)
    for row in rows:
        if row[-2] == "failed":
            classes[row[-1]].append(row[0] if len(row) == 3 else f"{row[0]} [{row[1] or 'none'}]")
    for cls, names in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(names):4d}  {cls}")
        for name in names[:6]:
            print(f"          {name}")
        if len(names) > 6:
            print(f"          ... and {len(names) - 6} more")
    timed_out = [r for r in rows if r[-2] == "timed out"]
    if timed_out:
        print("  timed out: " + ", ".join(f"{r[0]} [{r[1] or 'none'}]" for r in timed_out))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist", type=Path, required=True)
    parser.add_argument("--sources", default="none,autograd,jax")
    parser.add_argument("--test-sources", default="none")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--examples-only", action="store_true")
    parser.add_argument("--tests-only", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated example names to run")
    parser.add_argument("--keep", type=Path, help="prepare in this folder and keep it")
    parser.add_argument("--mnist-stand-in", action="store_true",
                        help="generated MNIST files for the examples that download it")
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="autograd_suite_"))
    if args.keep:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    root = prepare(args.sdist, folder)
    if args.mnist_stand_in:
        write_mnist_stand_in(root / "examples" / "data")
    print(f"prepared in {root}")
    sources = [None if s == "none" else s for s in args.sources.split(",")]
    if not args.tests_only:
        only = set(args.only.split(",")) if args.only else set()
        rows = examples(root, sources, args.timeout, args.iters, args.jobs, only)
        _summary(f"examples x sources ({', '.join(s or 'none' for s in sources)}; "
                 f"timeout {args.timeout:g} s, optimizers capped at {args.iters} iterations)",
                 rows)
    if not args.examples_only:
        for source in [None if s == "none" else s for s in args.test_sources.split(",")]:
            _summary(f"autograd's test suite, source={source!r}",
                     tests(root, source, args.jobs, timeout=3600))
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`rulebridge matrix`: run every check and write compat_matrix.md, its JSON twin and the
measurements beside them in the working folder, or `--check` that the committed files are what
the installed libraries produce. It never writes anywhere else (the status shipped with the
package is made from the committed JSON by a maintainer's step, tools/ship_status.py)."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import time
from pathlib import Path

from ..rules.missing import NO_ADAPTER_HINT
from ..rules.registry import REGISTRY
from . import render
from .matrix import (DTYPES, SEED, Importer, Outcome, Plan, default_jobs, made_by, run,
                     versions)
from .modes import SecondOrder
from .progress import Progress

MARKDOWN, JSON, MEASURED = "compat_matrix.md", "compat_matrix.json", "compat_matrix.measured.json"
CACHE_VARIABLE = "RULEBRIDGE_CACHE_DIR"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rulebridge matrix",
                                description="Check every rule against finite differences of "
                                            "NumPy and write the compatibility matrix.")
    p.add_argument("--source", action="append", metavar="NAME",
                   help="adapter to check (repeatable; default: every installed adapter)")
    p.add_argument("--output", default=".", metavar="DIR",
                   help=f"folder of {MARKDOWN}, {JSON} and {MEASURED} (default: the working "
                        "folder)")
    p.add_argument("--check", action="store_true",
                   help="regenerate in memory and fail if the committed files are stale")
    p.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                   help="processes (default: every core this process may use)")
    p.add_argument("--workers", type=int, dest="jobs", help=argparse.SUPPRESS)  # the old name
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="folder where adapters keep compiled code between runs (default: "
                        f"${CACHE_VARIABLE}, else the user cache folder's rulebridge/)")
    p.add_argument("--no-cache", action="store_true", help="keep nothing between runs")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--progress-every", type=float, default=5.0, metavar="SECONDS",
                   help="seconds between progress lines when standard error is not a terminal")
    return p


def generate(sources: list[str] | None, jobs: int, seed: int = SEED,
             progress: Progress | None = None, expected: dict[str, float] | None = None,
             cache: Path | None = None, importers: tuple[Importer, ...] = (),
             second_order: SecondOrder | None = None) -> tuple[Outcome, str]:
    """Run the matrix for `sources` (None: every installed adapter), with rows for what
    `importers` imported (matrix.Importer) and the gradgrad column `second_order` checks
    (modes.py); the outcome and its Markdown."""
    names = tuple(sources or sorted(REGISTRY.infos()))
    outcome = run(Plan(names, DTYPES, seed, importers, second_order), jobs=jobs,
                  progress=progress,
                  expected=expected, cache=cache)
    return outcome, render.to_markdown(outcome.matrix)


def default_cache() -> Path:
    """$RULEBRIDGE_CACHE_DIR, else $XDG_CACHE_HOME/rulebridge, else ~/.cache/rulebridge."""
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "rulebridge"


def main(argv: list[str] | None = None, importers: tuple[Importer, ...] = (),
         second_order: SecondOrder | None = None) -> int:
    """`rulebridge matrix ARGS`; `importers` give the rows of functions imported by a layer
    above this one (matrix.Importer: the `rulebridge` command passes the SciPy drop-ins'), and
    `second_order` the check of the gradgrad column (modes.py: the command passes
    `rulebridge.higher.check_gradgrad`)."""
    command = parser()
    args = command.parse_args(argv)
    folder = Path(args.output)
    md_path, json_path, measured_path = folder / MARKDOWN, folder / JSON, folder / MEASURED
    problem = bad_options(args, folder, json_path)
    if problem:
        command.error(problem)  # exits with status 2, before any check runs or file is written
    sources = args.source
    if args.check:
        stale = version_mismatch(json_path, sources)
        if stale:
            print(stale, file=sys.stderr)
            return 1
        sources = sources or json.loads(json_path.read_text())["sources"]
    jobs = args.jobs or default_jobs()
    progress = Progress("rulebridge matrix", "functions", every=args.progress_every)
    start = time.perf_counter()
    try:
        cache = None if args.no_cache else Path(args.cache) if args.cache else default_cache()
        outcome, markdown = generate(sources, jobs, args.seed, progress,
                                     _row_seconds(measured_path), cache, importers,
                                     second_order)
    finally:
        progress.close()
    elapsed, cpu = time.perf_counter() - start, sum(outcome.seconds.values())
    text = render.to_json(outcome.matrix)
    timing = f"{elapsed:.0f} s, {cpu:.0f} CPU s in checks, {jobs} job(s)"
    if args.check:
        problems = [p for p in (_diff(json_path, text), _diff(md_path, markdown)) if p]
        if problems:
            print("\n".join(problems), file=sys.stderr)
            print(f"The committed matrix is stale: run `rulebridge matrix` and commit {md_path} "
                  f"and {json_path}.", file=sys.stderr)
            return 1
        print(f"{md_path} and {json_path} are up to date ({timing}).")
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    md_path.write_text(markdown)
    json_path.write_text(text)
    measured_path.write_text(json.dumps({
        "note": "what depends on the machine: not committed (see rulebridge/checking/matrix.py)",
        "elapsed seconds": round(elapsed, 1), "jobs": jobs,
        "row CPU seconds": {k: round(v, 3) for k, v in outcome.seconds.items()},
        "cells": outcome.measured}, indent=0) + "\n")
    for row in render.summary(outcome.matrix):
        print(f"{row['source']}: {row.get('verified', 0)} functions verified on float64 "
              f"({row.get('no gradient', 0)} of them without a gradient) of "
              f"{row.get('offered', 0)} offered")
    figures = [m["max_rel_error"] for m in outcome.measured if m["status"] == "pass"]
    if figures:
        print(f"worst relative error among {len(figures)} passing gradient checks: "
              f"{max(figures):.1e} (every figure in {measured_path})")
    print(f"wrote {md_path} and {json_path} in {timing}")
    slowest = sorted(outcome.seconds.items(), key=lambda item: -item[1])[:5]
    print("slowest rows (CPU s): " + ", ".join(f"{name} {s:.1f}" for name, s in slowest))
    return 0


def bad_options(args: argparse.Namespace, folder: Path, json_path: Path) -> str:
    """What is wrong with the options (an unknown source, an output that is not a folder, a run
    that would replace a matrix holding more sources than it checks), or "" when nothing is."""
    installed = sorted(REGISTRY.infos())
    unknown = [name for name in args.source or () if name not in installed]
    if unknown:
        return (f"--source {unknown[0]}: no adapter of that name is installed (installed: "
                f"{', '.join(installed) or 'none'}); e.g. `rulebridge matrix --source "
                f"{installed[0] if installed else 'NAME'}`, or leave --source out to check "
                "every installed adapter")
    if not installed:
        return f"no adapter is installed. {NO_ADAPTER_HINT}"
    if args.jobs is not None and args.jobs < 1:
        return f"--jobs {args.jobs}: give at least 1 process (or leave it out: every core)"
    if args.progress_every <= 0:
        return f"--progress-every {args.progress_every}: give a positive number of seconds"
    if folder.exists() and not folder.is_dir():
        return (f"--output {folder}: it is a file, not a folder; name the folder to write "
                f"{MARKDOWN} and {JSON} into (e.g. --output {folder.parent or '.'})")
    if args.check or not json_path.exists():
        return ""
    try:
        held = json.loads(json_path.read_text()).get("sources") or []
    except (OSError, ValueError, AttributeError):
        return (f"{json_path} exists but is not a matrix this command wrote; move it away or "
                "write elsewhere with --output DIR")
    missing = sorted(set(held) - set(args.source or installed))
    if missing:
        return (f"this run would check {', '.join(sorted(set(args.source or installed)))} but "
                f"{json_path} also holds {', '.join(missing)}, which it would drop: check them "
                f"too (`rulebridge matrix` checks every installed adapter) or write elsewhere "
                f"with --output DIR")
    return ""


def version_mismatch(json_path: Path, sources: list[str] | None) -> str:
    """A plain message when the committed matrix was made with other library versions."""
    try:
        matrix = json.loads(json_path.read_text())
        committed = dict(matrix["versions"])
    except (FileNotFoundError, KeyError, json.JSONDecodeError) as exc:
        return f"{json_path} is missing or unreadable ({exc}): run `rulebridge matrix`."
    names = sources or matrix.get("sources") or sorted(REGISTRY.infos())
    installed = versions(names)
    for name, made in made_by(names).items():  # the adapters' own distributions, too
        installed[f"distribution of {name}"] = _made_text(made)
    for name, made in matrix.get("adapters", {}).items():
        committed[f"distribution of {name}"] = _made_text(made)
    changed = [f"{name}: committed {committed.get(name, 'absent')}, installed "
               f"{installed.get(name, 'absent')}"
               for name in sorted(set(committed) | set(installed))
               if committed.get(name) != installed.get(name)]
    if not changed:
        return ""
    return (f"{json_path} was generated with other library versions than the installed ones:\n  "
            + "\n  ".join(changed) + "\nInstall the pinned versions (pip install -r "
            "requirements-dev.txt) or, if the upgrade is intended, regenerate with `rulebridge "
            "matrix` and review the changed cells.")


def _made_text(made: dict) -> str:
    requires = ", ".join(f"{k} {v}" for k, v in made["requires"].items())
    text = f"{made['distribution']} {made['version']}" if made["distribution"] else "in-process"
    return text + (f" (requires {requires})" if requires else "")


def _row_seconds(path: Path) -> dict[str, float]:
    """CPU seconds per row from an earlier run's measurements, to start the slow rows first."""
    try:
        return dict(json.loads(path.read_text())["row CPU seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _diff(path: Path, new: str, limit: int = 30) -> str:
    try:
        old = path.read_text()
    except FileNotFoundError:
        return f"{path} does not exist."
    if old == new:
        return ""
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), str(path),
                                      "regenerated", lineterm="", n=0))
    shown = lines[:limit] + ([f"... {len(lines) - limit} more diff lines"]
                             if len(lines) > limit else [])
    return "\n".join(shown)

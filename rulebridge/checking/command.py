"""`rulebridge matrix`: run every check, write compat_matrix.md and its JSON twin, or `--check`
that the committed files are what the installed libraries produce."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from pathlib import Path

from ..rules.registry import REGISTRY
from . import conventions, render, status
from .matrix import DTYPES, ERROR_FIGURE_FACTOR, SEED, Plan, changed_cells, run


DEFAULT_JSON = "compat_matrix.json"


def status_text(matrix: dict) -> str:
    return json.dumps(render.verified_status(matrix), indent=0, sort_keys=True) + "\n"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rulebridge matrix",
                                description="Check every rule against finite differences of "
                                            "NumPy and write the compatibility matrix.")
    p.add_argument("--source", action="append", metavar="NAME",
                   help="adapter to check (repeatable; default: every installed adapter)")
    p.add_argument("--out", default="compat_matrix.md", help="Markdown output")
    p.add_argument("--json", default=DEFAULT_JSON, help="JSON output")
    p.add_argument("--check", action="store_true",
                   help="regenerate in memory and fail if the files on disk are stale")
    p.add_argument("--status", default=None,
                   help="where to write the per-signature results the registry loads to choose "
                        "rules (default: the package's checking/verified.json when --json is "
                        "the default compat_matrix.json)")
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument("--seed", type=int, default=SEED)
    return p


def generate(sources: list[str] | None, workers: int, seed: int = SEED,
             progress: bool = False) -> tuple[dict, str, dict[str, float]]:
    names = tuple(sources or sorted(REGISTRY.infos()))
    matrix, cpu = run(Plan(names, DTYPES, seed), workers=workers, progress=progress)
    markdown = render.to_markdown(matrix, conventions.to_markdown(matrix["sources"]))
    return matrix, markdown, cpu


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    progress = sys.stderr.isatty()
    out, json_path = Path(args.out), Path(args.json)
    sources = args.source
    if args.check:
        stale = version_mismatch(json_path, sources)
        if stale:
            print(stale, file=sys.stderr)
            return 1
        sources = sources or json.loads(json_path.read_text())["sources"]
    start = time.perf_counter()
    matrix, markdown, row_seconds = generate(sources, args.workers, args.seed, progress)
    elapsed, cpu = time.perf_counter() - start, sum(row_seconds.values())
    text = render.to_json(matrix)
    if args.check:
        problems = [_json_changes(json_path, json.loads(text)), _diff(out, markdown)]
        problems = [p for p in problems if p]
        if problems:
            print("\n".join(problems), file=sys.stderr)
            print("The committed matrix is stale: run `rulebridge matrix` and commit "
                  f"{out} and {json_path}.", file=sys.stderr)
            return 1
        figures = "" if json_path.read_text() == text else (
            f"; some error figures differ from the committed ones by less than "
            f"{ERROR_FIGURE_FACTOR:.0f}x, as they do between machines")
        print(f"{out} and {json_path} are up to date ({elapsed:.0f} s, {cpu:.0f} CPU s in "
              f"checks{figures}).")
        return 0
    out.write_text(markdown)
    json_path.write_text(text)
    status_path = args.status or (status.STATUS_FILE if args.json == DEFAULT_JSON else None)
    if status_path:  # ship the results with the package, for rule selection
        Path(status_path).write_text(status_text(matrix))
    for row in render.summary(matrix):
        print(f"{row['source']}: {row.get('verified', 0)} functions verified on float64 "
              f"(+{row.get('primal only', 0)} primal only) of {row.get('offered', 0)} offered")
    print(f"wrote {out} and {json_path} in {elapsed:.0f} s ({cpu:.0f} CPU s in checks, "
          f"{args.workers} worker(s))")
    slowest = sorted(row_seconds.items(), key=lambda item: -item[1])[:5]
    print("slowest rows (CPU s): " + ", ".join(f"{name} {s:.1f}" for name, s in slowest))
    return 0


def version_mismatch(json_path: Path, sources: list[str] | None) -> str:
    """A plain message when the committed matrix was made with other library versions."""
    from .matrix import versions

    try:
        matrix = json.loads(json_path.read_text())
        committed = matrix["versions"]
    except (FileNotFoundError, KeyError, json.JSONDecodeError) as exc:
        return f"{json_path} is missing or unreadable ({exc}): run `rulebridge matrix`."
    installed = versions(sources or matrix.get("sources") or sorted(REGISTRY.infos()))
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


def _json_changes(path: Path, fresh: dict, limit: int = 30) -> str:
    """What differs between the committed JSON and a regenerated matrix, as `matrix.same_cell`
    compares cells (a cell's error figure depends on the machine); "" when nothing does."""
    try:
        committed = json.loads(path.read_text())
    except FileNotFoundError:
        return f"{path} does not exist."
    except json.JSONDecodeError as exc:
        return f"{path} is not valid JSON ({exc})."
    lines = []
    head = {k: v for k, v in committed.items() if k != "cells"}
    fresh_head = {k: v for k, v in fresh.items() if k != "cells"}
    if head != fresh_head:
        lines.append(f"{path}: committed {json.dumps(head)}\n"
                     f"  regenerated {json.dumps(fresh_head)}")
    changed = changed_cells(committed.get("cells", []), fresh["cells"])
    for old, new in changed[:limit]:
        lines.append(f"{path}:\n- {json.dumps(old)}\n+ {json.dumps(new)}")
    if len(changed) > limit:
        lines.append(f"... {len(changed) - limit} more changed cells")
    return "\n".join(lines)


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

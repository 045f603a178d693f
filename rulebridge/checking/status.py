"""The shipped check results (checking/verified.json, installed with the package), fed to the
registry's rule choice: with `source=None`, a rule the matrix marks failed is never chosen when
another source has a verified one (rules/selection.py `resolve` prefers "pass" and skips "fail").

The file is made from the committed compat_matrix.json by `python tools/ship_status.py`, a
maintainer's step; no user command writes it."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

STATUS_FILE = Path(__file__).with_name("verified.json")
FORMAT = 2  # {"format", "versions", "sources": {adapter: {distribution, version, requires,
#              status}}}


def from_matrix(matrix: dict) -> dict:
    """The shipped table of a matrix (compat_matrix.json's content): for each adapter that came
    from a distribution, which one (name, version, the versions of what it requires) and its
    results; an adapter registered in-process has nothing to be bound to, and ships nothing."""
    statuses = verified_status(matrix)
    sources = {name: {**made, "status": statuses[name]}
               for name, made in matrix.get("adapters", {}).items()
               if made.get("distribution") and name in statuses}
    return {"format": FORMAT, "versions": matrix["versions"], "sources": sources}


def verified_status(matrix: dict) -> dict:
    """{source: {function: {signature: status}}}: the worst result over a signature's cases
    ("no gradient" is a pass: the rule's values and contract were checked). "fail" (a wrong
    number somewhere) and "error" (the rule raised or broke its contract, a clear error at run
    time) stay distinct: the registry never uses a failed rule, and ranks an erring one below
    every other candidate."""
    table: dict = defaultdict(lambda: defaultdict(dict))
    for cell in matrix["cells"]:
        status = "pass" if cell["status"] == "no gradient" else cell["status"]
        if status not in ("pass", "fail", "error", "inconclusive"):
            continue
        entry = table[cell["source"]][cell["function"]]
        key = cell.get("key") or cell["signature"]  # a cell may name its key beyond the signature
        old = entry.get(key, "pass")
        entry[key] = next(s for s in _WORST_FIRST if s in (old, status))
    return {s: dict(sorted(f.items())) for s, f in sorted(table.items())}


_WORST_FIRST = ("fail", "error", "inconclusive", "pass")


def to_text(table: dict) -> str:
    return json.dumps(table, indent=0, sort_keys=True) + "\n"


def load(path: Path = STATUS_FILE) -> dict:
    """The shipped table; an empty one when the file is missing or of another format (then
    nothing is verified in advance, and rules are checked at first use)."""
    try:
        table = json.loads(path.read_text())
    except FileNotFoundError:
        table = {}
    if table.get("format") != FORMAT:
        return {"format": FORMAT, "versions": {}, "sources": {}}
    return table


def install(registry, path: Path = STATUS_FILE) -> int:
    """Give `registry` the shipped results (each applies only to the adapter of the
    distribution that produced it: `Registry.set_shipped`); returns how many there are."""
    sources = load(path)["sources"]
    registry.set_shipped(sources)
    return sum(len(signatures) for entry in sources.values()
               for signatures in entry["status"].values())

"""Coverage: of the functions a module exports, which have a rule verified by at least one
source, which are offered but not verified, and which no source offers."""

from __future__ import annotations

from collections import defaultdict

from .catalogue import module_of

VERIFIED = ("pass", "no gradient")


def coverage(matrix: dict) -> dict[str, dict]:
    """Per module of the matrix's rows: `exported` (how many public functions it has, from the
    matrix's `exports`), the sorted names with a verified float64 rule from some source, split
    into `gradient` and `no gradient`, the `unverified` ones some source offers, the `not
    offered` ones, and the rows `beyond` its exports (counted in none of the others)."""
    best: dict[str, str] = {}
    for cell in matrix["cells"]:
        if cell["dtype"] not in ("", "float64"):
            continue
        best[cell["function"]] = _better(best.get(cell["function"]), _state(cell["status"]))
    # A float64 column is verified only when every one of its cases is: drop the sources that
    # have a case that is not.
    worst_per_source: dict = defaultdict(set)
    for cell in matrix["cells"]:
        if cell["dtype"] == "float64" and cell["status"] != "undefined":
            worst_per_source[(cell["function"], cell["source"])].add(cell["status"])
    verified: dict[str, str] = {}
    for (function, _), statuses in worst_per_source.items():
        if statuses <= set(VERIFIED):
            kind = "gradient" if "pass" in statuses else "no gradient"
            if verified.get(function) != "gradient":
                verified[function] = kind
    rows_by_module: dict[str, set[str]] = defaultdict(set)
    for function in best:
        rows_by_module[module_of(function)].add(function)
    exports = matrix.get("exports", {})
    result = {}
    for module in sorted(set(rows_by_module) | set(exports)):
        exported = set(exports.get(module, ()))
        groups: dict[str, list[str]] = {"gradient": [], "no gradient": [], "unverified": [],
                                        "not offered": []}
        for name in sorted(exported):
            if name in verified:
                groups[verified[name]].append(name)
            elif best.get(name) == "offered":
                groups["unverified"].append(name)
            else:
                groups["not offered"].append(name)
        result[module] = {"exported": len(exported), **groups,
                          "beyond": sorted(rows_by_module[module] - exported)}
    return result


def _state(status: str) -> str:
    return "not offered" if status in ("not offered", "undefined") else "offered"


def _better(old: str | None, new: str) -> str:
    return "offered" if "offered" in (old, new) else new

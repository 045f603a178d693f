"""The committed check results, shipped with the package, fed to the registry's rule choice:
with `source=None`, a rule the matrix marks failed is never chosen when another source has a
verified one (`Registry._resolve` prefers "pass" and skips "fail")."""

from __future__ import annotations

import json
from pathlib import Path

STATUS_FILE = Path(__file__).with_name("verified.json")


def load(path: Path = STATUS_FILE) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {"versions": {}, "status": {}}


def install(registry, path: Path = STATUS_FILE) -> int:
    """Record every committed result in `registry`; returns how many."""
    count = 0
    for source, functions in load(path)["status"].items():
        for function, signatures in functions.items():
            for signature, status in signatures.items():
                registry.set_status(function, source, signature, status)
                count += 1
    return count

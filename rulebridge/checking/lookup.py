"""`rulebridge.lookup(f, *args, **kwargs)`: is this call verified? For one call, the key the
engine computes for it (rules/keys.py), each installed source's verdict there as the registry's
rule choice sees it (`Registry.verdicts`: shipped by the matrix, decided by a check at a user's
inputs in this process, or to be checked at the first call), the rule a call with
`source=None` would use, the keys the shipped matrix checked for the function, and its caveats.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from ..rules.keys import format_key, keyed
from ..rules.registry import REGISTRY
from ..rules.rule import function_name
from ..rules.tangents import caveats as tangent_caveats
from . import conventions
from .modes import MODES

# What a verdict cannot say: where a derivative does not exist or is a convention.
_EIGENVECTORS = ("eigenvectors of a repeated eigenvalue are not unique and have no derivative, "
                 "and complex eigenvectors are defined up to a phase: differentiate only results "
                 "that depend on neither (the eigenvalues' gradient always exists)")
CAVEATS: dict[str, tuple[str, ...]] = {
    "numpy.linalg.eigh": (_EIGENVECTORS, "it reads one triangle of the matrix (UPLO): the "
                          "gradient's other triangle is zero, as NumPy's function ignores it"),
    "scipy.linalg.eigh": (_EIGENVECTORS, "the eigenvectors' derivative is that of SciPy's "
                          "own signs (a source's vectors are aligned to them)"),
    "numpy.linalg.svd": ("singular vectors of a repeated singular value are not unique and have "
                         "no derivative: differentiate only results that do not depend on them "
                         "(the singular values' gradient always exists)",),
    "numpy.linalg.eig": ("not offered by every source: its eigenvector phase convention differs "
                         "from LAPACK's",),
    "numpy.linalg.cholesky": ("it reads the lower triangle only: the gradient's upper triangle "
                              "is zero, as NumPy's function ignores it",),
}
MATRIX_JSON = Path(__file__).resolve().parents[2] / "compat_matrix.json"  # in a checkout


@dataclass
class Verdict:
    """One source at the call's key: `status` is "pass", "fail", "error", "inconclusive"
    (decided by the shipped matrix or by a check in this process: `origin`), "unchecked" (its
    rule is checked at the first call's inputs before it is used) or "no rule" (`reason`)."""

    source: str
    status: str
    origin: str = ""
    reason: str = ""
    # the shipped verdicts of the rule's other modes at the key (checking/modes.py): "jvp"
    # (its pushforward) and "gradgrad" (its second order); "unchecked" where there is none
    modes: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        if self.status == "no rule":
            return f"{self.source}: no rule here ({self.reason})"
        if self.status == "unchecked":
            text = (f"{self.source}: not checked at this key by the shipped matrix; checked at "
                    "the first call's inputs before its rule is used")
        else:
            text = f"{self.source}: {self.status} ({self.origin})"
            text += f": {self.reason}" if self.reason else ""
        return text + "".join(f"; {mode} {status}" for mode, status in self.modes.items())


@dataclass
class Lookup:
    """The answer of `rulebridge.lookup` for one call; `print` it, or read its fields."""

    function: str
    key: str
    verdicts: list[Verdict]
    used: str | None  # the source a call with source=None uses (None: it raises NoRuleError)
    nearby: dict[str, dict[str, str]] = field(default_factory=dict)  # source -> {key: status}
    caveats: list[str] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        """Does a call with source=None use a rule verified at this very key?"""
        return any(v.source == self.used and v.status == "pass" for v in self.verdicts)

    def __str__(self) -> str:
        call = f"{self.function}{self.key}"
        if self.verified:
            head = f"{call}: verified (the {self.used} rule passed at this key)"
        elif self.used is not None:
            head = (f"{call}: not verified in advance; the first call checks the {self.used} "
                    "rule at its inputs (and the next source's, if it fails)")
        else:
            head = f"{call}: no usable rule; a call raises NoRuleError"
        lines = [head, "  sources at this key:"]
        lines += [f"    {v.describe()}" for v in self.verdicts]
        by_key: dict[str, list[str]] = {}
        for source, keys in self.nearby.items():
            for k, status in keys.items():
                by_key.setdefault(k, []).append(f"{source} {status}")
        if by_key:
            lines.append(f"  keys of {self.function} the shipped matrix checked:")
            lines += [f"    {self.function}{k}: {', '.join(found)}"
                      + ("  <- this call" if k == self.key else "")
                      for k, found in sorted(by_key.items())]
        if self.caveats:
            lines.append("  caveats:")
            lines += [f"    {caveat}" for caveat in self.caveats]
        return "\n".join(lines)


def lookup_call(function: Callable, args: tuple, kwargs: dict) -> Lookup:
    """The `Lookup` for `function(*args, **kwargs)`, plain values standing for the call's."""
    prepare = getattr(function, "__rulebridge_prepare__", None)
    if prepare is not None:
        prepare()  # a drop-in imports its sources' rules, as its first traced call does
    args, kwargs, signature, config, _ = keyed(function, args, dict(kwargs))
    key, name = format_key(signature, config), function_name(function)
    checked = REGISTRY.checked(function, key)  # an imported function's are its own
    imported = bool(REGISTRY.imported_sources(function))
    verdicts = []
    for source, rule, refusal in REGISTRY.verdicts(function, signature, config):
        if rule is None:
            verdicts.append(Verdict(source, "no rule", reason=refusal))
            continue
        status = checked.get(source) or rule.status
        modes = {mode: REGISTRY.shipped_status(name, source, f"{key} {mode}", imported)
                 or "unchecked" for mode in MODES}
        if status in ("unchecked", "unverified"):
            verdicts.append(Verdict(source, "unchecked", modes=modes))
            continue
        origin = ("checked at a call's inputs in this process" if source in checked
                  else "the shipped matrix")
        reason = "" if status == "pass" or source in checked else _reason(name, source, key)
        verdicts.append(Verdict(source, status, origin, reason, modes))
    used = REGISTRY.lookup(function, signature, None, config)
    nearby = {v.source: REGISTRY.shipped_keys(name, v.source, imported) for v in verdicts}
    return Lookup(name, key, verdicts, None if used.missing else str(used.source),
                  {s: keys for s, keys in nearby.items() if keys},
                  list(CAVEATS.get(name, ())) + tangent_caveats(name)
                  + _conventions(function, verdicts))


def _conventions(function: Callable, verdicts: list[Verdict]) -> list[str]:
    sources = [v.source for v in verdicts if v.status != "no rule"]
    return [f"{c.title}: the derivative there is a convention, " + "; ".join(
                f"{s} {conventions.evaluate_one(c, s)}" for s in sources)
            for c in conventions.CONVENTIONS if c.function is function and sources]


def _reason(function: str, source: str, key: str) -> str:
    """The reason the committed matrix gives for a cell that did not pass (a checkout's
    compat_matrix.json; the installed package ships the statuses alone)."""
    for cell in _cells().get((function, source), ()):
        if cell.get("key") == key and cell.get("reason"):
            return cell["reason"]
    return "" if MATRIX_JSON.exists() else "the reason is in compat_matrix.md"


@lru_cache(maxsize=1)
def _cells() -> dict[tuple[str, str], list[dict[str, Any]]]:
    try:
        cells = json.loads(MATRIX_JSON.read_text())["cells"]
    except (OSError, ValueError, KeyError):
        return {}
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for cell in cells:
        found.setdefault((cell["function"], cell["source"]), []).append(cell)
    return found

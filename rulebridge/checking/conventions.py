"""What each source returns at kinks and ties, where finite differences cannot decide: reported
as conventions, not pass/fail."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import NoRuleError
from ..rules.registry import REGISTRY
from ..rules.signature import signature_of


@dataclass(frozen=True)
class Convention:
    title: str
    function: Callable
    args: tuple
    kwargs: dict
    cotangent: object  # the output cotangent fed to the pullback


CONVENTIONS = (
    Convention("abs at 0: d/dx abs(x) at x = [0., 1.]", np.abs, (np.array([0.0, 1.0]),), {},
               np.ones(2)),
    Convention("maximum tie: grads of maximum(x, y) at x = y = 1.", np.maximum,
               (np.array([1.0]), np.array([1.0])), {}, np.ones(1)),
    Convention("minimum tie: grads of minimum(x, y) at x = y = 1.", np.minimum,
               (np.array([1.0]), np.array([1.0])), {}, np.ones(1)),
    Convention("clip at a bound: d/dx clip(x, 0, 1) at x = [0., 1.]", np.clip,
               (np.array([0.0, 1.0]), 0.0, 1.0), {}, np.ones(2)),
    Convention("three-way max tie: d/dx max(x) at x = [1., 1., 1.]", np.max,
               (np.array([1.0, 1.0, 1.0]),), {}, np.float64(1.0)),
    Convention("norm at 0: d/dx norm(x) at x = [0., 0.]", np.linalg.norm,
               (np.array([0.0, 0.0]),), {}, np.float64(1.0)),
    Convention("sort ties: pullback of sort(x) at x = [1., 1., 0.], ybar = [1., 2., 3.]",
               np.sort, (np.array([1.0, 1.0, 0.0]),), {}, np.array([1.0, 2.0, 3.0])),
)


def evaluate(sources: list[str] | tuple[str, ...]) -> list[dict]:
    """What every source returns at every convention point: JSON-ready rows
    `{"point": title, "values": {source: text}}`."""
    return [{"point": c.title, "values": {s: evaluate_one(c, s) for s in sources}}
            for c in CONVENTIONS]


def evaluate_one(convention: Convention, source: str) -> str:
    """The cotangents `source`'s rule returns at this point, as text."""
    args = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in convention.args)
    try:
        rule = REGISTRY.require(convention.function, signature_of(args), source)
    except NoRuleError:
        return "not offered"
    argnums = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray))
    try:
        with np.errstate(all="ignore"):
            _, residuals = rule.forward(args, convention.kwargs)
            cts = rule.pullback(residuals, convention.cotangent, argnums)
    except Exception as exc:
        return f"raises {type(exc).__name__}"
    return ", ".join(_format(ct) for ct in cts)


def _format(ct) -> str:
    if ct is None:
        return "0 (None)"
    values = np.atleast_1d(np.asarray(ct, dtype=np.float64))
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def to_markdown(rows: list[dict], sources: list[str]) -> str:
    """The conventions table from `evaluate`'s rows."""
    lines = ["## Conventions at kinks and ties", "",
             "Finite differences cannot decide these; this is what each source's rule returns "
             "(one list per differentiated argument).", "",
             "| point | " + " | ".join(sources) + " |", "|---|" + "---|" * len(sources)]
    for row in rows:
        values = [row["values"].get(source, "") for source in sources]
        lines.append(f"| {row['point']} | " + " | ".join(values) + " |")
    return "\n".join(lines) + "\n"

"""The rulebridge pytest plugin (entry point `pytest11`): the matrix's checks as parametrized
tests, and a fixture to check your own rules.

- `rulebridge_row`: a test taking this fixture is parametrized over every matrix row (one per
  function, ids are function names) for the adapters given by `--rulebridge-source NAME`
  (repeatable; default: every installed adapter). `pytest -n auto` spreads the rows over cores.
  `rulebridge_row.cells()` runs the row's checks; `rulebridge_row.assert_verified()` fails on
  any fail/error/inconclusive cell, which is what a third-party adapter's own suite wants.
  Rows of functions given rules by `import_rule` come from the test module's
  `rulebridge_importers` (a tuple of `importer(source) -> functions`, matrix.Importer): with
  `rulebridge_importers = (rulebridge.scipy.imported,)` the SciPy drop-ins are rows too.
- `assert_rule`: the fixture form of `rulebridge.assert_rule(func, *args, source=..., **kw)`.
- `check_grads`: the fixture form of `rulebridge.check_grads(f, *args, ...)`, on each
  `--rulebridge-source` given, failing the test with the check's message. The function is the
  API's, a layer above: the package hands it down (`gradcheck.install`), as it does the
  registry to the first-use check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import pytest

from ..errors import GradientCheckError
from ..rules.registry import REGISTRY
from . import gradcheck
from .asserting import assert_rule as _assert_rule
from .matrix import DTYPES, SEED, Plan, check_function, row_names

BAD = ("fail", "error", "inconclusive")


def pytest_addoption(parser) -> None:
    group = parser.getgroup("rulebridge")
    group.addoption("--rulebridge-source", action="append", default=None, metavar="NAME",
                    help="adapter whose rules the rulebridge_row tests and the check_grads "
                         "fixture check (repeatable)")


@dataclass(frozen=True)
class MatrixRow:
    """One function's row of the compatibility matrix, for the selected adapters."""

    name: str
    plan: Plan

    def cells(self) -> list[dict]:
        return check_function(self.name, self.plan)

    def assert_verified(self) -> list[dict]:
        cells = self.cells()
        bad = [c for c in cells if c["status"] in BAD]
        if bad:
            lines = [f"{c['source']} {c['signature']} {c['kwargs']}: {c['status']}: "
                     f"{c['reason']}" for c in bad]
            pytest.fail(f"{self.name}: {len(bad)} check(s) did not pass:\n  "
                        + "\n  ".join(lines), pytrace=False)
        return cells

    def __str__(self) -> str:
        return self.name


def pytest_generate_tests(metafunc) -> None:
    if "rulebridge_row" not in metafunc.fixturenames:
        return
    sources = metafunc.config.getoption("rulebridge_source") or sorted(REGISTRY.infos())
    importers = tuple(getattr(metafunc.module, "rulebridge_importers", ()))
    plan = Plan(tuple(sources), DTYPES, SEED, importers)
    names = row_names(plan.sources, plan.importers)
    metafunc.parametrize("rulebridge_row", [MatrixRow(name, plan) for name in names], ids=names)


@pytest.fixture
def assert_rule():
    """`assert_rule(func, *example_args, source=None, **kwargs)`: check a rule (or the rule
    rulebridge would use) against finite differences; fails the test with the reason."""
    return _assert_rule


class GradientChecker:
    """`check_grads(f, *args, source=None, **options)`: `rulebridge.check_grads` at these
    inputs, once per `--rulebridge-source` given (once, with rulebridge's choice of rules,
    when none is given or `source=` names one); a disagreement fails the test with the worst
    relative error, the direction and the leaf it is in."""

    def __init__(self, sources: Sequence[str]) -> None:
        self.sources = tuple(sources)

    def __call__(self, f: Callable[..., Any], *args: Any, source: str | None = None,
                 **options: Any) -> float:
        """The worst relative error over the sources checked."""
        check = gradcheck.installed()
        worst = 0.0
        for name in (source,) if source is not None else self.sources or (None,):
            try:
                worst = max(worst, check(f, *args, source=name, **options))
            except GradientCheckError as exc:
                failure = str(exc) + (f" (source {name!r})" if name else "")
            else:
                continue
            pytest.fail(failure, pytrace=False)  # outside `except`: the message alone
        return worst


@pytest.fixture
def check_grads(request) -> GradientChecker:
    """`check_grads(f, *args, source=None, argnums=None, directions=3, seed=0, rtol=None,
    atol=None)`: fail the test unless rulebridge's gradient of `f` at `args` agrees with float64
    central differences of `f` (`rulebridge.check_grads`), on each `--rulebridge-source` given;
    returns the worst relative error."""
    return GradientChecker(request.config.getoption("rulebridge_source") or ())

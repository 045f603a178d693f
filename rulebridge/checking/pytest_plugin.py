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
  `--rulebridge-source` given (rulebridge/pytest_grads.py: it needs the API, a layer above).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ..rules.registry import REGISTRY
from .check import assert_rule as _assert_rule
from .matrix import DTYPES, SEED, Plan, check_function, row_names

BAD = ("fail", "error", "inconclusive")

# Loaded by pytest beside this plugin: a fixture over the API, which checking may not import.
pytest_plugins = ["rulebridge.pytest_grads"]


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

"""The `check_grads` fixture of the rulebridge pytest plugin: a whole function's gradient
checked in a user's test, failing the test with the check's message.

The plugin's entry point (rulebridge/checking/pytest_plugin.py) names this module in its
`pytest_plugins`, so pytest loads it beside the plugin while `rulebridge.checking` stays below
the API it would otherwise have to import.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import pytest

from .api import check_grads as _check_grads
from .errors import GradientCheckError


class GradientChecker:
    """`check_grads(f, *args, source=None, **options)`: `rulebridge.check_grads` at these
    inputs, once per source of `--rulebridge-source` (or the default choice when none is
    given or `source=` names one); a disagreement fails the test with the worst relative
    error, the direction and the leaf it is in."""

    def __init__(self, sources: Sequence[str]) -> None:
        self.sources = tuple(sources)

    def __call__(self, f: Callable[..., Any], *args: Any, source: str | None = None,
                 **options: Any) -> float:
        """The worst relative error over the sources checked."""
        sources = (source,) if source is not None else self.sources or (None,)
        worst = 0.0
        for name in sources:
            try:
                worst = max(worst, _check_grads(f, *args, source=name, **options))
            except GradientCheckError as exc:
                failure = str(exc) + (f" (source {name!r})" if name else "")
            else:
                continue
            pytest.fail(failure, pytrace=False)  # outside `except`: the message alone
        return worst


@pytest.fixture
def check_grads(request: pytest.FixtureRequest) -> GradientChecker:
    """`check_grads(f, *args, source=None, argnums=None, directions=3, seed=0, rtol=None,
    atol=None)`: fail the test unless rulebridge's gradient of `f` at `args` agrees with float64
    central differences of `f` (`rulebridge.check_grads`), on each `--rulebridge-source` given;
    returns the worst relative error."""
    return GradientChecker(request.config.getoption("rulebridge_source") or ())

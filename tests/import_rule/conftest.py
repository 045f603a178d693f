"""Fixtures of the import_rule tests."""

import pytest

import rulebridge as rb


@pytest.fixture(autouse=True)
def forget_imports():
    """Imports are process-wide registrations: undo this test's, so tests stay independent."""
    before = set(rb.REGISTRY._imports)
    yield
    for function in set(rb.REGISTRY._imports) - before:
        rb.REGISTRY.remove_import(function)

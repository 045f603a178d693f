"""Fixtures shared across tests/ folders."""

import pytest

import rulebridge

from tests.support.adapters import SignFlippedSin


@pytest.fixture
def flipped():
    rulebridge.register_adapter(SignFlippedSin())
    yield SignFlippedSin.name
    rulebridge.REGISTRY.unregister(SignFlippedSin.name)

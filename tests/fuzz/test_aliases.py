"""Fuzzed writes into a traced argument through an alias the tape never saw
(tests/fuzz/aliases.py): refused with MutationError when they change its bytes, the gradient of
the program without them when they do not. Never a wrong number."""

import pytest

from .aliases import run

DEFAULT = 40
SLOW = 600


def test_writes_through_aliases_are_refused_or_right():
    tally = run(DEFAULT)
    assert tally["aliases:refused"] and tally["aliases:pass"], tally


@pytest.mark.slow
def test_many_writes_through_aliases_are_refused_or_right():
    tally = run(SLOW)
    assert sum(tally.values()) >= SLOW // 2, tally
    print(dict(tally))

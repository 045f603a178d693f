"""Fuzzed call sequences (tests/fuzz/sequences.py): changing constants, degenerate first calls,
drop-ins with lists and keywords. Right or raise at every call; a good call after degenerate
ones is answered."""

import pytest

from .sequences import run

DEFAULT = 3
SLOW = 150


def test_call_sequences_are_right_or_raise():
    tally = run(DEFAULT)
    assert sum(v for k, v in tally.items() if k.startswith("then good:pass")) >= 1, tally


@pytest.mark.slow
def test_many_call_sequences_are_right_or_raise():
    tally = run(SLOW)
    drop_ins = sum(v for k, v in tally.items() if k.startswith("drop-ins:"))
    assert drop_ins >= 40, tally
    print(dict(tally))

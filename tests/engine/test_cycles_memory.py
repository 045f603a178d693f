"""Cyclic garbage made inside the differentiated function holding large arrays (issue 22,
section 1): a gradient's peak memory stays within 2x of plain NumPy's on the same program.
The programs and the figures are benchmarks/cycles.py's (tracemalloc: bytes, not time)."""

import pytest

from benchmarks.cycles import WITHIN_2X, ratio


@pytest.mark.parametrize("name", WITHIN_2X)
def test_cyclic_garbage_holding_large_arrays_is_not_kept_by_the_tape(name):
    plain, ours = ratio(name)
    assert ours <= 2 * plain, (name, plain, ours)

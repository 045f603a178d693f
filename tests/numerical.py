"""The tests' one finite-difference reference: central differences of a plain NumPy function."""

from __future__ import annotations

from typing import Callable

import numpy as np


def central_difference(f: Callable, args: tuple, argnum: int = 0, h: float = 1e-6) -> np.ndarray:
    """d f(*args) / d args[argnum], one coordinate at a time. Every call gets fresh copies of the
    array arguments, so functions that write into their arguments are measured correctly."""
    x = np.asarray(args[argnum], dtype=np.float64)
    g = np.zeros_like(x)

    def at(point):
        call = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
        call[argnum] = point if isinstance(args[argnum], np.ndarray) else float(point)
        return f(*call)

    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = h
        g[i] = (at(x + step) - at(x - step)) / (2 * h)
    return g

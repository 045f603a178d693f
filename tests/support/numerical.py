"""The tests' one finite-difference reference: central differences of a plain NumPy function."""

from __future__ import annotations

from typing import Callable

import numpy as np

import rulebridge as rb


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


def complex_central_difference(f: Callable, a: np.ndarray) -> np.ndarray:
    """df/dx - i df/dy for a real f of a complex array a = x + iy: the convention JAX and
    autograd share (and rulebridge's gradients follow)."""
    re = central_difference(lambda x: f(x + 1j * np.imag(a)), (np.real(a),))
    im = central_difference(lambda y: f(np.real(a) + 1j * y), (np.imag(a),))
    return re - 1j * im


def assert_right_or_raises(f: Callable, a: np.ndarray, expected: np.ndarray, source: str,
                           rtol: float = 1e-6, atol: float = 1e-7) -> None:
    """rulebridge's gradient of `f` at `a` from `source` is `expected`, or the call raises a
    rulebridge error (declined, refused): never a wrong number or NaN."""
    try:
        got = rb.grad(f, source=source)(a.copy())
    except rb.RulebridgeError:
        return
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=source)

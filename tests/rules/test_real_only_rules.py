"""Rules a source wrote for real arguments only are declined for complex ones: the gradient of a
complex program is NumPy's (central differences, df/dx - i df/dy) or the call raises."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special

from tests.support.numerical import assert_right_or_raises, complex_central_difference

Z = np.array([[2.0 + 0.5j, 0.3 - 0.2j], [0.1 + 0.4j, 1.5 - 0.3j]])
SPD = np.array([[3.0, 0.5 - 0.4j], [0.5 + 0.4j, 2.0]])
TALL = np.array([[1.0 + 0.2j, 0.3], [0.2 - 0.5j, 1.1 + 0.1j], [0.4j, -0.3 + 0.2j]])

PROGRAMS = [
    ("sign", lambda z: np.sum(np.real(np.sign(z) * np.conj(z[::-1]))), Z),
    ("slogdet", lambda z: np.linalg.slogdet(z)[1] + np.imag(np.linalg.slogdet(z)[0]), Z),
    ("ive", lambda z: np.sum(np.real(scipy.special.ive(1.0, z))), Z),
    ("pinv", lambda z: np.sum(np.real(np.linalg.pinv(z)) + np.imag(np.linalg.pinv(z)) ** 2),
     TALL),
    ("cholesky", lambda z: np.sum(np.imag(np.linalg.cholesky(z)) + np.real(np.linalg.cholesky(z))
                                  ** 2), SPD),
]


@pytest.mark.parametrize("source", ["autograd", "jax"])
@pytest.mark.parametrize("name, program, z", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_a_complex_gradient_is_numpy_s_or_the_call_raises(source, name, program, z):
    assert_right_or_raises(program, z, complex_central_difference(program, z), source, atol=1e-8)

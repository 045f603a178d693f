"""`x[index] op= y` on an argument: Python reads `x[index]` (a view the tape follows), writes into
it in place, then assigns it back. The view's write reaches the argument as a propagated write,
which the sweep undoes when nothing downstream needs it."""

import numpy as np
import pytest

import rulebridge


def program_a(x):
    x[...] += 0.5
    return np.sum(x * 2.0)


def program_b(x):
    x[1:] += x[:-1] ** 2
    return np.sum(x * x)


def program_c(x):
    x[::2] *= np.sin(x[1::2].sum())
    x[0] -= x[-1]
    return np.sum(np.exp(x))


def central_differences(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


@pytest.mark.parametrize("program", [program_a, program_b, program_c])
def test_gradient_and_the_arguments_final_value_are_numpys(program):
    x0 = np.array([0.3, -0.7, 1.1, 0.4, -0.2])
    x = x0.copy()
    g = rulebridge.grad(program)(x)
    expected = x0.copy()
    program(expected)
    assert np.array_equal(x, expected)  # the caller's array ends as NumPy leaves it
    reference = central_differences(lambda v: program(v.copy()), x0)
    assert np.allclose(g, reference, rtol=1e-6, atol=1e-8)

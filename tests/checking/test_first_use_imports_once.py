"""The check at first use of an imported function (a `rulebridge.scipy` drop-in, or
`import_rule` of the user's own) runs once per key, not at every call.

Its verdict was recorded under the function itself and looked up under its name, so it was
never found: every gradient checked the rule again (several evaluations of the function) and,
recording the verdict, emptied every rule cache, so every op's rule was built again. autograd's
ica example spent 200 ms a gradient on it against autograd's 13 ms (docs/autograd-compat.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb

pytest.importorskip("autograd")


def test_an_imported_function_is_checked_at_its_first_call_only():
    calls = [0]

    def softplus(x):
        calls[0] += 1
        return np.log1p(np.exp(x))

    import autograd.numpy as anp

    imported = rb.import_rule(softplus, source="autograd",
                              equivalent=lambda x: anp.log1p(anp.exp(x)))
    # a key no shipped verdict covers: traced in one argument of two
    x = np.linspace(-1.0, 1.0, 5)

    def f(x):
        return np.sum(imported(x * 2.0) ** 2)

    grad = rb.grad(f)
    first = grad(x)
    checked = calls[0]
    assert checked > 1  # the first call checked it (finite differences call it again)
    for _ in range(3):
        np.testing.assert_allclose(grad(x), first, rtol=0, atol=0)
    assert calls[0] - checked == 3, "each later gradient calls the function once, unchecked"


def test_an_imported_function_traced_in_one_argument_of_two_is_checked_once():
    """A key the check decides for the traced arguments alone (`... traced in argument 0`):
    the later calls find that verdict too."""
    calls = [0]

    def scaled_softplus(x, c):
        calls[0] += 1
        return c * np.log1p(np.exp(x))

    import autograd.numpy as anp

    imported = rb.import_rule(scaled_softplus, source="autograd",
                              equivalent=lambda x, c: c * anp.log1p(anp.exp(x)))
    c = np.array([0.5, 1.5, 2.0])

    def f(x):
        return np.sum(imported(x, c) ** 2)

    x = np.array([0.1, -0.4, 0.9])
    grad = rb.grad(f)
    first = grad(x)
    h = 1e-6
    numeric = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(first, numeric, rtol=1e-6)
    checked = calls[0]
    for _ in range(3):
        np.testing.assert_allclose(grad(x), first, rtol=0, atol=0)
    assert calls[0] - checked == 3, "each later gradient calls the function once, unchecked"

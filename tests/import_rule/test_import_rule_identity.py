"""Verdicts about imported functions are kept per function object, not per name, and the
wrapper `import_rule(f, source)` returns keeps using the rules of the source it named (issue 22,
section 6). References: central differences of each NumPy function."""

from __future__ import annotations

import autograd.numpy as anp
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb
from rulebridge.errors import ImportRuleError

jax.config.update("jax_enable_x64", True)

X = np.array([0.3, 0.7])


def central_grad(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def scaled_sine(k):
    def f(x):  # one factory: every function it makes is named f
        return np.sin(x) * k
    return f


def test_a_failed_verdict_on_one_factory_function_does_not_refuse_its_sibling():
    wrong, right = scaled_sine(2.0), scaled_sine(3.0)
    assert wrong.__qualname__ == right.__qualname__
    bad = rb.import_rule(wrong, "jax",  # the equivalent's gradient is zero: fails its check
                         equivalent=lambda x: jax.lax.stop_gradient(jnp.sin(x)) * 2.0 + 0 * x)
    good = rb.import_rule(right, "jax", equivalent=lambda x: jnp.sin(x) * 3.0)
    with pytest.raises(ImportRuleError, match="disagrees with"):
        rb.grad(lambda v: np.sum(bad(v)))(X)
    loss = lambda v: np.sum(good(v))  # noqa: E731
    np.testing.assert_allclose(rb.grad(loss)(X), central_grad(loss, X), rtol=1e-8)
    assert rb.check_rule(good, X).status == "pass"
    # The refusal of the failed one says where its verdict came from: this process.
    with pytest.raises(rb.NoRuleError) as refused:
        rb.check_rule(bad, X)
    assert "earlier in this process" in str(refused.value)
    assert "shipped compatibility matrix" not in str(refused.value)


def tanh_twice(x):
    return np.tanh(x) * 2


def sources_recorded(f, x):
    _, tape = rb.trace(f, x)
    return [op.rule.source for op in tape.ops]


def test_each_wrapper_uses_the_source_its_import_named():
    from_jax = rb.import_rule(tanh_twice, "jax", equivalent=lambda x: jnp.tanh(x) * 2)
    from_autograd = rb.import_rule(tanh_twice, "autograd", equivalent=lambda x: anp.tanh(x) * 2)
    assert sources_recorded(from_jax, X) == ["jax"]
    assert sources_recorded(from_autograd, X) == ["autograd"]
    assert rb.check_rule(from_jax, X).source == "jax"
    for wrapper in (from_jax, from_autograd):
        loss = lambda v: np.sum(wrapper(v) ** 2)  # noqa: E731
        np.testing.assert_allclose(rb.grad(loss)(X), central_grad(loss, X), rtol=1e-8)
        # containers go through the same pinned rules
        tree = lambda p: np.sum(wrapper(p["a"]) * p["b"])  # noqa: E731
        g = rb.grad(tree)({"a": X, "b": X[::-1].copy()})
        np.testing.assert_allclose(g["a"], central_grad(lambda a: tree({"a": a, "b": X[::-1]}),
                                                        X), rtol=1e-8)


def cube(x):
    return x ** 3


def test_a_wrapper_follows_a_reimport_of_its_own_source():
    # The first import's equivalent is wrong where it matters (its gradient); a second import
    # from the same source replaces it, for the first wrapper too: never two rules under one key.
    first = rb.import_rule(cube, "jax", check=False,
                           equivalent=lambda x: jax.lax.stop_gradient(x ** 3) + 0 * x)
    second = rb.import_rule(cube, "jax", equivalent=lambda x: x ** 3)
    loss = lambda v: np.sum(second(v))  # noqa: E731
    np.testing.assert_allclose(rb.grad(loss)(X), 3 * X ** 2, rtol=1e-12)
    np.testing.assert_allclose(rb.grad(lambda v: np.sum(first(v)))(X), 3 * X ** 2, rtol=1e-12)

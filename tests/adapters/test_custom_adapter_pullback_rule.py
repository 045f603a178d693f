"""The pullback rule of examples/custom_adapter.py (`Rule.pullback_rule`, as a third-party author
writes one): second derivatives through its rules agree with jax.hessian on the jnp program and
with central differences of its gradient, 1e-8 relative. With the source named, its pullbacks'
own np.multiply has no rule there, so without the pullback rule this is refused."""

from __future__ import annotations

import runpy

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.checking import gradgrad
from tests.support.paths import ROOT

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

x0 = np.array([0.3, -0.5, 0.9, 1.4])


@pytest.fixture
def hyperbolic():
    example = runpy.run_path(str(ROOT / "examples" / "custom_adapter.py"), run_name="example")
    gradgrad.forget()
    rb.register_adapter(example["HyperbolicAdapter"]())
    try:
        yield "hyperbolic"
    finally:
        rb.REGISTRY.unregister("hyperbolic")
        gradgrad.forget()


# (the program, the same in jax.numpy): only what the adapter covers, np.sinh and np.cosh
PROGRAMS = {
    "cosh(sinh)": (lambda x: np.cosh(np.sinh(x)), lambda x: jnp.sum(jnp.cosh(jnp.sinh(x)))),
    "sinh(cosh(sinh))": (lambda x: np.sinh(np.cosh(np.sinh(x))),
                         lambda x: jnp.sum(jnp.sinh(jnp.cosh(jnp.sinh(x))))),
}


def central_differences(f, x, h=1e-5):
    columns = [(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)]
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_second_derivative_agrees_with_jax_and_with_differences_of_the_gradient(hyperbolic, name):
    program, jnp_program = PROGRAMS[name]
    gradient = rb.elementwise_grad(program, source=hyperbolic)
    hessian = rb.jacobian(gradient, source=hyperbolic)(x0)
    np.testing.assert_allclose(hessian, np.asarray(jax.hessian(jnp_program)(x0)), rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(hessian, central_differences(gradient, x0), rtol=1e-8, atol=1e-9)
    # the pullbacks ran as the example's pullback rules, one op each, not as NumPy code
    _, tape = rb.trace(gradient, x0, source=hyperbolic)
    pullbacks = [op.rule.name for op in tape.ops if op.rule.name.startswith("pullback of")]
    assert len(pullbacks) == name.count("(") + 1, pullbacks
    assert {op.rule.source for op in tape.ops} <= {hyperbolic, "rulebridge"}  # + engine's own


def test_grad_of_grad_through_the_pullback_rule(hyperbolic):
    def inner(x):  # a scalar derivative, differentiated again
        return rb.grad(lambda z: np.cosh(np.sinh(z)), source=hyperbolic)(x)

    x = 0.7
    expected = jax.grad(jax.grad(lambda z: jnp.cosh(jnp.sinh(z))))(x)
    np.testing.assert_allclose(rb.grad(inner, source=hyperbolic)(x), expected, rtol=1e-8)

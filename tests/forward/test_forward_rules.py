"""Pushforwards (Rule.jvp): imported from autograd's defjvp table and from jax.jvp, checked against
central differences at first use, and replaced by the transposed pullback when they fail, raise
or are missing; a refusal where neither serves."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules import selection as choice
from rulebridge.forward.transpose import MAX_PULLBACKS, transposed

X = np.random.default_rng(1).standard_normal(6)
V = np.random.default_rng(2).standard_normal(6)


X3 = X.reshape(1, 2, 3)  # a key the matrix does not check: (float64[:, :, :])
V3 = V.reshape(1, 2, 3)


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_the_sources_pushforwards_are_checked_then_used(source):
    choice.forget()
    rule = rb.lookup(np.tanh, rb.signature_of((X3,)), source=source)
    assert rule.jvp is not None
    assert rb.REGISTRY.shipped_status("numpy.tanh", source, "(float64[:, :, :]) jvp") is None
    _, ydot = rb.jvp(lambda x: np.tanh(np.sin(x)), (X3,), (V3,), source=source)
    np.testing.assert_allclose(ydot, (1 - np.tanh(np.sin(X3)) ** 2) * np.cos(X3) * V3,
                               rtol=1e-12)
    verdicts = choice.verdicts()
    assert verdicts[("numpy.tanh", source, "(float64[:, :, :]) jvp")] == "pass"
    assert verdicts[("numpy.sin", source, "(float64[:, :, :]) jvp")] == "pass"


@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_a_key_the_shipped_status_passes_is_not_checked_again(source):
    choice.forget()
    assert rb.REGISTRY.shipped_status("numpy.tanh", source, "(float64[:]) jvp") == "pass"
    rb.jvp(np.tanh, (X,), (V,), source=source)
    assert not choice.verdicts()


def test_a_pushforward_the_shipped_status_fails_is_never_used():
    # autograd's JVP of sum ignores `initial` (its tangent adds it): the matrix's jvp column
    # found it, and forward mode pushes the tangent through the verified pullback instead
    x, v = X.reshape(2, 3), V.reshape(2, 3)
    key = "(float64[:, :], initial=<float>) jvp"
    assert rb.REGISTRY.shipped_status("numpy.sum", "autograd", key) == "fail"
    rule = rb.lookup(np.sum, rb.signature_of((x,)), source="autograd")
    wrong = rule.jvp((np.sum(x, initial=2.0), (x,), {"initial": 2.0}), (v,), (0,))
    assert not np.isclose(wrong, np.sum(v))
    _, ydot = rb.jvp(lambda x: np.sum(x, initial=2.0), (x,), (v,), source="autograd")
    np.testing.assert_allclose(ydot, np.sum(v), rtol=1e-13)


def test_a_configuration_is_part_of_the_pushforward_s_key():
    choice.forget()
    a = np.random.default_rng(3).standard_normal((2, 3, 4))  # keys the matrix does not check
    for axis in (0, 1):
        rb.jvp(lambda m: np.sum(m, axis=axis), (a,), (a,), source="jax")
    keys = [k for (name, source, k) in choice.verdicts() if name == "numpy.sum"]
    assert len(keys) == 2 and any("axis=0" in k for k in keys) and any("axis=1" in k for k in keys)


class WrongPushforward(rb.Adapter):
    """A right pullback beside a wrong pushforward (d sinh = sinh): the check must catch it."""

    name = "wrong-pushforward"

    def version(self):
        return "1"

    def functions(self):
        return [np.sinh]

    def signatures(self, function):
        return ["(float64[...])"]

    def build_rule(self, function, signature):
        rb.decline_unsupported(signature, dtypes=(np.dtype(np.float64),))

        def forward(args, kwargs):
            return np.sinh(args[0]), args[0]

        def pullback(x, g, argnums):
            return (g * np.cosh(x),)

        def jvp(x, tangents, argnums):
            return tangents[0] * np.sinh(x)  # the slip

        return rb.Rule(function, signature, forward, pullback, source=self.name, jvp=jvp)


@pytest.fixture
def wrong_pushforward():
    rb.register_adapter(WrongPushforward())
    choice.forget()
    yield
    rb.REGISTRY.unregister(WrongPushforward.name)
    choice.forget()


def test_a_wrong_pushforward_is_never_used(wrong_pushforward):
    _, ydot = rb.jvp(np.sinh, (X,), (V,), source="wrong-pushforward")
    np.testing.assert_allclose(ydot, np.cosh(X) * V, rtol=1e-12)  # through the pullback
    assert choice.verdicts()[("numpy.sinh", "wrong-pushforward", "(float64[:]) jvp")] \
        == "fail"
    jac = rb.jacfwd(np.sinh, source="wrong-pushforward")(X)
    np.testing.assert_allclose(jac, np.diag(np.cosh(X)), rtol=1e-12)


def test_trust_uses_a_pushforward_unchecked(wrong_pushforward):
    with rb.trust():
        _, ydot = rb.jvp(np.sinh, (X,), (V,), source="wrong-pushforward")
    np.testing.assert_allclose(ydot, np.sinh(X) * V)  # what the user asked for: unchecked
    assert not choice.verdicts()


def test_without_a_pushforward_a_large_output_is_refused_naming_the_function():
    a = np.eye(80) * 3.0
    b = np.ones((80, 60))  # 4,800 entries: more pullbacks than forward mode makes
    assert b.size > MAX_PULLBACKS
    rule = rb.lookup(np.linalg.solve, rb.signature_of((a, b)), source="autograd")
    assert rule.jvp is None  # autograd registers no JVP for solve
    with pytest.raises(rb.NoRuleError, match=r"(?s)numpy\.linalg\.solve\(float64\[:, :\], "
                                             r"float64\[:, :\]\).*source='NAME'") as info:
        rb.jvp(lambda a: np.linalg.solve(a, b), (a,), (a,), source="autograd")
    assert "rulebridge.vjp" in str(info.value)


@pytest.mark.parametrize("holomorphic", [True, False])
def test_the_transposed_pullback_of_a_complex_function_matches_jax(holomorphic):
    rng = np.random.default_rng(4)
    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    zdot = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    function = np.exp if holomorphic else np.conjugate
    rule = rb.lookup(function, rb.signature_of((z,)), source="jax")
    out, residuals = rule.forward((z,), {})
    got = transposed(rule, residuals, (z,), {}, (0,), (zdot,), [out], False, "a test")
    with jax.enable_x64(True):
        _, ref = jax.jvp(jnp.exp if holomorphic else jnp.conjugate, (jnp.asarray(z),),
                         (jnp.asarray(zdot),))
    np.testing.assert_allclose(got, np.asarray(ref), rtol=1e-12)
    np.testing.assert_allclose(rule.jvp(residuals, (zdot,), (0,)), np.asarray(ref), rtol=1e-12)


@pytest.mark.parametrize("source", [None, "autograd", "jax"])
def test_complex_programs_against_jax(source):
    rng = np.random.default_rng(5)
    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    zdot = rng.standard_normal(4) + 1j * rng.standard_normal(4)

    def f(z, np_):
        return np_.sum(np_.abs(np_.exp(z) * z) ** 2) + np_.real(np_.sum(np_.sin(z)))

    _, ydot = rb.jvp(lambda z: f(z, np), (z,), (zdot,), source=source)
    with jax.enable_x64(True):
        _, ref = jax.jvp(lambda z: f(z, jnp), (jnp.asarray(z),), (jnp.asarray(zdot),))
    np.testing.assert_allclose(ydot, np.asarray(ref), rtol=1e-10)


def test_the_matrix_has_a_jvp_column_per_source():
    from rulebridge.checking import render
    from rulebridge.checking.matrix import Plan, check_function

    cells = check_function("numpy.tanh", Plan(("autograd", "jax"), ("float64",), 0))
    jvp = [c for c in cells if c["dtype"] == "jvp"]
    assert {c["source"] for c in jvp} == {"autograd", "jax"}
    assert all(c["status"] == "pass" and c["key"].endswith(" jvp") for c in jvp)
    matrix = {"versions": {}, "seed": 0, "sources": ["autograd", "jax"], "dtypes": ["float64"],
              "cells": cells}
    text = render.to_markdown(matrix)
    assert "| function | autograd float64 | autograd jvp | jax float64 | jax jvp |" in text
    assert [row["pass jvp"] for row in render.summary(matrix)] == [1, 1]


def test_debug_mode_hands_a_pushforward_its_rule_s_own_residuals(wrong_pushforward):
    # trusted unchecked, the (wrong) pushforward is what runs: it must get its own residuals
    # through debug mode's wrapper, not fall back to the pullback because it got the wrapper's
    with rb.trust(), rb.debug():
        _, ydot = rb.jvp(np.sinh, (X,), (V,), source="wrong-pushforward")
    np.testing.assert_allclose(ydot, np.sinh(X) * V)

"""Rule selection lives in one module (rulebridge/rules/selection.py): key -> candidates ->
status -> rank -> check at first use -> fallback, with the mode (vjp, jvp, gradgrad) as a
parameter. The steps are the ones the engine uses, and a mode whose first-use check is not
installed never uses an unverified derivative: the answer stays right (against JAX) or the
call is refused naming the function and source."""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules import selection
from rulebridge.rules.registry import REGISTRY

jax.config.update("jax_enable_x64", True)

ROOT = pathlib.Path(rb.__file__).parent
X3 = np.random.default_rng(7).standard_normal((1, 2, 3))  # a key the matrix does not check
V3 = np.random.default_rng(8).standard_normal((1, 2, 3))


def test_the_key_text_names_the_traced_arguments_and_the_mode():
    signature = rb.signature_of((X3,))
    assert selection.key_text(signature) == "(float64[:, :, :])"
    assert selection.key_text(signature, mode=selection.JVP) == "(float64[:, :, :]) jvp"
    assert selection.key_text(signature, traced=(0,), mode=selection.GRADGRAD) == \
        "(float64[:, :, :]) traced in argument 0 gradgrad"


def test_the_steps_choose_the_rule_the_engine_records():
    signature = rb.signature_of((np.ones(4),))
    found = selection.candidates(REGISTRY, np.tanh, signature)
    assert [source for source, _, _ in found] == [str(s) for s in REGISTRY.order(np.tanh)]
    rules = [rule for _, rule, _ in found if rule is not None]
    assert rules and all(rule.status == "pass" for rule in rules)  # the shipped matrix's
    ranked = sorted(rules, key=selection.ranking(REGISTRY, np.tanh))
    chosen = selection.resolve(REGISTRY, np.tanh, signature, None)
    assert chosen.source == ranked[0].source
    _, tape = rb.trace(lambda x: np.sum(np.tanh(x)), np.ones(4))
    assert tape.ops[0].rule.source == chosen.source
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(np.tanh(x)))(np.ones(4)),
                               1 - np.tanh(np.ones(4)) ** 2, rtol=1e-14)


def test_the_fallbacks_are_the_other_sources_in_preference_order():
    signature = rb.signature_of((np.ones(4),))
    first = REGISTRY.lookup(np.tanh, signature, "autograd")
    others = [rule.source for rule in selection.fallbacks(REGISTRY, first, ())]
    assert others == [str(s) for s in REGISTRY.order(np.tanh) if s != "autograd"]
    for rule in selection.fallbacks(REGISTRY, first, ()):
        _, residuals = rule.forward((np.ones(4),), {})
        (cotangent,) = rule.pullback(residuals, np.ones(4), (0,))
        np.testing.assert_allclose(cotangent, 1 - np.tanh(1.0) ** 2, rtol=1e-14)


@pytest.fixture
def without(request):
    """The first-use check of one mode taken away, as the engine alone has none."""
    mode = request.param
    check = selection._checks[mode]
    selection.install_check(mode, None)
    selection.forget()
    yield mode
    selection.install_check(mode, check)
    selection.forget()


@pytest.mark.parametrize("without", [selection.JVP], indirect=True)
@pytest.mark.parametrize("source", ["autograd", "jax"])
def test_with_no_jvp_check_an_unverified_pushforward_is_not_used(without, source):
    rule = REGISTRY.lookup(np.sin, rb.signature_of((X3,)), source)
    jvp, why = selection.pushforward(REGISTRY, rule, (X3,), {}, (0,))
    assert jvp is None and "no check of jvp rules is installed" in why
    _, ydot = rb.jvp(lambda x: np.tanh(np.sin(x)), (X3,), (V3,), source=source)
    _, want = jax.jvp(lambda x: jnp.tanh(jnp.sin(x)), (X3,), (V3,))
    np.testing.assert_allclose(ydot, want, rtol=1e-12)  # the pullback, transposed
    assert not selection.verdicts(selection.JVP)


@pytest.mark.parametrize("without", [selection.GRADGRAD], indirect=True)
def test_with_no_gradgrad_check_a_compiled_pullback_is_refused_by_name(without):
    with pytest.raises(rb.NestedDifferentiationError) as info:
        rb.hessian(np.sin, source="jax")(np.array(0.7))
    message = str(info.value)
    assert "numpy.sin" in message and "jax" in message
    assert "no check of gradgrad rules is installed" in message


def test_with_the_gradgrad_check_a_compiled_pullback_agrees_with_jax():
    selection.forget()
    got = rb.hessian(lambda x: np.sum(np.sin(x) * x), source="jax")(X3)
    want = jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x))(X3)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_no_other_module_ranks_candidates_or_decides_a_mode():
    gone = [ROOT / "forward" / "choice.py", ROOT / "rules" / "pullback_rules.py"]
    assert not any(path.exists() for path in gone)
    for path in ROOT.rglob("*.py"):
        if path.name == "selection.py":
            continue
        text = path.read_text()
        for name in ("def _resolve(self", "def _ranking(", "def _other_rules(",
                     "VERDICTS: dict"):
            assert name not in text, f"{path} defines {name!r}: rule selection is selection.py's"

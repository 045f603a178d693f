"""The matrix's second-order column, "gradgrad" (PyTorch OpInfo's): per source, the nested
differentiation of a rule's pullback against central differences of the pullback itself, keyed
"<key> gradgrad"; the engine trusts a JAX pullback offered as a rule where that column passes,
and `rulebridge.lookup` shows it."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.checking import gradgrad
from rulebridge.checking.matrix import Plan, check_function
from rulebridge.higher import check_gradgrad

from tests.support.adapters import Compiled
from tests.support.preferred import preferred

PLAN = Plan(("autograd", "jax"), ("float64",), 0, (), check_gradgrad)


def cells(name, plan=PLAN):
    return {(c["source"], c["key"]): c for c in check_function(name, plan)
            if c["dtype"] == "gradgrad"}


@pytest.mark.parametrize("name", ["numpy.sin", "numpy.linalg.solve", "numpy.matmul"])
def test_every_source_has_a_passing_gradgrad_cell_at_the_first_case(name):
    found = cells(name)
    assert {source for source, _ in found} == {"autograd", "jax"}, found
    for (source, key), cell in found.items():
        assert key.endswith(" gradgrad") and cell["status"] == "pass", cell


def test_without_a_second_order_check_there_is_no_column():
    assert cells("numpy.sin", Plan(("jax",), ("float64",), 0, ())) == {}


def test_a_rule_that_offers_no_rule_for_its_compiled_pullback_is_not_passed():
    # a compiled pullback offering no rule of its own (JAX's one-triangle readers were the
    # shipped example until they offered one); a pullback is never passed unchecked
    x = np.array([0.3, -1.2, 0.8])
    with preferred(np.sin, Compiled("compiled_gg_none", None)) as name:
        result = check_gradgrad(np.sin, (x,), {}, (0,), name)
    assert result.status == "error", result
    assert "offers no rule for its pullback" in result.reason, result


def test_a_wrong_second_order_rule_fails_its_gradgrad_check():
    x = np.array([0.3, -1.2, 0.8])
    with preferred(np.sin, Compiled("compiled_gg", "wrong")) as name:
        result = check_gradgrad(np.sin, (x,), {}, (0,), name)
        assert result.status == "fail", result
        with preferred(np.sin, Compiled("compiled_gg_right", "right")) as right:
            assert check_gradgrad(np.sin, (x,), {}, (0,), right).status == "pass"


def test_the_shipped_gradgrad_verdict_settles_the_key_without_a_check(monkeypatch):
    # where the shipped status passes "<key> gradgrad", the engine records JAX's second-order
    # op without checking it at the user's values (and checks where it does not)
    x = np.array([0.3, -1.2, 0.8])
    shipped = rb.REGISTRY.shipped_status("numpy.sin", "jax", "(float64[:]) gradgrad")
    assert shipped == "pass"
    gradgrad.forget()
    calls = []
    monkeypatch.setattr(gradgrad, "check_call", lambda *a, **k: calls.append(a))
    h = rb.hessian(lambda x: np.sum(np.sin(x)), source="jax")(x)
    np.testing.assert_allclose(h, np.diag(-np.sin(x)), rtol=1e-12, atol=1e-15)
    assert calls == []


def test_lookup_knows_the_modes():
    found = rb.lookup(np.sin, np.ones(3))
    modes = {v.source: v.modes for v in found.verdicts if v.status != "no rule"}
    assert modes["jax"]["gradgrad"] == "pass" and modes["autograd"]["gradgrad"] == "pass"
    assert modes["jax"]["jvp"] == "pass"
    assert "gradgrad pass" in str(found)


def test_a_whole_run_keeps_the_second_order_check():
    # `run` narrows the plan to the sources it found: the gradgrad check must survive that
    from rulebridge.checking.matrix import run

    with preferred(np.sin, Compiled("compiled_run", "right")) as name:
        outcome = run(Plan((name,), ("float64",), 0, (), check_gradgrad), jobs=1)
    found = [c for c in outcome.matrix["cells"] if c["dtype"] == "gradgrad"]
    assert [(c["function"], c["status"]) for c in found] == [("numpy.sin", "pass")], found

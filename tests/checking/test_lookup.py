"""`rulebridge.lookup(f, *args, **kwargs)` and `rulebridge lookup "CALL"`: is this call
verified? Each source's verdict at the call's key, as the registry's rule choice sees it."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rulebridge as rb
from rulebridge import cli
from rulebridge.scipy import stats

X = np.random.default_rng(0).standard_normal((3, 3))


def _verdict(found: rb.Lookup, source: str) -> rb.Verdict:
    return next(v for v in found.verdicts if v.source == source)


def test_cumprod_along_axis_0_is_not_in_the_shipped_matrix_but_its_neighbours_are():
    found = rb.lookup(np.cumprod, X, axis=0)
    assert found.key == "(float64[:, :], axis=0)" and not found.verified
    assert _verdict(found, "jax").status == "unchecked"  # checked at the first call
    assert _verdict(found, "autograd").status == "no rule"
    assert found.used == "jax"
    nearby = found.nearby["jax"]
    assert nearby["(float64[:, :], axis=1)"] == "pass"
    assert nearby["(float64[:, :])"] == "pass"  # axis=None is the default: the plain key
    text = str(found)
    assert "numpy.cumprod(float64[:, :], axis=1): jax pass" in text
    assert "first call checks the jax rule" in text


def test_a_key_the_matrix_verified_is_verified_and_spelled_like_the_engine_keys_it():
    by_keyword = rb.lookup(np.cumprod, X, axis=1)
    assert by_keyword.verified and by_keyword.used == "jax"
    assert _verdict(by_keyword, "jax").origin == "the shipped matrix"
    assert rb.lookup(np.cumprod, X, 1).key == by_keyword.key  # positional: one key
    assert "<- this call" in str(by_keyword)


def test_the_source_lookup_names_is_the_one_a_call_uses():
    found = rb.lookup(np.linalg.eigh, X @ X.T)
    _, tape = rb.trace(lambda a: np.linalg.eigh(a)[0], X @ X.T)
    assert found.verified and tape.ops[0].rule.source == found.used


def test_eigh_carries_its_repeated_eigenvalue_caveat():
    found = rb.lookup(np.linalg.eigh, X @ X.T)
    assert any("repeated eigenvalue" in caveat for caveat in found.caveats)
    assert "repeated eigenvalue" in str(found)


def test_a_kink_shows_each_sources_convention():
    found = rb.lookup(np.abs, np.ones(3))
    (caveat,) = [c for c in found.caveats if "abs at 0" in c]
    assert "autograd [0, 1]" in caveat and "jax [1, 1]" in caveat


def test_a_drop_in_answers_with_the_sources_it_really_imports():
    x = np.linspace(0.5, 2.0, 4)
    found = rb.lookup(stats.gamma.logpdf, x, 2.0, 0.0, 1.0)
    assert found.function == "scipy.stats.gamma.logpdf"
    offered = {v.source for v in found.verdicts if v.status != "no rule"}
    assert offered == set(stats.gamma.logpdf.sources)
    assert found.used in offered


def test_the_signature_form_still_returns_the_rule_with_a_deprecation_warning():
    signature = rb.signature_of((np.ones(3),))
    with pytest.warns(DeprecationWarning, match="rule_for"):
        rule = rb.lookup(np.sin, signature, "autograd")
    assert isinstance(rule, rb.Rule) and rule.source == "autograd"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rb.rule_for(np.sin, signature, "autograd").source == "autograd"
    # a call whose first argument is a tuple of arrays is a call, not a signature
    assert isinstance(rb.lookup(np.concatenate, (np.ones(2), np.ones(3))), rb.Lookup)


def test_the_command_evaluates_a_call_spelled_with_types(capsys):
    assert cli.main(["lookup", "np.cumprod(float64[:, :], axis=0)"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("numpy.cumprod(float64[:, :], axis=0): not verified")
    assert cli.main(["lookup", "scipy.stats.norm.logpdf(float64[:], float64, float64)"]) == 0
    assert capsys.readouterr().out.startswith("scipy.stats.norm.logpdf(float64[:], float64, "
                                              "float64)")


def test_the_command_says_how_to_spell_an_unknown_name(capsys):
    assert cli.main(["lookup", "np.cumprod(x, axis=0)"]) == 2
    err = capsys.readouterr().err
    assert "spell each array by its type, as float64[:, :]" in err
    # the fix is the user's own call respelled, ready to paste
    assert 'rulebridge lookup "np.cumprod(float64[:, :], axis=0)"' in err
    assert cli.main(["lookup", "np.cumprod(float64[:, :], axis=0)"]) == 0
    assert cli.main(["lookup", "np.cumprod"]) == 2

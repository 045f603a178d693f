"""Drop-ins follow the same policy as NumPy functions (issue 22, section 5): with source=None,
when one source's imported rule fails its first-use check the next source that passes is used; a
drop-in takes what SciPy takes (Python lists); errors name what works; `rulebridge.lookup` sees
a drop-in's rules. References: central differences of SciPy's own function."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import rulebridge as rb
import rulebridge.scipy.linalg as rlinalg
import rulebridge.scipy.special as rspecial
import rulebridge.scipy.stats as rstats

from tests.support.numerical import central_difference

RNG = np.random.default_rng(5)


def _matches_scipy(program, reference, args, argnum=0, rtol=1e-6):
    g = rb.grad(program, argnums=argnum)(*args)
    expected = central_difference(reference, args, argnum)
    np.testing.assert_allclose(g, expected, rtol=rtol, atol=1e-8)


def test_chi2_logpdf_in_its_degrees_of_freedom_uses_the_source_that_passes():
    x = np.array([0.7, 1.9, 3.2])
    _matches_scipy(lambda x, d: np.sum(rstats.chi2.logpdf(x, d)),
                   lambda x, d: np.sum(scipy.stats.chi2.logpdf(x, d)), (x, 2.5), argnum=1)


def test_gamma_logpdf_with_a_scale_uses_the_source_that_passes():
    x = np.array([0.7, 1.9, 3.2])
    _matches_scipy(lambda x: np.sum(rstats.gamma.logpdf(x, 2.0, scale=1.5)),
                   lambda x: np.sum(scipy.stats.gamma.logpdf(x, 2.0, scale=1.5)), (x,))


def test_logsumexp_in_its_weights_uses_the_source_that_passes():
    a, b = RNG.normal(size=4), RNG.uniform(0.5, 2.0, size=4)
    _matches_scipy(lambda a, b: rspecial.logsumexp(a, b=b),
                   lambda a, b: scipy.special.logsumexp(a, b=b), (a, b), argnum=1)


def test_a_drop_in_takes_a_python_list_as_scipy_does():
    a = RNG.normal(size=(3, 3)) + 3.0 * np.eye(3)
    _matches_scipy(lambda m: np.sum(rlinalg.solve(m, [1.0, 2.0, 3.0]) ** 2),
                   lambda m: np.sum(scipy.linalg.solve(m, [1.0, 2.0, 3.0]) ** 2), (a,))


def test_a_drop_in_takes_a_list_of_traced_scalars_as_scipy_does():
    def f(p):
        return rspecial.logsumexp([p[0], 2.0 * p[1], p[0] * p[1]])

    def reference(p):
        return scipy.special.logsumexp([p[0], 2.0 * p[1], p[0] * p[1]])

    p = np.array([0.3, -0.4])
    _matches_scipy(f, reference, (p,))


def test_a_drop_in_error_does_not_suggest_what_a_drop_in_user_cannot_pass():
    # complex solve_triangular with trans=2: where no source passes, the error names each
    # source's result and never suggests import_rule's check=False
    a = np.triu(RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))) + 3.0 * np.eye(3)
    b = RNG.normal(size=3) + 1j * RNG.normal(size=3)

    def f(m):
        return np.real(np.sum(rlinalg.solve_triangular(m, b, trans=2) ** 2))

    try:
        g = rb.grad(f)(a)
    except rb.RulebridgeError as exc:
        assert "check=False" not in str(exc), str(exc)
        return
    re = central_difference(lambda x: np.real(np.sum(scipy.linalg.solve_triangular(
        x + 1j * a.imag, b, trans=2) ** 2)), (a.real,))
    np.testing.assert_allclose(g.real, re, rtol=1e-6, atol=1e-8)


def test_lookup_sees_a_drop_in_s_rules():
    # in a fresh process: a drop-in imports its rules at its first traced call, and lookup
    # said no source had one before that
    program = ("import numpy as np, rulebridge as rb, rulebridge.scipy.stats as stats\n"
               "x = np.array([0.7, 1.9])\n"
               "rule = rb.lookup(stats.gamma.logpdf, rb.signature_of((x, 2.0)), 'jax')\n"
               "print(rule.source, rule.missing)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert out.stdout.split() == ["jax", "False"], out.stderr[-2000:]


def test_a_drop_in_asked_before_its_first_traced_call_has_its_rules():
    # in a fresh process, with no traced call before: check_rule, rule_for and check_rule with
    # source=None each ask for a drop-in's rule first (check_rule said "autograd has no VJP
    # registered for scipy.stats.dirichlet.logpdf", which it has)
    program = (
        "import numpy as np, rulebridge as rb, rulebridge.scipy.stats as stats\n"
        "x, a = np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 3.0])\n"
        "r = rb.check_rule(stats.dirichlet.logpdf, x, a, argnums=(0, 1), source='autograd')\n"
        "print(r.passed, r.source)\n"
        "rule = rb.rule_for(stats.gamma.logpdf, rb.signature_of((x, 2.0)), source='autograd')\n"
        "print(rule.source, rule.missing)\n"
        "r = rb.check_rule(stats.beta.logpdf, np.array([0.3, 0.6]), 2.0, 3.0)\n"
        "print(r.passed)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert out.stdout.split() == ["True", "autograd", "autograd", "False", "True"], \
        out.stdout + out.stderr[-2000:]


def test_a_named_source_that_fails_for_a_drop_in_says_which_other_source_has_a_rule():
    x = np.array([0.7, 1.9, 3.2])
    with pytest.raises(rb.RulebridgeError) as info:
        rb.grad(lambda d: np.sum(rstats.chi2.logpdf(x, d)), source="autograd")(2.5)
    text = str(info.value)
    assert "source='jax'" in text and "check=False" not in text, text

"""Right or raise: a rule is used only at a key it was verified at, or after it passed a check
at the user's own inputs; a rule that fails or raises there is never used."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rulebridge as rb
from rulebridge import Rule

from tests.support.numerical import central_difference
from tests.support.preferred import preferred
from tests.support.adapters import SignFlippedSin as SignFlipped

RNG = np.random.default_rng(15)
X = RNG.normal(size=5)
MASK = np.array([True, False, True, True, False])
TALL = RNG.normal(size=(4, 3))
SQUARE = RNG.normal(size=(3, 3))
V3 = RNG.normal(size=3)
BATCH = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)

# Each: a scalar program in plain NumPy and its argument. On today's engine each came back
# silently wrong or crashed inside one source's rule while another source had a working one.
PROGRAMS = {
    "sum where": (lambda a: np.sum(np.sin(a), where=MASK), X),
    "std correction": (lambda a: np.std(a, correction=1), X),
    "var ddof by keyword": (lambda a: np.var(a, ddof=1), X),
    "norm ord=inf keyword": (lambda a: np.linalg.norm(a, ord=np.inf), X),
    "norm ord=inf positional": (lambda a: np.linalg.norm(a, np.inf), X),
    "svd default full_matrices": (lambda a: np.sum(np.linalg.svd(a)[1]), TALL),
    "pad": (lambda a: np.sum(np.pad(a, 2) ** 2 * np.arange(9.0)), X),
    "diff prepend": (lambda a: np.sum(np.diff(a, prepend=0) ** 2), X),
    "einsum diagonal": (lambda a: np.einsum("ii,i->", a, V3), SQUARE),
    "trace axis1": (lambda a: np.sum(np.trace(a, axis1=1, axis2=0) ** 2), BATCH),
    "cumsum dtype": (lambda a: np.sum(np.cumsum(a, dtype=np.float64) ** 2), X),
    "concatenate axis=None": (lambda a: np.sum(np.concatenate([a, 2 * a[:2]], axis=None) ** 2),
                              X),
    "batched solve": (lambda a: np.sum(np.linalg.solve(a, V3) ** 2), BATCH),
    "max where initial": (lambda a: np.max(a * 3.0, where=MASK, initial=0), X),
}


# Where no installed source has a rule that passes (both raise for the derivative of svd's
# full_matrices=True factors), the program must raise, naming each source's result.
RAISES = {"svd default full_matrices"}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_the_issue_s_programs_come_out_right_or_raise_clearly(name):
    f, x = PROGRAMS[name]
    if name in RAISES:
        with pytest.raises(rb.UnverifiedRuleError, match=r"(?s)autograd: error.*jax: error"):
            rb.grad(f)(x)
        return
    np.testing.assert_allclose(rb.grad(f)(x), central_difference(f, (x,)), rtol=1e-5,
                               atol=1e-7)


class Raising(rb.Adapter):
    """A source whose pullback raises, as autograd's do on keywords they do not handle."""

    name = "raising"
    pullbacks = 0

    def functions(self):
        return [np.sin]

    def build_rule(self, function, signature):
        def pullback(residuals, g, argnums):
            Raising.pullbacks += 1
            raise TypeError("grad_sin() got an unexpected keyword argument")

        return Rule(np.sin, signature, rb.CallForward(np.sin), pullback, source=self.name)


@pytest.fixture
def adapter(request):
    with preferred(np.sin, request.param()) as name:
        yield name


# Keys no shipped status covers, one per adapter: a verdict is kept per process and key.
UNCOVERED = {"sign-flipped-sin": RNG.normal(size=(2, 1, 2, 1, 2)),
             "raising": RNG.normal(size=(2, 1, 2, 2)).astype(np.float32)}


@pytest.mark.parametrize("adapter", [SignFlipped, Raising], indirect=True)
def test_a_preferred_source_that_fails_at_first_use_is_passed_over(adapter):
    x = UNCOVERED[adapter]
    g = rb.grad(lambda x: np.sum(np.sin(x)))(x)
    np.testing.assert_allclose(g, np.cos(x))
    verdicts = rb.REGISTRY.checked("numpy.sin", rb.format_signature(rb.signature_of((x,))))
    # a wrong gradient fails the key; a rule that raised is passed over for this call only
    assert verdicts.get(adapter) == ("fail" if adapter == SignFlipped.name else None)
    assert "pass" in verdicts.values()


@pytest.mark.parametrize("adapter", [SignFlipped, Raising], indirect=True)
def test_a_named_source_that_fails_raises_naming_function_key_result_and_fix(adapter):
    x = UNCOVERED[adapter][..., None]
    with pytest.raises(rb.UnverifiedRuleError) as info:
        rb.vjp(np.sin, x, source=adapter)
    message = str(info.value)
    assert f"numpy.sin{rb.format_signature(rb.signature_of((x,)))}" in message
    assert adapter in message and ("finite differences" in message or "raised" in message)
    assert "rulebridge.trust" in message and "source=" in message
    # a failure is kept: the next call says so without checking again; a rule that raised
    # decided nothing about the key, and the next call's inputs are checked again
    kept = f"{adapter}: its rule .* earlier in this process"
    with pytest.raises(rb.NoRuleError, match=kept if adapter == SignFlipped.name else
                       "could not be checked at these inputs"):
        rb.vjp(np.sin, x, source=adapter)


@pytest.mark.parametrize("adapter", [Raising], indirect=True)
def test_first_use_results_are_cached_per_process(adapter):
    x = UNCOVERED[adapter][None, None]
    f = rb.grad(lambda x: np.sum(np.sin(x)))
    f(x)
    before = Raising.pullbacks
    f(x)
    assert Raising.pullbacks == before  # not checked again, and the raising rule never used


@pytest.mark.parametrize("adapter", [SignFlipped], indirect=True)
def test_trust_uses_an_unverified_rule_unchecked_as_the_user_asked(adapter):
    x = UNCOVERED[adapter][None, None]
    with rb.trust():
        _, pullback = rb.vjp(np.sin, x, source=adapter)
        np.testing.assert_allclose(pullback(np.ones_like(x))[0], -np.cos(x))  # as asked for
    with pytest.raises(rb.UnverifiedRuleError):  # and only inside the block
        rb.vjp(np.sin, x, source=adapter)


def test_a_shipped_verified_key_is_not_checked_again():
    x = np.linspace(0.1, 1.0, 5)
    rule = rb.rule_for(np.sin, rb.signature_of((x,)))
    assert rule.status == "pass" and type(rule) is Rule


def test_a_float32_result_is_checked_at_float32_s_tolerance():
    # x.astype(np.float32) on float64 inputs: finite differences of a float32 result carry its
    # rounding, so a float64 tolerance would call a right rule undecidable at every input
    x = RNG.normal(size=(3, 4, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", rb.UncheckedRuleWarning)
        g = rb.grad(lambda a: np.sum(a.astype(np.float32) * np.float32(2.0)))(x)
    np.testing.assert_array_equal(g, np.full_like(x, 2.0))

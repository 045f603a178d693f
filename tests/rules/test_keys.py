"""The key a rule is trusted at: positional specs plus the call's static configuration, one key
per meaning whatever the spelling."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.keys import key_of, normalise

from tests.support.numerical import central_difference
from tests.support.preferred import preferred

X = np.linspace(-1.0, 1.0, 5)
A = np.arange(9.0).reshape(3, 3)
MASK = X > 0


@pytest.mark.parametrize("one, other", [
    ((np.linalg.norm, (X, np.inf), {}), (np.linalg.norm, (X,), {"ord": np.inf})),
    ((np.var, (A, 1), {}), (np.var, (A,), {"axis": 1})),  # NumPy's second parameter is axis
    ((np.pad, (X, 2, "reflect"), {}), (np.pad, (X,), {"mode": "reflect", "pad_width": 2})),
    ((np.sum, (A,), {"keepdims": True, "axis": 0}), (np.sum, (A, 0), {"keepdims": True})),
    ((np.cumsum, (X,), {"dtype": np.float32}), (np.cumsum, (X,), {"dtype": "float32"})),
    ((np.linalg.svd, (A, False), {}), (np.linalg.svd, (A,), {"full_matrices": False})),
])
def test_positional_and_keyword_spellings_are_one_key(one, other):
    assert key_of(one[0], *one[1], **one[2]) == key_of(other[0], *other[1], **other[2])
    # and the engine hands the rule one spelling
    a, b = normalise(*one), normalise(*other)
    assert a[0] == b[0] or all(x is y for x, y in zip(a[0], b[0]))
    assert list(a[1]) == list(b[1])


@pytest.mark.parametrize("calls", [
    [(np.sum, (A,), {}), (np.sum, (A,), {"where": A > 0}), (np.sum, (A,), {"axis": 0})],
    [(np.std, (X,), {}), (np.std, (X,), {"ddof": 1}), (np.std, (X,), {"correction": 1}),
     (np.std, (X,), {"ddof": 2})],
    [(np.linalg.norm, (X,), {}), (np.linalg.norm, (X, np.inf), {}),
     (np.linalg.norm, (X, -np.inf), {}), (np.linalg.norm, (X, 2.0), {}),
     (np.linalg.norm, (X, 1), {})],
    [(np.linalg.svd, (A,), {}), (np.linalg.svd, (A, False), {}),
     (np.linalg.svd, (A,), {"compute_uv": False})],
    [(np.einsum, ("ii,i->", A, X[:3]), {}), (np.einsum, ("ij,j->", A, X[:3]), {})],
    [(np.max, (X,), {}), (np.max, (X,), {"where": MASK, "initial": 0}),
     (np.max, (X,), {"initial": 0})],
    [(np.concatenate, ([X, X],), {}), (np.concatenate, ([X, X],), {"axis": None})],
    [(np.sum, (A,), {"axis": 0}), (np.sum, (A,), {"axis": 1}), (np.sum, (A,), {"axis": (0, 1)}),
     (np.sum, (A,), {"axis": 0, "keepdims": True})],
    [(np.fft.fft, (X,), {}), (np.fft.fft, (X, 8), {}), (np.fft.fft, (X,), {"norm": "ortho"})],
    [(np.cumsum, (X,), {}), (np.cumsum, (X,), {"dtype": np.float32})],
    [(np.diff, (X,), {}), (np.diff, (X,), {"prepend": 0}), (np.diff, (X,), {"append": X})],
])
def test_configurations_that_change_the_meaning_are_distinct_keys(calls):
    keys = [key_of(f, *args, **kwargs) for f, args, kwargs in calls]
    assert len(set(keys)) == len(keys), keys


@pytest.mark.parametrize("spelled, plain", [
    ((np.vstack, ([X, X],), {"dtype": None, "casting": "same_kind"}), (np.vstack, ([X, X],), {})),
    ((np.cumsum, (A,), {"axis": None}), (np.cumsum, (A,), {})),
    ((np.sum, (A,), {"axis": None, "keepdims": True}), (np.sum, (A,), {"keepdims": True})),
    ((np.linalg.norm, (X,), {"ord": None, "axis": None}), (np.linalg.norm, (X,), {})),
    ((np.linalg.svd, (A,), {"full_matrices": True, "compute_uv": True}), (np.linalg.svd, (A,), {})),
    ((np.linalg.eigh, (A,), {"UPLO": "L"}), (np.linalg.eigh, (A,), {})),
    ((np.concatenate, ([X, X],), {"axis": 0}), (np.concatenate, ([X, X],), {})),
])
def test_arguments_equal_to_their_defaults_are_the_default_key(spelled, plain):
    """The same call whether a default is spelled out or not: one key, one spelling."""
    assert key_of(spelled[0], *spelled[1], **spelled[2]) == key_of(plain[0], *plain[1], **plain[2])
    assert normalise(*spelled)[2] == normalise(*plain)[2]
    assert dict(normalise(*spelled)[1]) == dict(plain[2])


@pytest.mark.parametrize("call, default", [
    ((np.vstack, ([X, X],), {"casting": "unsafe"}), (np.vstack, ([X, X],), {})),
    ((np.vstack, ([X, X],), {"dtype": np.float64}), (np.vstack, ([X, X],), {})),
    # a value equal to the default but not of its type is not the default (True == 1)
    ((np.linalg.svd, (A,), {"full_matrices": 1}), (np.linalg.svd, (A,), {})),
    ((np.concatenate, ([X, X],), {"axis": False}), (np.concatenate, ([X, X],), {})),
])
def test_a_value_other_than_the_default_keeps_its_own_key(call, default):
    assert key_of(call[0], *call[1], **call[2]) != key_of(default[0], *default[1], **default[2])


def test_a_gradient_through_spelled_out_defaults_is_the_plain_calls():
    """np.vstack(xs, dtype=None, casting='same_kind') was an unverified key whose rules raised
    on the keywords (UnverifiedRuleError); it is np.vstack(xs)."""
    W = np.arange(6.0).reshape(2, 3)

    def loss(spelled):
        def f(x):
            stack = np.vstack([x, 2.0 * x], dtype=None, casting="same_kind") if spelled \
                else np.vstack([x, 2.0 * x])
            return np.sum(np.sin(stack) * W)
        return f

    for source in (None, "autograd", "jax"):
        np.testing.assert_array_equal(rb.grad(loss(True), source=source)(X[:3]),
                                      rb.grad(loss(False), source=source)(X[:3]))


def test_operands_count_by_type_so_a_loop_over_values_is_one_key():
    assert key_of(np.clip, X, 0.0, 1.0) == key_of(np.clip, X, -0.5, 0.25)
    assert key_of(np.multiply, X, 2.0) == key_of(np.multiply, X, 3.0)
    assert key_of(operator.getitem, X, 1) == key_of(operator.getitem, X, 3)
    assert key_of(np.sum, X, where=MASK) == key_of(np.sum, X, where=~MASK)


def test_a_key_reads_like_the_call():
    assert key_of(np.linalg.norm, X, np.inf) == "(float64[:], ord=inf)"
    assert key_of(np.einsum, "ii,i->", A, X[:3]) == "('ii,i->', float64[:, :], float64[:])"
    assert key_of(np.sum, X, where=MASK) == "(float64[:], where=<bool[:]>)"
    assert key_of(np.sin, X) == rb.format_signature(rb.signature_of((X,)))


def test_the_engine_hands_the_rule_one_spelling():
    seen = []

    class Recording(rb.Adapter):
        name = "recording-norm"

        def functions(self):
            return [np.linalg.norm]

        def build_rule(self, function, signature):
            def forward(args, kwargs):
                seen.append((len(args), dict(kwargs)))
                return function(*args, **kwargs), (args, kwargs)

            def pullback(residuals, g, argnums):
                (x, _), _ = residuals
                return (g * np.sign(x) * (np.abs(x) == np.max(np.abs(x))),)

            return rb.Rule(function, signature, forward, pullback, source=self.name)

    rb.register_adapter(Recording())
    try:
        with rb.trust():
            for f in (lambda x: np.linalg.norm(x, np.inf),
                      lambda x: np.linalg.norm(x, ord=np.inf)) * 2:  # then as cached
                rb.grad(f, source="recording-norm")(X)
    finally:
        rb.REGISTRY.unregister("recording-norm")
    assert seen == [(2, {})] * 4


def _settings_in_a_loop(a):
    """Calls of one shape (the same keywords, in the same order) with settings that differ in
    value, each repeated: every repeat must be keyed and spelled as its first call was."""
    total = 0.0
    for _ in range(3):
        total = total + np.sum(np.cumsum(a, axis=0) ** 2) + np.sum(np.cumsum(a, axis=1) ** 3)
        total = total + np.sum(np.sum(a, axis=0, keepdims=True) ** 2)
        total = total + np.sum(np.sum(a, 1, keepdims=True) ** 3)
        total = total + np.linalg.norm(a[0], ord=2) + np.linalg.norm(a[0], ord=np.inf)
        total = total + np.var(a, 1)[0] + np.var(a, ddof=1) + np.std(a, ddof=0)
        total = total + np.sum(np.diff(a, prepend=0.0, axis=0) ** 2)
        total = total + np.sum(np.diff(a, axis=1, prepend=0.5) ** 3)
    return total


def test_repeated_calls_of_one_shape_keep_each_settings_meaning():
    a = np.array([[0.3, -1.4, 2.2, 0.9], [1.1, 0.2, -0.7, 1.9], [-0.5, 0.8, 1.3, -2.6]])
    np.testing.assert_allclose(rb.grad(_settings_in_a_loop)(a),
                               central_difference(_settings_in_a_loop, (a,)), rtol=1e-6)


class AxisZeroCumsum(rb.Adapter):
    """np.cumsum whose pullback always reverses a cumsum along axis 0: right for axis=0 only,
    so trusting it at axis=1 because of a verdict at axis=0 gives a wrong gradient."""

    name = "axis-zero-cumsum"

    def functions(self):
        return [np.cumsum]

    def build_rule(self, function, signature):
        def pullback(residuals, g, argnums):
            return (np.flip(np.cumsum(np.flip(g, 0), 0), 0),)

        return rb.Rule(np.cumsum, signature, rb.CallForward(np.cumsum), pullback,
                       source=self.name)


@pytest.mark.parametrize("spelled", ["keyword", "position"])
def test_a_verdict_at_one_setting_is_never_reused_at_another_of_the_same_call_shape(spelled):
    def f(a):
        total = 0.0
        for axis in (0, 1, 0, 1):
            c = np.cumsum(a, axis=axis) if spelled == "keyword" else np.cumsum(a, axis)
            total = total + np.sum(c * np.arange(a.size).reshape(a.shape))
        return total

    a = np.linspace(-1.0, 1.0, 12).reshape(3, 4, 1)[..., 0][None]  # a key nothing else uses
    with preferred(np.cumsum, AxisZeroCumsum()):
        g = rb.grad(f)(a)
    np.testing.assert_allclose(g, central_difference(f, (a,)), rtol=1e-6, atol=1e-7)

"""The key a rule is trusted at: positional specs plus the call's static configuration, one key
per meaning whatever the spelling."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.keys import key_of, normalise

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
    [(np.sum, (X,), {}), (np.sum, (X,), {"where": MASK}), (np.sum, (X,), {"axis": None})],
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
            for f in (lambda x: np.linalg.norm(x, np.inf), lambda x: np.linalg.norm(x, ord=np.inf)):
                rb.grad(f, source="recording-norm")(X)
    finally:
        rb.REGISTRY.unregister("recording-norm")
    assert seen == [(2, {}), (2, {})]

"""`Rule.unary_vjp`: on `y = f(x)` ops the sweep calls the source's VJP itself instead of the
rule's pullback. It must give the pullback's gradient in every case the sweep meets: a cotangent
that does not conform goes to the pullback, keywords and several outputs never take it, stand-ins
and compacted residuals are never read by it, debug mode bypasses it, and rule checks compare it
with the pullback."""

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.registry import REGISTRY

from tests.support.numerical import central_difference

DERIVATIVES = {np.sin: np.cos, np.tanh: lambda x: 1 / np.cosh(x) ** 2,
               np.cumsum: None}  # cumsum: only ever called with axis= here


class CountingAdapter(rb.Adapter):
    """CallForward rules whose pullback and unary_vjp count their calls; `unary` picks what the
    unary VJP does: "right", "float64" (a cotangent of the wrong dtype for float32 arguments),
    "raise" or "wrong" (twice the right value)."""

    name = "counting"

    def __init__(self, unary="right", compact=False):
        self.unary, self.compact = unary, compact
        self.calls = {"pullback": 0, "unary_vjp": 0}

    def version(self):
        return "1.0"

    def functions(self):
        return [*DERIVATIVES, np.sum]

    def build_rule(self, function, signature):
        if function is np.sum:  # the end of every program here: a plain rule, not counted
            return rb.Rule(np.sum, signature, lambda args, kwargs: (np.sum(args[0]), args[0]),
                           lambda x, g, argnums: (np.full_like(x, g),), source=self.name)
        if function not in DERIVATIVES:
            raise rb.Declined("not counted")

        def pullback(residuals, g, argnums):
            self.calls["pullback"] += 1
            if type(residuals) is Compacted:
                return (g * residuals.derivative,)
            out, (x, *rest), kwargs = residuals
            if function is np.cumsum:  # axis by position: the one spelling rules see
                axis = rest[0] if rest else kwargs["axis"]
                return (np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis),)
            return ((g * DERIVATIVES[function](x)).astype(x.dtype),)

        def unary_vjp(out, x):
            self.calls["unary_vjp"] += 1
            if self.unary == "raise":
                raise FloatingPointError("the source's VJP broke")
            scale = 2.0 if self.unary == "wrong" else 1.0
            if function is np.cumsum:  # as if axis=0: wrong for the axis=1 call below
                return lambda g: np.flip(np.cumsum(np.flip(g, 0), axis=0), 0)
            if self.unary == "float64":
                return lambda g: np.asarray(g, np.float64) * DERIVATIVES[function](x)
            return lambda g: scale * g * DERIVATIVES[function](x)

        def compact(residuals, argnums):
            out, (x,), _ = residuals
            return Compacted(DERIVATIVES[function](x))

        forward = rb.CallForward(function, compact=compact if self.compact else None)
        return rb.Rule(function, signature, forward, pullback, source=self.name,
                       source_version=self.version(), unary_vjp=unary_vjp)


class Compacted:
    def __init__(self, derivative):
        self.derivative = derivative


@pytest.fixture
def counting():
    adapters = []

    def install(**behaviour):
        adapter = CountingAdapter(**behaviour)
        REGISTRY.unregister("counting")
        rb.register_adapter(adapter)
        adapters.append(adapter)
        return adapter

    with rb.trust():  # the sweep's own calls are counted here, not a check at first use
        yield install
    REGISTRY.unregister("counting")


def chain(x):
    return np.sum(np.tanh(np.sin(np.sin(x))))


def test_the_sweep_calls_unary_vjp_and_not_the_pullback(counting):
    adapter = counting()
    x = np.linspace(-1.0, 1.0, 6)
    g = rb.grad(chain, source="counting")(x)
    expected = np.cos(x) * np.cos(np.sin(x)) / np.cosh(np.sin(np.sin(x))) ** 2
    np.testing.assert_allclose(g, expected, rtol=1e-14)
    assert adapter.calls == {"pullback": 0, "unary_vjp": 3}


def test_a_cotangent_that_does_not_conform_goes_to_the_pullback(counting):
    adapter = counting(unary="float64")
    x = np.linspace(-1.0, 1.0, 6, dtype=np.float32)
    g = rb.grad(chain, source="counting")(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, central_difference(chain, (x.astype(np.float64),)),
                               rtol=1e-5)
    assert adapter.calls == {"pullback": 3, "unary_vjp": 3}


def test_an_exception_in_unary_vjp_names_the_rule(counting):
    counting(unary="raise")
    with pytest.raises(rb.RuleContractError, match=r"counting rule for numpy\.tanh.*broke"):
        rb.grad(chain, source="counting")(np.ones(3))


def test_calls_with_keywords_take_the_pullback(counting):
    """unary_vjp(out, x) cannot see axis=: the sweep must not call it on such an op."""
    adapter = counting()
    x = np.arange(1.0, 7.0).reshape(2, 3) / 5

    def f(a):
        return np.sum(np.sin(np.cumsum(a, axis=1)))

    g = rb.grad(f, source="counting")(x)
    np.testing.assert_allclose(g, central_difference(f, (x,)), rtol=1e-7)
    assert adapter.calls == {"pullback": 1, "unary_vjp": 1}  # cumsum's, sin's


@pytest.mark.parametrize("compact", [False, True])
def test_large_arrays_never_feed_it_a_stand_in(counting, compact):
    """Before a sweep, large traced arguments in Op.args become stand-ins of zeros, and an op
    whose forward can compact its residuals does: the sweep reads x from the residuals, and a
    compacted op goes to its pullback."""
    adapter = counting(compact=compact)
    x = np.linspace(-1.0, 1.0, 20_000)
    y, tape = rb.trace(chain, x, source="counting")
    g = rb.grad(chain, source="counting")(x)
    expected = np.cos(x) * np.cos(np.sin(x)) / np.cosh(np.sin(np.sin(x))) ** 2
    np.testing.assert_allclose(g, expected, rtol=1e-13)
    if compact:
        assert adapter.calls == {"pullback": 3, "unary_vjp": 0}
        tape.shed_large_values()
        assert all(type(op.residuals) is Compacted for op in tape.ops[:3])
    else:
        assert adapter.calls == {"pullback": 0, "unary_vjp": 3}


def test_debug_mode_checks_the_pullback_instead(counting):
    adapter = counting()
    with rb.debug():
        g = rb.grad(chain, source="counting")(np.linspace(-1.0, 1.0, 4))
    assert np.all(np.isfinite(g))
    assert adapter.calls["unary_vjp"] == 0 and adapter.calls["pullback"] == 3


def test_rule_checks_compare_it_with_the_pullback(counting):
    counting()
    x = np.linspace(-1.0, 1.0, 5)
    assert rb.check_rule(np.sin, x, source="counting").status == "pass"
    counting(unary="wrong")
    result = rb.check_rule(np.sin, x, source="counting")
    assert result.status == "error" and "unary_vjp" in result.reason


def test_autograd_rules_carry_autograds_own_maker():
    x = np.linspace(0.1, 1.0, 4)
    rule = rb.trace(np.sin, x, source="autograd")[1].ops[0].rule
    ybar = np.linspace(-1.0, 2.0, 4)
    np.testing.assert_array_equal(rule.unary_vjp(np.sin(x), x)(ybar), ybar * np.cos(x))


def test_two_contributions_that_are_one_array_both_count():
    """The add's pullback hands the same array to both of its arguments, and copy's VJP returns
    it as it is: x then receives one array object twice, which must count twice (found by
    tests/fuzz; the sweep once took the second for the first)."""
    def f(x):
        return np.sum((np.copy(x) + x) * np.array([0.5, -2.0]))

    np.testing.assert_array_equal(rb.grad(f, source="autograd")(np.array([1.0, 2.0])),
                                  [1.0, -4.0])


def test_rule_checks_refuse_it_beside_residuals_of_another_form():
    """unary_vjp reads CallForward's residuals; a rule whose forward keeps others is broken."""
    x = np.linspace(-1.0, 1.0, 5)
    rule = rb.Rule(np.sin, rb.signature_of((x,)),
                   lambda args, kwargs: (np.sin(args[0]), args[0]),
                   lambda x, g, argnums: (g * np.cos(x),), source="test",
                   unary_vjp=lambda out, x: lambda g: g * np.cos(x))
    result = rb.check_rule(rule, x)
    assert result.status == "error" and "CallForward's residuals" in result.reason

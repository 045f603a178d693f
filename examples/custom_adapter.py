"""Writing an adapter: a source of rules of your own, here two hand-written ones.

An adapter says which functions it covers and builds a `rulebridge.Rule` (a forward and a
pullback, optionally a pushforward for forward mode and a pullback rule for second derivatives)
for one function at one concrete signature, or declines. Register it in the process
with `rulebridge.register_adapter` (a distribution would declare an entry point in the group
`rulebridge.adapters` instead; see docs/adapter-contract.md), then check each rule against
finite differences with `rulebridge.check_rule` before trusting it.
"""

import numpy as np

import rulebridge
from rulebridge import Declined, Rule, conform_cotangent, decline_unsupported

# function -> its derivative: the pullback multiplies the output's cotangent by it
DERIVATIVES = {np.sinh: np.cosh, np.cosh: np.sinh}


class HyperbolicAdapter(rulebridge.Adapter):
    name = "hyperbolic"
    derivatives = DERIVATIVES

    def version(self) -> str:
        return "1.0"

    def functions(self):
        return list(self.derivatives)

    def signatures(self, function):
        return ["(float32[...] | float64[...])"] if function in self.derivatives else []

    def build_rule(self, function, signature):
        derivative = self.derivatives.get(function)
        if derivative is None:
            raise Declined(f"{self.name} has no rule for {rulebridge.function_name(function)}")
        if len(signature) != 1:
            raise Declined(f"{self.name} covers calls with one argument")
        decline_unsupported(signature, dtypes=(np.dtype(np.float32), np.dtype(np.float64)))

        def forward(args, kwargs):
            x = args[0]
            return function(x, **kwargs), x  # (NumPy's own value, what the pullback needs)

        def pullback(x, cotangent, argnums):
            return (conform_cotangent(cotangent * derivative(x), x),)

        def pushforward(x, tangents, argnums):
            # optional, for forward mode (rulebridge.jvp, jacfwd): the output's tangent
            return conform_cotangent(derivative(x) * tangents[0], x)

        def pullback_rule(x, cotangent, argnums):
            # optional, for second derivatives (rulebridge.hessian, grad of grad): under nesting
            # `pullback` runs on an enclosing differentiation's values and calls np.multiply,
            # which this source has no rule for; so the pullback is offered as a function of
            # flat arrays with a rule of its own, checked against central differences of it
            return rulebridge.PullbackCall(self.pullback_as_rule(function, x, cotangent),
                                           (x, cotangent), assemble=None)

        return Rule(function, signature, forward, pullback, source=self.name,
                    source_version=self.version(), jvp=pushforward, pullback_rule=pullback_rule)

    def pullback_as_rule(self, function, x, cotangent):
        """A Rule for (x, g) -> (g * f'(x),), the pullback of `function` as a function."""
        derivative = self.derivatives[function]
        # the derivative's own derivative, from the same table: sinh'' = cosh' = sinh
        second = self.derivatives[derivative]

        def pullback_function(x, g):
            return (g * derivative(x),)

        pullback_function.__rulebridge_name__ = f"pullback of {rulebridge.function_name(function)}"

        def pullback(residuals, cotangents, argnums):
            _, (x, g), _ = residuals  # a CallForward's residuals: (output, args, kwargs)
            gbar = cotangents[0] if cotangents[0] is not None else np.zeros_like(x)
            cts = {0: gbar * g * second(x), 1: gbar * derivative(x)}  # d/dx and d/dg
            return tuple(conform_cotangent(cts[i], (x, g)[i]) for i in argnums)

        # its signature is that of the values under any boxes (rulebridge.primal)
        signature = rulebridge.signature_of((rulebridge.primal(x), rulebridge.primal(cotangent)))
        return Rule(pullback_function, signature, rulebridge.CallForward(pullback_function),
                    pullback, source=self.name, source_version=self.version())


class MistakenAdapter(HyperbolicAdapter):
    """The same adapter with a classic slip: d/dx sinh(x) written as sinh(x)."""

    name = "mistaken"
    derivatives = {np.sinh: np.sinh, np.cosh: np.sinh}


def main(size=5, seed=0):
    rulebridge.register_adapter(HyperbolicAdapter())
    rulebridge.register_adapter(MistakenAdapter())
    assert {"hyperbolic", "mistaken"} <= set(rulebridge.adapters())
    x = np.random.default_rng(seed).normal(size=size)

    # each rule is checked against central differences of NumPy's own function
    for function in (np.sinh, np.cosh):
        result = rulebridge.check_rule(function, x, source="hyperbolic")
        assert result.status == "pass", result
    wrong = rulebridge.check_rule(np.sinh, x, source="mistaken")
    assert wrong.status == "fail", wrong  # the slip is caught before anyone trusts the rule
    print(wrong.describe())
    # the pushforwards are checked the same way: J xdot against central differences
    for source, expected in (("hyperbolic", "pass"), ("mistaken", "fail")):
        rule = rulebridge.rule_for(np.sinh, rulebridge.signature_of((x,)), source=source)
        assert rulebridge.check_pushforward(rule, (x,)).status == expected

    # and its rules differentiate programs like any other source's rules. With source=None a
    # rule verified by rulebridge's own matrix (autograd's or JAX's) would be chosen over these
    # unchecked ones; naming the source uses only this adapter.
    def program(x):
        return np.cosh(np.sinh(x))

    y, pullback = rulebridge.vjp(program, x, source="hyperbolic")
    xbar, = pullback(np.ones_like(y))
    assert np.array_equal(y, np.cosh(np.sinh(x)))  # the value is NumPy's, to the bit
    assert np.allclose(xbar, np.sinh(np.sinh(x)) * np.cosh(x), rtol=1e-12, atol=0)  # chain rule
    # forward mode pushes a tangent through the same rules (JAX's jvp convention)
    xdot = np.ones_like(x)
    y, ydot = rulebridge.jvp(program, (x,), (xdot,), source="hyperbolic")
    assert np.allclose(ydot, np.sinh(np.sinh(x)) * np.cosh(x) * xdot, rtol=1e-12, atol=0)
    # second derivatives: the pullbacks run again under an enclosing differentiation, through
    # the rule each pullback offers (checked first against central differences of the pullback)
    hessian = rulebridge.jacobian(rulebridge.elementwise_grad(program, source="hyperbolic"),
                                  source="hyperbolic")(x)
    s, c = np.sinh(x), np.cosh(x)  # d2/dx2 cosh(sinh x) = cosh(sinh x) cosh^2 x + sinh(sinh x) sinh x
    assert np.allclose(hessian, np.diag(np.cosh(s) * c ** 2 + np.sinh(s) * s), rtol=1e-12, atol=0)
    _, tape = rulebridge.trace(program, x, source="hyperbolic")
    assert [op.rule.source for op in tape.ops] == ["hyperbolic", "hyperbolic"]
    try:  # a source named explicitly is the only one asked, and it covers two functions
        rulebridge.grad(lambda z: np.sum(np.tanh(z)), source="hyperbolic")(x)
    except rulebridge.NoRuleError as error:
        assert "hyperbolic has no rule for numpy.tanh" in str(error), error
    else:
        raise AssertionError("np.tanh has no rule in this adapter, yet grad returned")
    print(tape)


if __name__ == "__main__":
    main()

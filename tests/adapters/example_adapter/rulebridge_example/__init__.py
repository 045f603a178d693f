"""An example rulebridge adapter with hand-written rules (see docs/adapter-contract.md).

Everything it needs is rulebridge's public API: `Adapter`, `Rule`, `Declined`,
`decline_unsupported` and `conform_cotangent`.
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

import rulebridge
from rulebridge import Declined, Rule, conform_cotangent, decline_unsupported

# function -> derivative, as a function of (x, output): the pullback multiplies the cotangent
# by it. Elementwise and unary, so a cotangent has its argument's shape already.
DERIVATIVES: dict[Callable, Callable] = {
    np.sin: lambda x, y: np.cos(x),
    np.cos: lambda x, y: -np.sin(x),
    np.exp: lambda x, y: y,
    np.tanh: lambda x, y: 1 - y * y,
    np.log1p: lambda x, y: 1 / (1 + x),
}


class ExampleAdapter(rulebridge.Adapter):
    name = "example"

    def version(self) -> str:
        return "0.1.0"

    def functions(self) -> Iterable[Callable]:
        return [*DERIVATIVES, np.sum]

    def signatures(self, function: Callable) -> list[str]:
        return ["(float32[...] | float64[...] | complex128[...])"] if function in self.functions() \
            else []

    def build_rule(self, function: Callable, signature: tuple) -> Rule:
        if function is np.sum and len(signature) <= 2:  # np.sum(x) or np.sum(x, axis)
            decline_unsupported(signature)
            return Rule(np.sum, signature, _sum_forward, _sum_pullback, source=self.name,
                        source_version=self.version(), notes="hand-written",
                        jvp=_sum_pushforward)
        derivative = DERIVATIVES.get(function)
        if derivative is None:
            name = rulebridge.function_name(function)
            raise Declined(f"the example adapter has no rule for {name}")
        if len(signature) != 1:
            raise Declined("the example adapter covers one-argument calls only")
        decline_unsupported(signature)

        def forward(args, kwargs):
            y = function(*args, **kwargs)  # NumPy's own value
            return y, (args[0], y)

        def pullback(residuals, g, argnums):
            x, y = residuals
            # pairings are bilinear (docs/adapter-contract.md), so for a holomorphic function
            # xbar = g * f'(x), with no conjugate
            return (conform_cotangent(g * derivative(x, y), x),)

        def pushforward(residuals, tangents, argnums):
            # forward mode (rulebridge.jvp): the output's tangent, ydot = f'(x) * xdot, of the
            # output's shape and dtype; NumPy code, so it runs on traced values too
            x, y = residuals
            return conform_cotangent(derivative(x, y) * tangents[0], y)

        return Rule(function, signature, forward, pullback, source=self.name,
                    source_version=self.version(), notes="hand-written", jvp=pushforward)


def _sum_forward(args, kwargs):
    # rulebridge hands a rule one spelling of a call: `axis` by position when it follows `x`
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    where = kwargs.get("where", True)
    return np.sum(*args, **kwargs), (args[0], axis, kwargs.get("keepdims", False), where)


def _sum_pullback(residuals, g, argnums):
    """Broadcast the cotangent back over the summed axes (`axis`, `keepdims` as NumPy has them),
    zero where `where` leaves elements out."""
    x, axis, keepdims, where = residuals
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return (conform_cotangent(np.where(where, np.broadcast_to(g, x.shape), 0), x),)


def _sum_pushforward(residuals, tangents, argnums):
    """The sum is linear: the output's tangent is the sum of the input's tangent."""
    x, axis, keepdims, where = residuals
    return np.sum(tangents[0], axis=axis, keepdims=keepdims, where=where)

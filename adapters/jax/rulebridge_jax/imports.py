"""`rulebridge.import_rule` from JAX: `scipy.special.logsumexp` -> `jax.scipy.special.logsumexp`,
or any JAX function given as `equivalent`, with the same jit-cached pullbacks as JAX's own rules.
"""

from __future__ import annotations

from functools import cached_property
from typing import Callable

import jax
import numpy as np

import rulebridge
from rulebridge import Rule, decline_unsupported, function_name

from .pullback import JitPullbacks, numpy_forward


class JaxImports(rulebridge.Adapter):
    """The import hooks of the JAX adapter (a base class of `JaxAdapter`)."""

    counterpart_namespaces = {"numpy": "jax.numpy", "scipy": "jax.scipy"}

    @cached_property
    def _imported_pullbacks(self) -> dict[tuple[Callable, Callable], JitPullbacks]:
        return {}

    def import_rule(self, function: Callable, signature: tuple, equivalent: Callable) -> Rule:
        decline_unsupported(signature)
        key = (function, equivalent)
        pullbacks = self._imported_pullbacks.get(key)
        if pullbacks is None:
            pullbacks = self._imported_pullbacks[key] = JitPullbacks(
                equivalent, function_name(function), numpy_function=function)
        return Rule(function, signature, numpy_forward(function), pullbacks.rule_pullback(),
                    source=self.name, source_version=jax.__version__,
                    pullback_rule=pullbacks.rule_pullback_rule(), pullback_takes_boxes=False)

    def evaluate(self, equivalent: Callable, args: tuple, kwargs: dict):
        with jax.enable_x64(True):  # float64 stays float64, as in the pullback
            out = _staged(equivalent, args, kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(np.asarray(item) for item in out)
        return np.asarray(out)


def _staged(equivalent: Callable, args: tuple, kwargs: dict):
    """`equivalent(*args, **kwargs)` compiled as one function of its array arguments (the others
    fixed): run op by op, JAX compiles each of its operations on its own, which made the
    comparison before an import's first use cost seconds (37 compilations, 2.9 s, for
    `multivariate_normal.logpdf` of a 20 x 20 covariance, against one of 0.6 s). A call JAX
    cannot stage (a Python branch on a value) runs op by op."""
    positions = [i for i, a in enumerate(args) if type(a) is np.ndarray]
    if not positions:
        return equivalent(*args, **kwargs)

    def of_arrays(*arrays):
        full = list(args)
        for i, a in zip(positions, arrays):
            full[i] = a
        return equivalent(*full, **kwargs)

    try:
        return jax.jit(of_arrays)(*(args[i] for i in positions))
    except Exception:  # not stageable; its own error, if any, comes from the call op by op
        return equivalent(*args, **kwargs)

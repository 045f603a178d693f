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
                    pullback_rule=pullbacks.rule_pullback_rule())

    def evaluate(self, equivalent: Callable, args: tuple, kwargs: dict):
        with jax.enable_x64(True):  # float64 stays float64, as in the pullback
            out = equivalent(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(np.asarray(item) for item in out)
        return np.asarray(out)

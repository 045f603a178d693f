"""JAX pushforwards compiled once and called many times, as the pullbacks are (pullback.py).

For one JAX function standing for one NumPy function, a `JitPushforwards` keeps one jitted
`(leaves, leaf tangents) -> output tangents` per static configuration (the static arguments and
keywords, which leaves are differentiated); `jax.jit` specialises it on shapes and dtypes.
Nothing calls `jax.jvp` per op: it runs only while `jax.jit` traces. Every trace and call runs
inside `jax.enable_x64(True)`, as the pullbacks do.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .arguments import freeze_call
from .pullback import _differentiated, call_at


class JitPushforwards:
    """The compiled pushforwards of `jax_function` (NumPy's arguments, NumPy's meaning)."""

    def __init__(self, jax_function: Callable, name: str, operands: bool = False,
                 numpy_function: Callable | None = None) -> None:
        self.jax_function = jax_function
        self.numpy_function = numpy_function
        self.name = name
        self.operands = operands
        self.compiled: dict[tuple, tuple[Callable, dict]] = {}

    def rule_jvp(self, prepare: Callable | None = None) -> Callable:
        """A `Rule.jvp` over the residuals `numpy_forward` keeps, `(args, kwargs)`."""
        def jvp(residuals, tangents, argnums):
            args, kwargs = residuals if prepare is None else prepare(*residuals)
            return self(args, kwargs or {}, tangents, argnums)

        return jvp

    def __call__(self, args: tuple, kwargs: dict, tangents: tuple, argnums: tuple) -> Any:
        static_args, static_kwargs, leaves, counts = freeze_call(args, kwargs, self.operands)
        diff, owners = _differentiated(leaves, counts, argnums)
        leaf_tangents = []
        for i, t in zip(argnums, tangents):
            start, stop = owners[i]
            items = t if type(args[i]) in (list, tuple) else [t]
            if len(items) != stop - start:
                raise TypeError(f"argument {i} of {self.name} is {stop - start} JAX leaves "
                                f"for {len(items)} tangents")
            leaf_tangents += [items[p - start] for p in range(start, stop) if p in diff]
        key = (static_args, static_kwargs, diff)
        found = self.compiled.get(key)
        if found is None:
            found = self.compiled[key] = self._jit(static_args, static_kwargs, diff)
        jitted, layout = found
        with jax.enable_x64(True):
            outs = jitted(leaves, tuple(leaf_tangents))
        it = iter(outs)
        result = tuple(np.asarray(next(it)) if inexact else None
                       for inexact in layout["inexact"])
        return result if layout["several"] else result[0]

    def _jit(self, static_args, static_kwargs, diff) -> tuple[Callable, dict]:
        function, numpy_function = self.jax_function, self.numpy_function
        layout: dict = {}  # filled while jax.jit traces: which outputs carry tangents

        def push(leaves, leaf_tangents):
            def of_diff(*diff_leaves):
                return call_at(function, numpy_function, static_args, static_kwargs, leaves,
                               diff, diff_leaves)

            primals = tuple(leaves[p] for p in diff)
            tangents = tuple(jnp.asarray(t, dtype=jnp.result_type(p))
                             for t, p in zip(leaf_tangents, primals))
            out, tangent = jax.jvp(of_diff, primals, tangents)
            outs, ts = jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(tangent)
            layout["several"] = isinstance(out, (tuple, list))
            layout["inexact"] = [jnp.issubdtype(jnp.result_type(o), jnp.inexact) for o in outs]
            return tuple(t for t, keep in zip(ts, layout["inexact"]) if keep)

        return jax.jit(push), layout

"""The programs both of rulebridge.jit's back ends are tested on, written once.

Each program is a function `program(backend, source)` that jits with `backend.jit`, compares
every jitted call with the eager call on new inputs with `backend.same` (tests/jit/test_jit.py: the
NumPy back end, to the bit; tests/jit/test_jit_jax.py: the JAX back end, to 1e-12 relative) and
asserts how the call was answered (traces, variants, and for the JAX back end how many calls
the staged program answered, `backend.staged`). `BY_SOURCE` programs run once per source with
the NumPy back end (their eager references differ per source).
"""

from __future__ import annotations

import sys
import types
from typing import Callable

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.errors import JitError


class Backend:
    def __init__(self, name: str, same: Callable) -> None:
        self.name, self.same = name, same

    def jit(self, fun: Callable) -> Callable:
        return rb.jit(fun, backend=self.name)

    def staged(self, jitted, calls: int, at_least: bool = False) -> None:
        """The JAX back end: its staged program answered `calls` calls (or more)."""
        if self.name == "jax":
            got = staged_calls(jitted)
            assert got >= calls if at_least else got == calls, (got, jitted.last_fallback)


def staged_calls(jitted) -> int:
    return sum(v.staged.program.calls for vs in jitted.variants.values() for v in vs
               if v.staged is not None and v.staged.program is not None)


def inputs(n, seed=0, shape=(5,)):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for _ in range(n)]


def chain(x):
    y = x
    for _ in range(4):
        y = np.tanh(np.sin(y) * 1.5) + 0.1 * y
    return np.sum(y ** 2)


KINDS = {"plain": lambda f, **k: f, "grad": rb.grad, "value_and_grad": rb.value_and_grad,
         "hessian": rb.hessian}


def _transforms(kind):
    def program(b, source):
        transform = KINDS[kind]
        options = {} if kind == "plain" else {"source": source}
        g = b.jit(transform(chain, **options))
        for x in inputs(4, shape=(3,)):
            b.same(g(x), transform(chain, **options)(x))
        # one trace, and one more to check the first replay
        assert g.traces == 2 and g.replays == 3
        b.staged(g, 3)

    program.__name__ = f"{kind}_of_the_chain"
    return program


def value_and_grad_with_data_arguments_and_aux(b, source):
    def loss(w, X, y):
        r = np.tanh(X @ w) - y
        return np.mean(r ** 2), {"residual": r, "n": len(y)}

    step = b.jit(rb.value_and_grad(loss, has_aux=True, source=source))
    rng = np.random.default_rng(1)
    w = rng.normal(size=3)
    for _ in range(3):
        X, y = rng.normal(size=(6, 3)), rng.normal(size=6)  # new data: new inputs, same program
        b.same(step(w, X, y), rb.value_and_grad(loss, has_aux=True, source=source)(w, X, y))
    assert step.n_variants == 1
    b.staged(step, 2)


def dict_parameters_and_argnums_tuple(b, source):
    def loss(params, scale, x):
        h = np.tanh(x @ params["W"] + params["b"])
        return np.sum(h ** 2) * scale

    g = b.jit(rb.grad(loss, argnums=(0, 1), source=source))
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 3))
    for k in range(3):
        params = {"W": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
        b.same(g(params, 0.5 + k, x),
               rb.grad(loss, argnums=(0, 1), source=source)(params, 0.5 + k, x))
    b.staged(g, 2)


def writes_into_buffers_made_inside(b, source):
    def f(x):
        out = np.zeros(len(x) + 1)
        for i in range(len(x)):
            out[i + 1] = out[i] + np.sin(x[i])
        view = out[1:]
        view *= x
        out[0] = np.cos(x[0])
        return np.sum(out ** 2)

    g = b.jit(rb.value_and_grad(f, source=source))
    for x in inputs(3, seed=3):
        b.same(g(x), rb.value_and_grad(f, source=source)(x))
    assert g.traces == 2
    b.staged(g, 2)


def a_flipped_branch_records_the_other_path(b, source):
    def f(x):
        if np.sum(x) > 0:
            return np.sum(np.sin(x))
        return np.sum(np.cos(x) ** 2)

    g = b.jit(rb.grad(f, source=source))
    x = np.array([0.5, 1.0, 0.2])
    for point in (x, 2 * x, -x, -3 * x, x):
        b.same(g(point), rb.grad(f, source=source)(point))
    assert g.n_variants == 2
    b.staged(g, 2, at_least=True)


def a_loop_count_taken_from_a_traced_value(b, source):
    def f(x):
        y = x
        for _ in range(len(x[x > 0.5]) + int(np.argmax(x))):  # decided by traced values
            y = np.sin(y) + x
        return np.sum(y)

    g = b.jit(rb.grad(f, source=source))
    for first in (0.1, 0.2, 0.9, 1.5, 0.15):
        x = np.array([first, 0.3, 0.7])
        b.same(g(x), rb.grad(f, source=source)(x))
    assert g.n_variants == 2  # three sums, two loop counts: one program per count


def a_mask_from_the_values_is_a_guard(b, source):
    def f(x):
        return np.sum(x[x > 0] ** 3)

    g = b.jit(rb.grad(f, source=source))
    for x in (np.array([1.0, -2.0, 3.0]), np.array([2.0, -1.0, 1.0]),
              np.array([-1.0, 2.0, 3.0])):
        b.same(g(x), rb.grad(f, source=source)(x))
    assert g.n_variants == 2


def a_closure_constant_changed_in_place_is_recorded_again(b, source):
    c = np.array([1.0, 2.0, 3.0])

    def f(x):
        return np.sum(np.sin(x * c))

    g = b.jit(rb.grad(f, source=source))
    x = np.array([0.1, 0.2, 0.3])
    b.same(g(x), np.cos(x * c) * c)
    b.same(g(x), rb.grad(f, source=source)(x))
    c[1] = -5.0  # the program read c: a replay with the old copy would be stale
    b.same(g(x), rb.grad(f, source=source)(x))
    assert g.retraced and "closure variable 'c'" in g.retraced[-1]
    b.same(g(x), np.cos(x * c) * c)


def a_new_shape_is_a_new_key(b, source):
    g = b.jit(rb.grad(chain, source=source))
    for k, n in enumerate((3, 4, 3, 4, 3, 4)):
        x = np.linspace(0.1, 1, n) * (1 + k / 10)  # new values at every call
        b.same(g(x), rb.grad(chain, source=source)(x))
    assert len(g.variants) == 2 and g.traces == 4 and g.replays == 4  # per key: trace, check
    b.staged(g, 2, at_least=True)


def a_rebound_closure_variable_is_recorded_again(b, source):
    scale = 2.0

    def f(x):
        return np.sum(np.sin(x) * scale)

    g = b.jit(rb.grad(f, source=source))
    for x in inputs(3, shape=(3,)):
        b.same(g(x), rb.grad(f, source=source)(x))
    scale = 3.0  # noqa: F841 (read by f): a replay of the recorded 2.0 would be stale
    for x in inputs(3, seed=1, shape=(3,)):
        b.same(g(x), rb.grad(f, source=source)(x))
        b.same(g(x), np.cos(x) * 3.0)
    assert g.retraced and "'scale'" in g.retraced[-1], g.retraced
    b.staged(g, 2, at_least=True)


def randomness_drawn_inside_is_refused(b, source):
    with pytest.raises(JitError, match="draws random numbers"):
        b.jit(rb.grad(lambda a: np.sum(a * np.random.normal(size=3))))(np.ones(3))
    rng = np.random.default_rng(0)
    with pytest.raises(JitError, match="draws random numbers"):
        b.jit(rb.grad(lambda a: np.sum(a * rng.normal(size=3))))(np.ones(3))

    def fresh(a):  # a generator made inside without a seed: only the first replay can tell
        return np.sum(a * np.random.default_rng().normal(size=3))

    g = b.jit(rb.grad(fresh))
    g(np.ones(3))
    with pytest.raises(JitError, match="another result"):
        g(np.ones(3) * 2)

    def imports_then_draws(a):  # an import during the trace may draw too: traced once more
        sys.modules.setdefault(f"imported_by_a_trace_{id(b)}", types.ModuleType("imported"))
        return np.sum(a * np.random.normal(size=3))

    with pytest.raises(JitError, match="global generator advanced"):  # the draw, by name
        b.jit(rb.grad(imports_then_draws))(np.ones(3))


def hessian_and_jacobian(b, source):
    def f(x):
        return np.sum(np.sin(x) * x[0] + x ** 3)

    def vector(x):
        return np.tanh(x) * np.sum(x ** 2)

    h = b.jit(rb.hessian(f, source=source))
    j = b.jit(rb.jacobian(vector, source=source))
    for x in inputs(3, seed=8, shape=(3,)):
        b.same(h(x), rb.hessian(f, source=source)(x))
        b.same(j(x), rb.jacobian(vector, source=source)(x))
    b.staged(h, 2)
    b.staged(j, 2)


def hvp_and_a_gradient_step_inside_a_loss(b, source):
    """Nested transformations: the program holds the inner derivative's ops (the JAX back end
    stages them as they were recorded)."""
    def f(x):
        return np.sum(np.sin(x) * x ** 2)

    def meta(w):
        inner = rb.grad(lambda w: np.sum(np.tanh(w) ** 2), source="autograd")(w)
        return np.sum((w - 0.1 * inner) ** 2)

    def inside(x):  # a gradient inside the jitted function, which no transformation wraps
        return np.sum(rb.grad(f, source="autograd")(x) ** 2)

    hvp = b.jit(rb.hvp(f, source="autograd"))
    outer = b.jit(rb.grad(meta, source="autograd"))
    plain = b.jit(inside)
    rng = np.random.default_rng(10)
    for _ in range(3):
        x, v = rng.normal(size=3), rng.normal(size=3)
        b.same(hvp(x, v), rb.hvp(f, source="autograd")(x, v))
        b.same(outer(x), rb.grad(meta, source="autograd")(x))
        b.same(plain(x), inside(x))
    assert hvp.replays == 2 and outer.replays == 2  # recorded once: the vector is an input
    for jitted in (hvp, outer, plain):
        assert jitted.eager_calls == 0
        b.staged(jitted, 2)
    # hvp is linear in v: its gradient with respect to v (v traced) is H u
    x, u = np.array([0.3, 0.5, 0.7]), np.array([1.0, -2.0, 0.5])
    dv = rb.grad(lambda v: np.sum(rb.hvp(f, source="autograd")(x, v) * u))(np.ones(3))
    np.testing.assert_allclose(dv, rb.hessian(f)(x) @ u, rtol=1e-12)


PROGRAMS = [*(_transforms(kind) for kind in KINDS), value_and_grad_with_data_arguments_and_aux,
            dict_parameters_and_argnums_tuple, writes_into_buffers_made_inside,
            a_flipped_branch_records_the_other_path, a_loop_count_taken_from_a_traced_value,
            a_mask_from_the_values_is_a_guard,
            a_closure_constant_changed_in_place_is_recorded_again, a_new_shape_is_a_new_key,
            a_rebound_closure_variable_is_recorded_again, randomness_drawn_inside_is_refused, hessian_and_jacobian,
            hvp_and_a_gradient_step_inside_a_loss]
# Programs whose eager reference the NumPy back end's tests take from every source.
BY_SOURCE = {"grad_of_the_chain", "value_and_grad_of_the_chain", "hessian_of_the_chain",
             "value_and_grad_with_data_arguments_and_aux", "hessian_and_jacobian"}


def cases(sources: list) -> list:
    """pytest parameters (program, source): BY_SOURCE programs once per source, others once."""
    return [pytest.param(p, s, id=f"{p.__name__}-{s}") for p in PROGRAMS
            for s in (sources if p.__name__ in BY_SOURCE else [None])]

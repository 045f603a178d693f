"""What autograd's examples and tests import from autograd, given by rulebridge: the module the
drop-in swap of tools/autograd_suite.py points their imports at (it is copied beside them as
`_rulebridge_swap.py`; it is not part of the package).

- `grad`, `value_and_grad`, `elementwise_grad`, `jacobian`, `hessian`,
  `hessian_vector_product` (rulebridge.hvp), `flatten` and `flatten_func` (autograd's definition
  on rulebridge.flatten): rulebridge's, with
  `source=$AG_SUITE_SOURCE` (unset: None, rulebridge chooses).
- `check_grads`, `combo_check`, `scalar_close`, `check_equivalent`: autograd.test_util's call
  convention (`check_grads(f, argnum, modes, order)(*args, **kwargs)`) and its checks (VJP and JVP
  against central differences, to second order), computed with rulebridge's vjp and jvp.
- `adam`, `sgd`, `rmsprop`: autograd's optimizers (plain NumPy loops over a gradient callback),
  with `num_iters` capped at $AG_SUITE_MAX_ITERS so an example runs a few steps, not thousands.
"""

from __future__ import annotations

import functools
import os
from itertools import product

import numpy as np

import rulebridge as rb

SOURCE = os.environ.get("AG_SUITE_SOURCE") or None
MAX_ITERS = int(os.environ.get("AG_SUITE_MAX_ITERS") or 0) or None


def _sourced(transform):
    @functools.wraps(transform)
    def call(fun, *args, **kwargs):
        return transform(fun, *args, source=SOURCE, **kwargs)
    return call


grad = _sourced(rb.grad)
value_and_grad = _sourced(rb.value_and_grad)
elementwise_grad = _sourced(rb.elementwise_grad)
jacobian = _sourced(rb.jacobian)
hessian = _sourced(rb.hessian)
hessian_vector_product = _sourced(rb.hvp)
flatten = rb.flatten


def flatten_func(func, example):
    """autograd.misc.flatten.flatten_func, on rulebridge.flatten (autograd's own definition)."""
    vector, unflatten = flatten(example)
    return (lambda v, *args: flatten(func(unflatten(v), *args))[0]), unflatten, vector


def _capped(optimizer):
    @functools.wraps(optimizer)
    def run(gradient, x, callback=None, num_iters=200, **kwargs):
        if MAX_ITERS is not None:
            num_iters = min(num_iters, MAX_ITERS)
        return optimizer(gradient, x, callback=callback, num_iters=num_iters, **kwargs)
    return run


def _optimizers():
    from autograd.misc import optimizers
    return {name: _capped(getattr(optimizers, name)) for name in ("adam", "sgd", "rmsprop")}


globals().update(_optimizers())

# -- autograd.test_util's checks, with rulebridge's derivatives -------------------------------

TOL = RTOL = EPS = 1e-6
_RNG = np.random.default_rng(0)


def scalar_close(a, b):
    return abs(a - b) < TOL or abs(a - b) / abs(a + b) < RTOL


def _leaves(x):
    return rb.tree.tree_leaves(x) if rb.tree.is_container(x) else [x]


def _randn_like(x):
    def one(leaf):
        shape, dtype = np.shape(leaf), np.result_type(leaf)
        value = _RNG.standard_normal(shape)
        if dtype.kind == "c":
            value = value + 1j * _RNG.standard_normal(shape)
        return value if shape else value[()]
    return rb.tree.tree_map(one, x)


def _add(x, v, scale):
    return rb.tree.tree_flatten(x)[1].unflatten(
        [a + scale * b for a, b in zip(_leaves(x), _leaves(v))])


def _inner(x, y):
    return sum(np.real(np.sum(np.conj(a) * b)) for a, b in zip(_leaves(x), _leaves(y)))


def _numerical_jvp(f, x, v):
    plus, minus = f(_add(x, v, EPS / 2)), f(_add(x, v, -EPS / 2))
    return rb.tree.tree_flatten(plus)[1].unflatten(
        [(np.asarray(a) - np.asarray(b)) / EPS for a, b in zip(_leaves(plus), _leaves(minus))])


def _unary(fun, argnum, args, kwargs):
    """`(f, x)`: `fun` as a function of the arguments `argnum` names alone (a tuple of them for
    a tuple argnum), as autograd's unary_to_nary makes it."""
    many = isinstance(argnum, (tuple, list))
    nums = tuple(argnum) if many else (argnum,)

    def f(x):
        full = list(args)
        for i, value in zip(nums, x if many else (x,)):
            full[i] = value
        return fun(*full, **kwargs)

    return f, (tuple(args[i] for i in nums) if many else args[argnum])


def _covector(x):
    return rb.tree.tree_map(np.conj, x)


def check_vjp(f, x):
    y, pullback = rb.vjp(f, x, source=SOURCE)
    x_v, y_v = _randn_like(x), _randn_like(y)
    # autograd's check: a cotangent is a vector's covector (its conjugate), both ways
    exact = _inner(x_v, _covector(pullback(_covector(y_v))[0]))
    numeric = _inner(y_v, _numerical_jvp(f, x, x_v))
    assert scalar_close(numeric, exact), f"VJP check failed: analytic {exact}, numeric {numeric}"


def check_jvp(f, x):
    x_v = _randn_like(x)
    _, tangent = rb.jvp(f, (x,), (x_v,), source=SOURCE)
    check_equivalent(tangent, _numerical_jvp(f, x, x_v))


def check_equivalent(x, y):
    v = _randn_like(x)
    assert scalar_close(_inner(x, v), _inner(y, v)), f"Value mismatch:\nx: {x}\ny: {y}"


def check_grads(fun, argnum=0, modes=("fwd", "rev"), order=2):
    def check(*args, **kwargs):
        f, x = _unary(fun, argnum, args, kwargs)
        if "fwd" in modes:
            check_jvp(f, x)
            if order > 1:
                def jvp_f(x, v):
                    return rb.jvp(f, (x,), (v,), source=SOURCE)[1]
                check_grads(jvp_f, (0, 1), modes, order - 1)(x, _randn_like(x))
        if "rev" in modes:
            check_vjp(f, x)
            if order > 1:
                def vjp_f(x, v):
                    return rb.vjp(f, x, source=SOURCE)[1](v)[0]
                check_grads(vjp_f, (0, 1), modes, order - 1)(x, _randn_like(f(x)))
    return check


def combo_check(fun, *args, **kwargs):
    def _combo_check(*values, **options):
        pairs = [[(k, x) for x in xs] for k, xs in options.items()]
        for _args in product(*values):
            for _kwargs in product(*pairs):
                check_grads(fun, *args, **kwargs)(*_args, **dict(_kwargs))
    return _combo_check

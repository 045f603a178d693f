"""The autograd adapter runs autograd's VJP makers on raw NumPy functions (rulebridge_autograd/
unboxed.py). That must give autograd's own cotangents to the bit, and must actually happen for the
makers in autograd's numpy_vjps.py, which binds its namespace as `numpy_wrapper`, not as
`autograd.numpy` (makers that are not plain functions, such as solve's partials, run as they are).
"""

import autograd
import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
import pytest
import scipy.special
from autograd.core import primitive_vjps
from autograd.numpy import numpy_wrapper

import rulebridge as rb
from rulebridge_autograd.unboxed import per_argnum_makers

RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 4)) + 4 * np.eye(4)
B = RNG.normal(size=(4, 3))
V = RNG.uniform(0.5, 2.0, size=5)

# (NumPy function, autograd's counterpart, arguments, keywords)
CASES = [
    (np.sin, anp.sin, (V,), {}),
    (np.tanh, anp.tanh, (V,), {}),
    (np.log, anp.log, (V,), {}),
    (np.multiply, anp.multiply, (B, V[:3]), {}),
    (np.matmul, anp.matmul, (A, B), {}),
    (np.sum, anp.sum, (B,), {"axis": 0}),
    (np.cumsum, anp.cumsum, (V,), {}),
    (np.linalg.solve, anp.linalg.solve, (A, B), {}),
    (np.linalg.slogdet, anp.linalg.slogdet, (A,), {}),
    (scipy.special.gammaln, asp.gammaln, (V,), {}),
]


@pytest.mark.parametrize("function, counterpart, args, kwargs", CASES,
                         ids=[rb.function_name(case[0]) for case in CASES])
def test_cotangents_are_autograds_to_the_bit(function, counterpart, args, kwargs):
    def ours(*xs):
        return function(*xs, **kwargs)

    out, pullback = rb.vjp(ours, *args, source="autograd")
    their_pullback, _ = autograd.make_vjp(
        lambda xs: counterpart(*xs, **kwargs))(list(args))
    ybar = _cotangent_like(out)
    expected = their_pullback(ybar if not isinstance(ybar, tuple) else list(ybar))
    for mine, reference in zip(pullback(ybar), expected):
        np.testing.assert_array_equal(mine, reference)


def _cotangent_like(out):
    if isinstance(out, tuple):
        return tuple(_cotangent_like(o) for o in out)
    return RNG.normal(size=np.shape(out))


@pytest.mark.parametrize("counterpart", [anp.sin, anp.tanh, anp.matmul, anp.sum])
def test_the_makers_run_without_autograds_boxing_layer(counterpart):
    makers = per_argnum_makers(primitive_vjps[counterpart])
    assert makers is not None
    for maker in makers.values():
        namespace = maker.__globals__.get("anp")
        assert namespace is not anp and namespace is not numpy_wrapper
        assert namespace.cos is np.cos  # a raw NumPy ufunc, not autograd's wrapper


# Each pullback below calls helpers defined in numpy_vjps.py (`unbroadcast_f`, `unbroadcast`,
# `untake`) or autograd's notrace wrappers (`anp.ndim`, `anp.metadata`); none may fall back to
# autograd's tracer, which searches every argument for boxes. (Composite rules such as np.where
# run autograd's tracer by design.)
PROGRAMS_THROUGH_HELPERS = {
    "add with broadcasting": (lambda a, b: np.sum(a + b), (B, V[:3])),
    "multiply": (lambda a, b: np.sum(a * b), (B, V[:3])),
    "index reads in a loop": (lambda a: sum(a[i] for i in range(3)) + 0.0, (V,)),
    "sum over an axis": (lambda a: np.sum(np.sum(a, axis=0) ** 2), (B,)),
}


@pytest.mark.parametrize("name", list(PROGRAMS_THROUGH_HELPERS))
def test_pullbacks_never_enter_autograds_tracer(name):
    program, args = PROGRAMS_THROUGH_HELPERS[name]
    out, pullback = rb.vjp(program, *args, source="autograd")
    entered = _files_entered(lambda: pullback(np.ones_like(out)))
    assert not [f for f in entered if f.endswith("autograd/tracer.py")]
    # and the cotangents are still autograd's own
    expected = autograd.grad(lambda xs: program(*xs))(list(args))
    for mine, reference in zip(pullback(np.ones_like(out)), expected):
        np.testing.assert_array_equal(mine, reference)


def _files_entered(run) -> set:
    import sys

    entered = set()

    def profile(frame, event, arg):
        if event == "call":
            entered.add(frame.f_code.co_filename.replace("\\", "/"))

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return entered

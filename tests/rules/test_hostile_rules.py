"""Hostile or buggy rules from an adapter. The cheap checks, always on, turn a malformed forward,
a wrong number, shape or dtype of cotangents, or an exception into a RuleContractError naming
the adapter, the function and the signature; debug mode also catches rules that mutate their
inputs, alias them, disagree with NumPy or return non-finite cotangents."""

import subprocess
import sys

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.registry import REGISTRY
from rulebridge.api import new_tape


class HostileAdapter(rb.Adapter):
    """Rules for np.sin, np.multiply and np.linalg.eigh whose forward and pullback are correct
    except for the one behaviour under test."""

    name = "hostile"

    def __init__(self, forward=None, pullback=None):
        self.bad_forward, self.bad_pullback = forward, pullback

    def version(self):
        return "6.6.6"

    def functions(self):
        return [np.sin, np.multiply]

    def build_rule(self, function, signature):
        if function not in self.functions():
            raise rb.Declined("hostile rules only for np.sin and np.multiply")

        def forward(args, kwargs):
            out = function(*args, **kwargs)
            result = (out, args)
            return self.bad_forward(out, args) if self.bad_forward else result

        def pullback(args, g, argnums):
            if function is np.sin:
                cts = (g * np.cos(args[0]),)
            else:
                cts = tuple(g * args[1 - i] for i in argnums)
            return self.bad_pullback(cts, args, g) if self.bad_pullback else cts

        return rb.Rule(function, signature, forward, pullback, source=self.name,
                       source_version=self.version())


@pytest.fixture
def hostile():
    def install(**behaviour):
        rb.register_adapter(HostileAdapter(**behaviour))

    with rb.trust():  # the engine's own checks, not the check at first use (test_trust.py)
        yield install
    REGISTRY.unregister("hostile")


X = np.array([0.3, -1.2, 0.7])


def _gradient(f, *args):
    """The gradient through the hostile rules alone: vjp needs no other function's rule."""
    y, pullback = rb.vjp(f, *args, source="hostile")
    return pullback(np.full_like(y, 2.0))


def _contract_error(f=np.sin, *args, where="numpy.sin(float64[:])"):
    with pytest.raises(rb.RuleContractError) as info:
        _gradient(f, *(args or (np.copy(X),)))
    text = str(info.value)
    assert "hostile" in text and where in text, text
    return text


def test_a_correct_rule_passes_every_check(hostile):
    hostile()
    for mode in (False, True):
        with rb.debug(mode):
            np.testing.assert_allclose(_gradient(np.sin, X)[0], 2 * np.cos(X))
            np.testing.assert_allclose(_gradient(np.multiply, X, X[::-1]), (2 * X[::-1], 2 * X))


PULLBACKS = {  # broken pullback, what the error says
    "one cotangent too many": (lambda cts, args, g: cts + cts, "2 cotangent"),
    "no cotangent": (lambda cts, args, g: (), "0 cotangent"),
    "None instead of a tuple": (lambda cts, args, g: None, "None"),
    "a bare array instead of a tuple": (lambda cts, args, g: cts[0], "ndarray"),
    "a bare float instead of a tuple": (lambda cts, args, g: 1.0, "float"),
    "wrong shape": (lambda cts, args, g: (cts[0][:-1],), "shape (2,)"),
    "wrong dtype": (lambda cts, args, g: (cts[0].astype(np.float32),), "float32"),
    "a Python float for an array": (lambda cts, args, g: (1.0,), "float"),
    "a string": (lambda cts, args, g: ("cotangent",), "str"),
    "an exception": (lambda cts, args, g: {}["missing"], "KeyError"),
}


@pytest.mark.parametrize("behaviour", sorted(PULLBACKS))
def test_broken_pullbacks_are_caught_by_the_cheap_checks(hostile, behaviour):
    pullback, says = PULLBACKS[behaviour]
    hostile(pullback=pullback)
    assert says in _contract_error()


def test_a_broken_cotangent_for_the_second_argument_names_it(hostile):
    hostile(pullback=lambda cts, args, g: (cts[0], cts[1][:1]))
    text = _contract_error(np.multiply, X, X[::-1], where="numpy.multiply(float64[:], float64[:])")
    assert "argument 1" in text


FORWARDS = {
    "the output only": (lambda out, args: out, "(output, residuals)"),
    "a triple": (lambda out, args: (out, args, None), "(output, residuals)"),
    "None": (lambda out, args: None, "(output, residuals)"),
}


@pytest.mark.parametrize("behaviour", sorted(FORWARDS))
def test_malformed_forwards_are_caught_by_the_cheap_checks(hostile, behaviour):
    forward, says = FORWARDS[behaviour]
    hostile(forward=forward)
    assert says in _contract_error()


@pytest.mark.parametrize("behaviour", sorted(FORWARDS))
def test_malformed_forwards_are_caught_when_the_rule_is_cached(hostile, behaviour):
    """The first np.sin puts its rule in the tape's cache, so the second reaches the cached rule
    from Traced.__array_ufunc__, whose path must check the forward the same way."""
    forward, says = FORWARDS[behaviour]
    calls = []

    def broken_the_second_time(out, args):
        calls.append(out)
        return forward(out, args) if len(calls) > 1 else (out, args)

    hostile(forward=broken_the_second_time)
    with pytest.raises(rb.RuleContractError) as info:
        rb.vjp(lambda x: np.sin(np.sin(x)), X, source="hostile")
    assert says in str(info.value) and "numpy.sin(float64[:])" in str(info.value)
    assert len(calls) == 2


def test_a_forwards_own_exception_is_numpys_own():
    # A forward computes NumPy's function: its errors (shapes, LinAlgError) stay what NumPy
    # raises, so the user sees the same error the plain program gives.
    with pytest.raises(ValueError, match="broadcast"):
        rb.grad(lambda x: np.sum(x * np.ones(4)))(X)


def _mutate_args(cts, args, g):
    # Only what it can write: the caller's arrays reach every rule read-only (see below), so
    # what debug mode must catch is a rule changing a value other ops still use.
    if args[0].flags.writeable:
        args[0][0] += 1.0
    return cts


def _mutate_args_forward(out, args):
    if args[0].flags.writeable:
        args[0][0] += 1.0
    return out, args


def _mutate_g(cts, args, g):
    g[...] = 0.0
    return cts


DEBUG_ONLY = {  # behaviour: (forward, pullback, what the debug error says)
    "pullback mutates its argument": (None, _mutate_args, "an argument was modified"),
    "pullback mutates the cotangent it receives": (None, _mutate_g, "cotangent it received"),
    "pullback returns its argument": (None, lambda cts, args, g: (args[0],), "shares memory"),
    "pullback returns a view of its argument": (
        None, lambda cts, args, g: (args[0][::1],), "shares memory"),
    "pullback returns nan for finite inputs": (
        None, lambda cts, args, g: (cts[0] * np.nan,), "non-finite"),
    "forward mutates its argument": (_mutate_args_forward, None,
                                     "after its forward, an argument was modified"),
    "forward disagrees with NumPy": (lambda out, args: (np.cos(args[0]), args), None,
                                     "differs from NumPy's"),
    "forward returns another dtype": (lambda out, args: (out.astype(np.float32), args), None,
                                      "float32"),
}


@pytest.mark.parametrize("behaviour", sorted(DEBUG_ONLY))
def test_debug_mode_checks_every_rule_boundary(hostile, behaviour):
    forward, pullback, says = DEBUG_ONLY[behaviour]
    hostile(forward=forward, pullback=pullback)
    with rb.debug():  # the outer sin's argument is the inner one's output, a value on the tape
        text = _contract_error(lambda x: np.sin(np.sin(x)))
    assert "debug mode" in text and says in text, text


def test_a_two_element_output_without_residuals_is_caught_in_debug_mode(hostile):
    # Unpacking a 2-element array as (output, residuals) succeeds: only debug mode can tell.
    hostile(forward=lambda out, args: out)
    with rb.debug():
        _contract_error(np.sin, X[:2])


def test_debug_mode_is_read_once_per_tape_and_off_by_default():
    assert not rb.debug_enabled()
    assert new_tape().rules is REGISTRY.cache(None)  # the per-op path reads the registry's own cache
    with rb.debug():
        assert rb.debug_enabled()
        assert new_tape().rules is not REGISTRY.cache(None)
    assert not rb.debug_enabled()


def test_environment_variable_switches_debug_mode_on():
    code = "import rulebridge; print(rulebridge.debug_enabled())"
    env = {"RULEBRIDGE_DEBUG": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def _zero_arguments_forward(out, args):
    args[0][...] = 0.0
    return out, args


def _zero_arguments_pullback(cts, args, g):
    args[0][...] = 0.0
    return cts


@pytest.mark.parametrize("mode", [False, True], ids=["default", "debug mode"])
@pytest.mark.parametrize("where, behaviour", [
    ("forward", {"forward": _zero_arguments_forward}),
    ("pullback", {"pullback": _zero_arguments_pullback})])
@pytest.mark.parametrize("api", ["vjp", "grad"])
def test_a_rule_that_writes_into_the_caller_s_array_is_refused_and_named(hostile, mode, where,
                                                                          behaviour, api):
    hostile(**behaviour)
    x = np.copy(X) if api == "vjp" else np.array(0.3)
    before = np.copy(x)
    with rb.debug(mode), pytest.raises(rb.RuleContractError) as info:
        if api == "vjp":
            _gradient(np.sin, x)
        else:
            rb.grad(np.sin, source="hostile")(x)
    np.testing.assert_array_equal(x, before)  # the caller's array, untouched
    text = str(info.value)
    signature = "float64[:]" if api == "vjp" else "float64"
    assert f"the {where} of the hostile rule for numpy.sin({signature})" in text, text
    assert "read-only" in text, text


def test_the_program_s_own_writes_into_its_argument_still_happen(hostile):
    # The program may write into its argument (and into a view of it): those writes are
    # recorded, and leave the caller's array as plain NumPy leaves it.
    def program(xp_sum, a):
        view = a[1:]
        view[0] = 5.0
        a *= 2.0
        return xp_sum(a * a)

    expected = np.copy(X)
    program(np.sum, expected)
    x = np.copy(X)
    g = rb.grad(lambda a: program(np.sum, a))(x)
    np.testing.assert_array_equal(x, expected)
    np.testing.assert_allclose(g, 8.0 * X * np.array([1.0, 0.0, 1.0]))


def test_a_read_only_argument_stays_read_only_for_the_program_too():
    x = np.copy(X)
    x.flags.writeable = False

    def program(a):
        a[0] = 1.0
        return np.sum(a)

    with pytest.raises(ValueError, match="read-only"):
        program(x)
    with pytest.raises(ValueError, match="read-only"):
        rb.grad(program)(x)


def test_a_write_through_a_view_the_tape_does_not_follow_is_refused_with_the_fix():
    def program(a):
        flat = np.ravel(a)  # a view NumPy would let the program write through
        flat[0] = 2.0
        return np.sum(a * a)

    x = np.ones((2, 2))
    with pytest.raises(rb.MutationError, match=r"Write into the argument itself"):
        rb.grad(program)(x)
    np.testing.assert_array_equal(x, np.ones((2, 2)))


def test_a_program_returning_its_argument_returns_the_caller_s_array():
    x = np.copy(X)
    y, _ = rb.vjp(lambda a: a, x)
    assert y is x

"""Every error names the user's line: its first line holds the file and line of the frame in
this test file that made the call (rulebridge/errors.py), then a fix as code, then details.
Messages quoted inside other messages (a matrix cell, a NoRuleError's reasons) carry no
location."""

from __future__ import annotations

import inspect
import pickle
from pathlib import Path

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.scipy import stats
from tests.support.preferred import preferred
from tools.errors_doc import _WrongShapeAdapter

FILE = Path(__file__).name


def _here() -> int:
    return inspect.currentframe().f_back.f_lineno


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0]


def _names_line(error: BaseException, line: int) -> str:
    first = _first_line(error)
    assert f"{FILE}:{line}:" in first, first
    assert "rulebridge/" not in first.split(f"{FILE}:{line}")[0], first
    return str(error)


def test_no_rule_error_names_the_line_and_the_source_that_has_a_rule():
    line = _here() + 1  # the line that calls np.cbrt
    f = rb.grad(lambda x: np.sum(np.cbrt(x)), source="autograd")
    with pytest.raises(rb.NoRuleError) as info:
        f(np.ones(3))
    text = _names_line(info.value, line)
    assert text.splitlines()[1].strip().startswith("Fix: source='jax'"), text


def test_no_rule_error_for_a_dtype_gives_the_cast_as_the_fix():
    with pytest.raises(rb.NoRuleError) as info:
        line = _here() + 1
        rb.grad(lambda x: np.sum(np.sin(x)))(np.ones(3, dtype=np.float16))
    text = _names_line(info.value, line)
    assert "Fix: x = x.astype(np.float64)" in text.splitlines()[1]
    # each source's reason is quoted without a location of its own
    assert text.count(f"{FILE}:") == 1, text


def test_float_of_a_traced_value_names_the_line_inside_the_function():
    def f(x):
        total = np.sum(x)
        return float(total) * 2.0
    line = inspect.getsourcelines(f)[1] + 2
    with pytest.raises(rb.TracingError) as info:
        rb.grad(f)(np.ones(3))
    text = _names_line(info.value, line)
    assert "float()" in _first_line(info.value)
    assert "plain ndarray" not in text  # the buffer write is another cause, another message


BUFFER = np.zeros(3)  # made before the trace: rulebridge cannot follow it


def test_a_write_into_a_plain_buffer_is_its_own_message():
    def f(x):
        BUFFER[:] = x
        return np.sum(x)
    line = inspect.getsourcelines(f)[1] + 1
    with pytest.raises(rb.TracingError) as info:
        rb.grad(f)(np.ones(3))
    text = _names_line(info.value, line)
    assert "written into a plain ndarray" in _first_line(info.value)
    assert "np.asarray" not in text
    assert "Fix: buf = np.zeros_like(x)" in text


def test_np_asarray_is_its_own_message():
    asarray = np.asarray  # bound before the trace: NumPy's own function, not followed

    def f(x):
        return np.sum(asarray(x))
    line = inspect.getsourcelines(f)[1] + 1
    with pytest.raises(rb.TracingError) as info:
        rb.grad(f)(np.ones(3))
    text = _names_line(info.value, line)
    assert "np.asarray" in _first_line(info.value)
    assert "buf[i]" not in text and "np.zeros_like" not in text


def test_a_frozen_distribution_names_the_unfrozen_call():
    def f(m):
        return np.sum(stats.norm(m, 1.0).logpdf(np.linspace(0.0, 1.0, 3)))
    line = inspect.getsourcelines(f)[1] + 1
    with pytest.raises(rb.TracingError) as info:
        rb.grad(f)(0.5)
    text = _names_line(info.value, line)
    assert "Fix: stats.norm.logpdf(np.linspace(0.0, 1.0, 3), m, 1.0)" in text, text
    # and the fix it names works
    got = rb.grad(lambda m: np.sum(stats.norm.logpdf(np.linspace(0.0, 1.0, 3), m, 1.0)))(0.5)
    assert np.isclose(got, np.sum(np.linspace(0.0, 1.0, 3) - 0.5))


def test_a_frozen_scipy_distribution_names_the_drop_in():
    import scipy.stats

    def f(m):
        return np.sum(scipy.stats.norm(m, 1.0).logpdf(np.ones(2)))
    line = inspect.getsourcelines(f)[1] + 1
    with pytest.raises(rb.TracingError) as info:
        rb.grad(f)(0.5)
    assert "rulebridge.scipy.stats.norm.logpdf(np.ones(2), m, 1.0)" in _names_line(
        info.value, line)


def test_rule_contract_and_unverified_rule_errors_name_the_line():
    with preferred(np.sin, _WrongShapeAdapter()):
        with pytest.raises(rb.UnverifiedRuleError) as info:
            line = _here() + 1
            rb.vjp(np.sin, np.ones((3, 1, 1)), source="broken")
        _names_line(info.value, line)
        with rb.trust():
            y, pullback = rb.vjp(np.sin, np.ones(3), source="broken")
            with pytest.raises(rb.RuleContractError) as info:
                line = _here() + 1
                pullback(np.ones(3))
        _names_line(info.value, line)


def test_adapter_nested_and_mutation_errors_name_the_line():
    with pytest.raises(rb.AdapterError) as info:
        line = _here() + 1
        rb.grad(lambda x: np.sum(x), source="nonexistent")(np.ones(3))
    _names_line(info.value, line)
    with pytest.raises(rb.NestedDifferentiationError) as info:
        line = _here() + 1
        rb.grad(lambda x: np.sum(rb.grad(lambda y: np.sum(np.real(np.linalg.eigvals(y[:, None] * np.eye(3) + np.eye(3)))), source="jax")(x)), source="jax")(np.ones(3))
    _names_line(info.value, line)

    def f(x):
        u = np.copy(x)
        u[[0, 0]] = x[1:3]
        return np.sum(u)
    with pytest.raises(rb.MutationError) as info:
        rb.grad(f)(np.ones(3))
    _names_line(info.value, inspect.getsourcelines(f)[1] + 2)


def test_import_and_check_errors_name_the_line():
    with pytest.raises(rb.ImportRuleError) as info:
        line = _here() + 1
        rb.import_rule(np.linalg.norm, "autograd", equivalent=lambda x: x.sum(),
                       signatures=["float64[:]"])
    _names_line(info.value, line)
    with pytest.raises(rb.GradientCheckError) as info:
        line = _here() + 1
        rb.check_grads(lambda x: np.abs(x - 1.0004), np.array([1.0]))
    _names_line(info.value, line)
    wrong = rb.Rule(np.sin, rb.signature_of((np.ones(3),)),
                    lambda args, kwargs: (np.sin(*args), args),
                    lambda args, g, argnums: (g * np.sin(args[0]),), source="example")
    with pytest.raises(rb.RuleCheckError) as info:
        line = _here() + 1
        rb.assert_rule(wrong, np.ones(3))
    _names_line(info.value, line)


def test_the_location_is_outside_the_message_quoted_elsewhere_and_survives_pickling():
    with pytest.raises(rb.NoRuleError) as info:
        line = _here() + 1
        rb.grad(lambda x: np.sum(np.sin(x)))(np.ones(3, dtype=np.float16))
    error = info.value
    assert error.where.endswith(f"{FILE}:{line}")
    assert FILE not in f"{error}" and FILE not in error.message
    assert str(error) == f"{error.where}: {error.message}"
    again = pickle.loads(pickle.dumps(error))
    assert str(again) == str(error)


def test_a_script_given_with_dash_c_is_the_users_code():
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", "import rulebridge as rb\n"
                          "try:\n    rb.REGISTRY.adapter('nonexistent')\n"
                          "except rb.AdapterError as e:\n    print(repr(e.where))"],
                         capture_output=True, text=True)
    assert run.stdout.strip() == "'<string>:3'", run.stderr


def test_misuse_of_the_api_names_the_line_and_is_still_a_type_or_value_error():
    with pytest.raises(TypeError) as info:
        line = _here() + 1
        rb.grad(lambda x: x * 2.0)(np.ones(3))
    assert isinstance(info.value, rb.UsageError)
    assert "Fix: rulebridge.grad(lambda *a: np.sum(f(*a)))" in _names_line(info.value, line)
    _, pullback = rb.vjp(np.sin, np.ones(3))
    with pytest.raises(ValueError) as info:
        line = _here() + 1
        pullback(np.ones(4))
    assert isinstance(info.value, rb.ArgumentError)
    _names_line(info.value, line)


def test_an_imported_rule_that_fails_names_the_other_source_it_was_imported_from():
    import jax.numpy as jnp
    import scipy.special
    from autograd.extend import defvjp, primitive

    def softplus(x):
        return np.logaddexp(0.0, x)

    @primitive
    def bad_softplus(x):
        return np.logaddexp(0.0, x)

    defvjp(bad_softplus, lambda ans, x: lambda g: -g * scipy.special.expit(x))  # sign error
    imported = rb.import_rule(softplus, "autograd", equivalent=bad_softplus)
    rb.import_rule(softplus, "jax", equivalent=lambda x: jnp.logaddexp(0.0, x))
    x = np.array([0.5, 1.0])
    with pytest.raises(rb.ImportRuleError) as info:
        line = _here() + 1
        rb.grad(lambda v: np.sum(imported(v)), source="autograd")(x)
    text = _names_line(info.value, line)
    assert text.splitlines()[1].strip().startswith("Fix: source='jax'"), text
    # and the source it names gives the right gradient
    got = rb.grad(lambda v: np.sum(imported(v)), source="jax")(x)
    assert np.allclose(got, scipy.special.expit(x), rtol=1e-12)


# -- containers: rulebridge/tree.py, rulebridge/flat.py and the differentiated containers ---------


class _Opaque:
    """A leaf type nobody registered with rulebridge.register_container."""


def _starts_at(error: BaseException, line: int) -> list[str]:
    """The message's lines, after checking that the first starts with this file's path and
    `line`, as `user_location` spells it, and that a `Fix:` line comes second."""
    import os
    here = os.path.relpath(__file__)
    path = __file__ if here.startswith(os.pardir) else here
    lines = str(error).splitlines()
    assert lines[0].startswith(f"{path}:{line}: "), lines[0]
    assert isinstance(error, rb.RulebridgeError), type(error)
    assert len(lines) > 1 and lines[1].strip().startswith("Fix: "), str(error)
    return lines


@pytest.mark.parametrize("tree, leaf, what", [
    ({"a": np.ones(2), "p": _Opaque()}, "d['p']", "a _Opaque"),
    ([np.ones(2), 3], "d[1]", "an int"),
    ((np.ones(2), np.arange(3)), "d[1]", "int64"),
])
def test_a_leaf_that_cannot_be_differentiated_names_the_line_then_the_fix(tree, leaf, what):
    def f(d):
        return np.sum(rb.tree.tree_leaves(d)[0])
    with pytest.raises(TypeError) as info:
        line = _here() + 1
        rb.grad(f)(tree)
    lines = _starts_at(info.value, line)
    assert f"the leaf {leaf} of argument 0" in lines[0] and what in lines[0], lines[0]


def test_flatten_of_an_int_leaf_and_unflatten_of_a_wrong_vector_name_the_line():
    with pytest.raises(TypeError) as info:
        line = _here() + 1
        rb.flatten({"a": np.ones(2), "n": 3})
    assert "tree['n'] is an int" in _starts_at(info.value, line)[0]
    _, unflatten = rb.flatten([np.ones(2)])
    with pytest.raises(ValueError) as info:
        line = _here() + 1
        unflatten(np.ones(3))
    assert "an ndarray of shape (3,)" in _starts_at(info.value, line)[0]


def test_a_cotangent_or_tangent_laid_out_unlike_its_value_names_the_line():
    _, pullback = rb.vjp(lambda x: (x, {"y": x}), np.ones(2))
    with pytest.raises(ValueError) as info:
        line = _here() + 1
        pullback((np.ones(2),))
    lines = _starts_at(info.value, line)
    assert "ybar should be a tuple or list of 2" in lines[0]
    assert "Fix: ybar = rulebridge.tree.tree_map(np.ones_like, y)" in lines[1], lines
    with pytest.raises(ValueError) as info:
        line = _here() + 1
        pullback((np.ones(2), [np.ones(2)]))
    assert "ybar[1] should be a dict with the keys 'y'" in _starts_at(info.value, line)[0]
    with pytest.raises(ValueError) as info:
        line = _here() + 1
        rb.jvp(lambda d: d[0], ([np.ones(2), np.ones(2)],), ([np.ones(2)],))
    first = _starts_at(info.value, line)[0]
    assert "tangent 0 should be a tuple or list of 2" in first and "cotangent" not in first


def test_register_container_and_unflatten_misuse_name_the_line():
    with pytest.raises(TypeError) as info:
        line = _here() + 1
        rb.register_container(5, lambda x: ((), None), lambda aux, c: None)
    _starts_at(info.value, line)
    with pytest.raises(ValueError) as info:
        line = _here() + 1
        rb.register_container(list, lambda x: ((), None), lambda aux, c: None)
    _starts_at(info.value, line)
    structure = rb.tree.tree_structure([1.0, 2.0])
    with pytest.raises(ValueError) as info:
        line = _here() + 1
        structure.unflatten([1.0])
    _starts_at(info.value, line)


# -- UncheckedRuleWarning: exported, documented, and at the user's line ---------------------------


def test_unchecked_rule_warning_is_exported_and_points_at_the_users_line():
    import warnings

    import rulebridge
    assert "UncheckedRuleWarning" in rulebridge.__all__
    assert issubclass(rb.UncheckedRuleWarning, UserWarning)
    # a key no shipped status covers (rank 8), at an input where finite differences cannot
    # decide (sin at 1e8: steps of any size disagree); NaN inputs are checked at finite stand-ins
    x = np.array([1e8, 0.5]).reshape(1, 1, 1, 1, 1, 1, 1, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _here() + 1
        g = rb.grad(lambda v: np.sum(np.sin(v)), source="autograd")(x)
    unchecked = [w for w in caught if issubclass(w.category, rb.UncheckedRuleWarning)]
    assert unchecked, [str(w.message) for w in caught]
    for w in unchecked:
        assert (w.filename, w.lineno) == (__file__, line), (w.filename, w.lineno)
        assert "warnings.simplefilter('error', rulebridge.UncheckedRuleWarning)" in str(w.message)
    np.testing.assert_allclose(g.ravel(), np.cos(x.ravel()), rtol=1e-12)


@pytest.mark.parametrize("transformation", ["grad", "value_and_grad", "elementwise_grad",
                                            "jacobian", "jacrev", "jacfwd", "hessian", "hvp"])
def test_autograds_argnum_keyword_is_answered_with_argnums(transformation):
    # a program moved from autograd spells argnum=; the error names the keyword to use, at the
    # user's line, and the fix given as code works
    def f(x, y):
        return np.sum(np.sin(x) * y)

    build = getattr(rb, transformation)
    with pytest.raises(rb.UsageError) as info:
        line = _here() + 1
        build(f, argnum=1)
    text = _names_line(info.value, line)
    fix = text.splitlines()[1].strip()
    assert fix.endswith("(f, argnums=1)") and "argnum=" in text.splitlines()[0], text
    x, y = np.array([0.3, 1.2]), np.array([2.0, -1.0])
    np.testing.assert_allclose(rb.grad(f, argnums=1)(x, y), np.sin(x))  # what argnum=1 meant

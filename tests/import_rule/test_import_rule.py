"""`rulebridge.import_rule`: rules for functions NumPy's protocols never reach (scipy.special,
scipy.linalg, the user's own code), imported by name or through an equivalent, and checked."""

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import scipy.special

import rulebridge as rb

SOURCES = ["autograd", "jax"]


def finite_differences(f, x):
    """SciPy's forward-difference gradient of scalar `f`, for any shape of `x`."""
    flat = scipy.optimize.approx_fprime(x.ravel(), lambda v: f(v.reshape(x.shape)), 1e-7)
    return flat.reshape(x.shape)


def softplus(x):
    """A user's own NumPy function, opaque to NumPy's protocols in spirit."""
    return np.log1p(np.exp(x))


# -- by name -----------------------------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
def test_logsumexp_gradient_is_the_softmax(source):
    logsumexp = rb.import_rule(scipy.special.logsumexp, source)
    x = np.array([0.3, -1.2, 2.0, 0.0])
    np.testing.assert_allclose(rb.grad(logsumexp, source=source)(x), scipy.special.softmax(x),
                               rtol=1e-12)
    X = np.random.default_rng(0).normal(size=(3, 4))
    g = rb.grad(lambda X: np.sum(logsumexp(X, axis=1)), source=source)(X)
    np.testing.assert_allclose(g, scipy.special.softmax(X, axis=1), rtol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_imported_function_is_the_function_itself_on_plain_arrays(source):
    logsumexp = rb.import_rule(scipy.special.logsumexp, source)
    x = np.array([0.3, -1.2, 2.0])
    assert logsumexp(x, axis=0) == scipy.special.logsumexp(x, axis=0)
    assert logsumexp.__name__ == "logsumexp"
    assert logsumexp.__doc__ == scipy.special.logsumexp.__doc__
    value = rb.value_and_grad(logsumexp, source=source)(x)[0]
    assert value == scipy.special.logsumexp(x)  # the forward is SciPy's own, to the bit


@pytest.mark.parametrize("source", SOURCES)
def test_solve_triangular_with_lower_matches_finite_differences(source):
    solve_triangular = rb.import_rule(scipy.linalg.solve_triangular, source)
    rng = np.random.default_rng(1)
    L = np.tril(rng.normal(size=(4, 4))) + 4 * np.eye(4)
    b = rng.normal(size=4)
    w = rng.normal(size=4)
    loss = lambda L, b: np.sum(w * solve_triangular(L, b, lower=True)) ** 2
    gL, gb = rb.grad(loss, argnums=(0, 1), source=source)(L, b)
    plain = lambda L, b: np.sum(w * scipy.linalg.solve_triangular(L, b, lower=True)) ** 2
    np.testing.assert_allclose(gL, finite_differences(lambda L: plain(L, b), L), atol=1e-5)
    np.testing.assert_allclose(gb, finite_differences(lambda b: plain(L, b), b), atol=1e-5)
    assert rb.check_rule(scipy.linalg.solve_triangular, L, b, source=source, lower=True).passed
    _, tape = rb.trace(lambda L, b: solve_triangular(L, b, lower=True), L, b, source=source)
    assert len(tape) == 1 and f"solve_triangular(%0, %1, lower=True)  [{source}]" in str(tape)


def test_float32_stays_float32():
    logsumexp = rb.import_rule(scipy.special.logsumexp, "jax")
    x = np.array([0.3, -1.2, 2.0], np.float32)
    g = rb.grad(logsumexp, source="jax")(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, scipy.special.softmax(x.astype(np.float64)), rtol=1e-6)


def test_importing_an_imported_function_adds_a_source():
    from_autograd = rb.import_rule(scipy.special.logsumexp, "autograd")
    rb.import_rule(from_autograd, "jax")
    x = np.array([0.5, 1.5])
    for source in SOURCES:
        np.testing.assert_allclose(rb.grad(from_autograd, source=source)(x),
                                   scipy.special.softmax(x), rtol=1e-12)


def test_source_none_imports_from_every_adapter_with_a_counterpart():
    rb.import_rule(scipy.special.logsumexp)
    x = np.array([0.5, 1.5])
    for source in SOURCES:
        assert rb.rule_for(scipy.special.logsumexp, rb.signature_of((x,)), source).source == source


# -- through an equivalent ---------------------------------------------------------------------


def test_softplus_with_logaddexp_as_equivalent():
    import jax.numpy as jnp

    imported = rb.import_rule(softplus, "jax", equivalent=lambda x: jnp.logaddexp(0.0, x))
    x = np.linspace(-3.0, 3.0, 7)
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(imported(x)))(x), scipy.special.expit(x),
                               rtol=1e-12)


def test_decorator_form():
    import jax.numpy as jnp

    @rb.import_rule(source="jax", equivalent=lambda x: jnp.logaddexp(0.0, x))
    def my_softplus(x):
        return np.log1p(np.exp(x))

    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(my_softplus(x), np.log1p(np.exp(x)))
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(my_softplus(x)))(x),
                               scipy.special.expit(x), rtol=1e-12)


def test_several_outputs_are_one_op():
    import jax.numpy as jnp

    def moments(x):
        return np.mean(x), np.var(x)

    imported = rb.import_rule(moments, "jax", equivalent=lambda x: (jnp.mean(x), jnp.var(x)))
    x = np.array([1.0, 2.0, 4.0, 8.0])
    _, tape = rb.trace(lambda x: imported(x), x)
    assert len(tape) == 1 and "%1, %2 = moments(%0)  [jax]" in str(tape)
    g = rb.grad(lambda x: imported(x)[0] + 3 * imported(x)[1])(x)
    np.testing.assert_allclose(g, 1 / 4 + 3 * 2 * (x - x.mean()) / 4, rtol=1e-12)


def test_equivalent_with_other_values_is_refused_at_import():
    import jax.numpy as jnp

    with pytest.raises(rb.ImportRuleError, match=r"softplus.*differs in value"):
        rb.import_rule(softplus, "jax", equivalent=jnp.exp, signatures=["float64[:]"])
    assert softplus not in rb.REGISTRY._imports  # nothing half-registered


def test_equivalent_with_other_values_is_refused_at_first_use():
    import jax.numpy as jnp

    imported = rb.import_rule(softplus, "jax", equivalent=jnp.exp)
    with pytest.raises(rb.ImportRuleError, match=r"jax.numpy.exp from jax is not an equivalent "
                                                  r"of .*softplus at \(float64\[:\]\)"):
        rb.grad(lambda x: np.sum(imported(x)))(np.array([0.5, 1.0]))


@pytest.mark.parametrize("equivalent, message", [
    ("sum", r"the output is float64\[\] where the function's is float64\[3\]"),
    ("float32", r"the output is float32\[3\] where the function's is float64\[3\]"),
    ("pair", r"it returns 2 outputs, the function returns one output"),
])
def test_equivalent_with_other_shapes_or_dtypes_is_refused(equivalent, message):
    import jax.numpy as jnp

    equivalents = {"sum": lambda x: jnp.sum(jnp.logaddexp(0.0, x)),
                   "float32": lambda x: jnp.logaddexp(0.0, x).astype(jnp.float32),
                   "pair": lambda x: (jnp.logaddexp(0.0, x), x)}
    with pytest.raises(rb.ImportRuleError, match=r"softplus at \(float64\[:\]\): " + message):
        rb.import_rule(softplus, "jax", equivalent=equivalents[equivalent],
                       signatures="float64[:]")


def test_right_values_wrong_gradient_fails_its_check_naming_the_function():
    from autograd.extend import defvjp, primitive

    @primitive
    def bad_softplus(x):
        return np.logaddexp(0.0, x)

    defvjp(bad_softplus, lambda ans, x: lambda g: -g * scipy.special.expit(x))  # sign error
    imported = rb.import_rule(softplus, "autograd", equivalent=bad_softplus)
    with pytest.raises(rb.ImportRuleError, match=r"(?s)disagrees with .*softplus itself\.\n.*\n  fail"):
        rb.grad(lambda x: np.sum(imported(x)), source="autograd")(np.array([0.5, 1.0]))
    unchecked = rb.import_rule(softplus, "autograd", equivalent=bad_softplus, check=False)
    rb.grad(lambda x: np.sum(unchecked(x)), source="autograd")(np.array([0.5, 1.0]))
    (rule,) = [r for r in rb.rules() if r.function is softplus]
    assert rule.status == "unchecked"  # check=False: used, but never reported as verified


def test_verified_import_is_marked_pass():
    imported = rb.import_rule(scipy.special.logsumexp, "autograd")
    x = np.array([0.1, 0.2, 0.3])
    rb.grad(imported, source="autograd")(x)
    assert rb.rule_for(scipy.special.logsumexp, rb.signature_of((x,)), "autograd").status == "pass"


# -- what cannot be imported -------------------------------------------------------------------


def test_no_counterpart_lists_what_was_looked_for():
    with pytest.raises(rb.ImportRuleError, match=r"looked for jax\.scipy\.linalg\.solve_banded"):
        rb.import_rule(scipy.linalg.solve_banded, "jax")
    with pytest.raises(rb.ImportRuleError, match=r"autograd finds counterparts by name only for "
                                                  r"functions of numpy\.\* as autograd\.numpy\.\*"
                                                  r".*softplus is not one of them.*equivalent="):
        rb.import_rule(softplus, "autograd")
    with pytest.raises(rb.ImportRuleError, match=r"equivalent=.*needs the source"):
        rb.import_rule(softplus, equivalent=np.exp)


def test_an_adapter_that_is_not_installed_is_named():
    with pytest.raises(rb.ImportRuleError, match=r"from mylib: no rulebridge adapter named "
                                                  r"'mylib' is installed"):
        rb.import_rule(scipy.special.logsumexp, "mylib")


def test_signatures_restrict_the_import():
    imported = rb.import_rule(scipy.special.logsumexp, "jax", signatures=["float64[:]"])
    rb.grad(imported, source="jax")(np.array([1.0, 2.0]))
    with pytest.raises(rb.NoRuleError, match=r"imported from jax for \(float64\[:\]\) only"):
        rb.grad(imported, source="jax")(np.array([1.0, 2.0], np.float32))


def test_a_signature_the_source_cannot_take_is_refused_at_import():
    with pytest.raises(rb.ImportRuleError, match=r"at \(float16\[:\]\): argument 0 is "
                                                  r"float16\[:\]: dtype float16 is not supported"):
        rb.import_rule(scipy.special.logsumexp, "autograd", signatures=["float16[:]"])

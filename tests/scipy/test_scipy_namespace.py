"""`rulebridge.scipy`: SciPy's own values on plain arrays, imported rules on traced values.

References: float64 central differences of SciPy's own function, and `jax.grad` of the same
program written with `jax.scipy`. The adversarial inputs are the ones a symmetrised or
whole-matrix rule gets wrong: covariances and factors whose ignored triangle holds other values.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jla
import jax.scipy.special as jsp
import jax.scipy.stats as jst
import numpy as np
import pytest
import scipy.linalg
import scipy.signal
import scipy.special
import scipy.stats

import rulebridge
import rulebridge.scipy.linalg as rla
import rulebridge.scipy.signal as rsignal
import rulebridge.scipy.special as rspecial
import rulebridge.scipy.stats as rstats

from tests.support.numerical import central_difference

RNG = np.random.default_rng(17)
X = RNG.normal(size=6)
SOURCES = ("jax", "autograd")


def jax_grad(f, *args, argnums=0):
    with jax.enable_x64(True):
        out = jax.grad(f, argnums=argnums)(*args)
    return np.asarray(out) if not isinstance(out, tuple) else tuple(map(np.asarray, out))


# -- plain arrays: SciPy's values, to the bit ---------------------------------------------------

PLAIN_CALLS = [
    ("norm.logpdf", lambda m: m.stats.norm.logpdf(X, 0.3, scale=1.7)),
    ("t.logpdf", lambda m: m.stats.t.logpdf(X, 3.5, loc=0.1)),
    ("gamma.logpdf", lambda m: m.stats.gamma.logpdf(np.abs(X) + 0.1, 2.0)),
    ("poisson.logpmf", lambda m: m.stats.poisson.logpmf(np.arange(6), 2.5)),
    ("multivariate_normal.logpdf",
     lambda m: m.stats.multivariate_normal.logpdf(X[:3], np.zeros(3), np.eye(3) * 2)),
    ("logsumexp", lambda m: m.special.logsumexp(X)),
    ("softmax", lambda m: m.special.softmax(X)),
    ("solve_triangular", lambda m: m.linalg.solve_triangular(np.eye(6) + np.tril(
        np.outer(X, X) * 0.1), X, lower=True)),
    ("convolve", lambda m: m.signal.convolve(X, X[:3])),
]


class _Modules:
    def __init__(self, stats, special, linalg, signal):
        self.stats, self.special, self.linalg, self.signal = stats, special, linalg, signal


SCIPY = _Modules(scipy.stats, scipy.special, scipy.linalg, scipy.signal)
RULEBRIDGE = _Modules(rstats, rspecial, rla, rsignal)


@pytest.mark.parametrize("name, call", PLAIN_CALLS, ids=[n for n, _ in PLAIN_CALLS])
def test_plain_values_are_scipys_to_the_bit(name, call):
    got, want = call(RULEBRIDGE), call(SCIPY)
    assert type(got) is type(want)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_the_namespace_looks_like_scipys():
    assert rspecial.expit is scipy.special.expit  # a ufunc: NumPy's protocols bring it
    assert rspecial.logsumexp.__name__ == "logsumexp"
    # a method no source has a rule for is a drop-in too (which have one is known only by
    # asking the sources, which imports them); on plain values it is SciPy's own
    assert rstats.norm.rvs.scipy_function == scipy.stats.norm.rvs
    assert np.array_equal(rstats.norm.rvs(size=4, random_state=5),
                          scipy.stats.norm.rvs(size=4, random_state=5))
    assert rstats.norm(0.0, 2.0).std() == 2.0  # freezing is SciPy's
    assert rla.lu_factor is not scipy.linalg.lu_factor and rla.LinAlgError is \
        scipy.linalg.LinAlgError
    assert {"jax", "autograd"} <= set(rstats.norm.logpdf.sources)


LAZY = """
import sys
import numpy as np
import rulebridge.scipy.{module} as m
sources = ("jax", "jaxlib", "autograd", "rulebridge_jax", "rulebridge_autograd")
print(sorted(s for s in sources if s in sys.modules))
{plain}
print(sorted(s for s in sources if s in sys.modules))
"""


@pytest.mark.parametrize("module, plain", [
    ("stats", "m.norm.logpdf(np.arange(3.0), 0.5); m.multivariate_normal.logpdf(np.ones(2), "
              "np.zeros(2), np.eye(2)); m.norm.logpdf"),
    ("special", "m.logsumexp(np.arange(3.0)); m.softmax(np.arange(3.0))"),
    ("linalg", "m.solve_triangular(np.eye(3), np.ones(3)); m.cholesky(np.eye(3)); repr(m.eigh)"),
    ("signal", "m.convolve(np.ones(3), np.ones(2))"),
    ("integrate", "m.odeint(lambda y, t: -y, np.ones(2), np.arange(3.0))"),
])
def test_importing_and_plain_calls_import_no_source(module, plain):
    # Asking an adapter which SciPy names it has imports its library (JAX: seconds); that waits
    # for the first traced call. The check runs in a fresh process: this one has JAX loaded.
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", LAZY.format(module=module, plain=plain)],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:2] == ["[]", "[]"], out


def test_the_first_traced_call_imports_the_rules():
    import subprocess
    import sys

    program = LAZY.format(module="stats", plain="") + (
        "import rulebridge\n"
        "x = np.array([0.3, -1.2])\n"
        "print(m.norm.logpdf)\n"
        "g = rulebridge.grad(lambda x: np.sum(m.norm.logpdf(x, 0.5, 2.0)))(x)\n"
        "print(list(map(str, m.norm.logpdf.sources)), np.allclose(g, -(x - 0.5) / 4.0, rtol=1e-14))\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True).stdout.split("\n")
    assert out[2] == "<rulebridge drop-in scipy.stats.norm.logpdf (rules not imported yet)>"
    assert out[3] == "['autograd', 'jax'] True", out


# -- gradients ---------------------------------------------------------------------------------

STATS_CASES = [
    # (name, rulebridge program, SciPy program, jax program, arguments)
    ("norm.logpdf loc scale=",
     lambda x, m, s: np.sum(rstats.norm.logpdf(x, m, scale=s)),
     lambda x, m, s: np.sum(scipy.stats.norm.logpdf(x, m, scale=s)),
     lambda x, m, s: jnp.sum(jst.norm.logpdf(x, m, scale=s)), (X, np.array(0.2), np.array(1.3))),
    ("t.logpdf df",
     lambda x, df: np.sum(rstats.t.logpdf(x, df)),
     lambda x, df: np.sum(scipy.stats.t.logpdf(x, df)),
     lambda x, df: jnp.sum(jst.t.logpdf(x, df)), (X, np.array(2.5))),
    ("gamma.logpdf a",
     lambda x, a: np.sum(rstats.gamma.logpdf(x, a)),
     lambda x, a: np.sum(scipy.stats.gamma.logpdf(x, a)),
     lambda x, a: jnp.sum(jst.gamma.logpdf(x, a)), (np.abs(X) + 0.2, np.array(1.7))),
    ("beta.logpdf a b",
     lambda x, a, b: np.sum(rstats.beta.logpdf(x, a, b)),
     lambda x, a, b: np.sum(scipy.stats.beta.logpdf(x, a, b)),
     lambda x, a, b: jnp.sum(jst.beta.logpdf(x, a, b)),
     (np.linspace(0.2, 0.8, 4), np.array(1.5), np.array(2.5))),
    ("dirichlet.logpdf alpha",
     lambda a: rstats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a),
     lambda a: scipy.stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a),
     lambda a: jst.dirichlet.logpdf(jnp.array([0.2, 0.3, 0.5]), a), (np.array([1.2, 2.0, 3.1]),)),
    ("poisson.logpmf mu",
     lambda mu: np.sum(rstats.poisson.logpmf(np.arange(5), mu)),
     lambda mu: np.sum(scipy.stats.poisson.logpmf(np.arange(5), mu)),
     lambda mu: jnp.sum(jst.poisson.logpmf(jnp.arange(5), mu)), (np.array(1.8),)),
    ("binom.logpmf p",
     lambda p: np.sum(rstats.binom.logpmf(np.arange(5), 10, p)),
     lambda p: np.sum(scipy.stats.binom.logpmf(np.arange(5), 10, p)),
     lambda p: jnp.sum(jst.binom.logpmf(jnp.arange(5), 10, p)), (np.array(0.3),)),
    ("expon laplace cauchy logistic",
     lambda x: np.sum(rstats.expon.logpdf(x + 3) + rstats.laplace.logpdf(x + 0.05)
                      + rstats.cauchy.cdf(x) + rstats.logistic.sf(x)),
     lambda x: np.sum(scipy.stats.expon.logpdf(x + 3) + scipy.stats.laplace.logpdf(x + 0.05)
                      + scipy.stats.cauchy.cdf(x) + scipy.stats.logistic.sf(x)),
     lambda x: jnp.sum(jst.expon.logpdf(x + 3) + jst.laplace.logpdf(x + 0.05)
                       + jst.cauchy.cdf(x) + jst.logistic.sf(x)), (X,)),
]


# dirichlet's x is on the simplex: the first-use check, in alpha alone, never steps off it
@pytest.mark.filterwarnings("error::rulebridge.UncheckedRuleWarning")
@pytest.mark.parametrize("name, f, scipy_f, jax_f, args", STATS_CASES,
                         ids=[c[0] for c in STATS_CASES])
def test_stats_gradients_match_scipy_and_jax(name, f, scipy_f, jax_f, args):
    argnums = tuple(range(len(args)))
    got = rulebridge.grad(f, argnums=argnums)(*args)
    for i in argnums:
        np.testing.assert_allclose(got[i], central_difference(scipy_f, args, i),
                                   rtol=1e-6, atol=1e-8)
    reference = jax_grad(jax_f, *args, argnums=argnums)
    for i in argnums:
        np.testing.assert_allclose(got[i], reference[i], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_float32_inputs_get_float32_gradients(source):
    # SciPy computes scipy.stats in float64 (partly float32 first) whatever the inputs' dtype;
    # JAX keeps float32: its function is called on float64 copies, as SciPy's effectively is.
    x32, loc = X.astype(np.float32), np.array(0.2, np.float32)
    got = rulebridge.grad(lambda x, m: np.sum(rstats.norm.logpdf(x, m, 1.3)), argnums=(0, 1),
                          source=source)(x32, loc)
    assert got[0].dtype == got[1].dtype == np.float32
    scipy_f = lambda x, m: np.sum(scipy.stats.norm.logpdf(x, m, 1.3))  # noqa: E731
    for i in (0, 1):
        np.testing.assert_allclose(got[i], central_difference(scipy_f, (X, np.array(0.2)), i),
                                   rtol=1e-4, atol=1e-5)


def test_vae_objective_matches_jax():
    # An importance-weighted bound: decoder likelihood and prior by norm.logpdf, the weights
    # combined by logsumexp over samples.
    rng = np.random.default_rng(3)
    data, eps = rng.normal(size=(4, 3)), rng.normal(size=(5, 4, 2))
    params = (rng.normal(size=(3, 2)) * 0.5, rng.normal(size=(3, 2)) * 0.3,
              rng.normal(size=(2, 3)) * 0.5)

    def make(stats, special, npx):
        def objective(w_mu, w_logvar, w_dec):
            mu, logvar = data @ w_mu, data @ w_logvar
            std = npx.exp(0.5 * logvar)
            z = mu + std * eps
            log_px = npx.sum(stats.norm.logpdf(data, z @ w_dec, 0.8), axis=-1)
            log_pz = npx.sum(stats.norm.logpdf(z), axis=-1)
            log_qz = npx.sum(stats.norm.logpdf(z, mu, std), axis=-1)
            return npx.mean(special.logsumexp(log_px + log_pz - log_qz, axis=0) - np.log(5))
        return objective

    ours = make(rstats, rspecial, np)
    value, got = rulebridge.value_and_grad(ours, argnums=(0, 1, 2))(*params)
    assert value == make(scipy.stats, scipy.special, np)(*params)
    want = jax_grad(make(jst, jsp, jnp), *params, argnums=(0, 1, 2))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def _kernel(theta, points):
    sq = (points[:, None] - points[None, :]) ** 2
    return theta[0] * np.exp(-sq / theta[1]) + 0.1 * np.eye(len(points))


@pytest.mark.parametrize("source", SOURCES)
def test_gaussian_process_likelihood_with_a_non_symmetric_cov(source):
    # cov's lower triangle is the kernel and its upper triangle something else entirely: SciPy
    # reads the lower triangle only, so the upper must get a zero gradient and the lower twice
    # the symmetric one off the diagonal. A symmetrised rule gets both wrong.
    points, y = np.linspace(0, 2, 5), np.sin(np.linspace(0, 2, 5))
    junk = np.triu(RNG.normal(size=(5, 5)), 1)

    def likelihood(stats):
        def f(theta, raw):
            cov = _kernel(theta, points) + junk * theta[0] + raw
            return stats.multivariate_normal.logpdf(y, np.zeros(5), cov)
        return f

    theta, raw = np.array([1.3, 0.7]), np.zeros((5, 5))
    got = rulebridge.grad(likelihood(rstats), argnums=(0, 1), source=source)(theta, raw)
    scipy_f = likelihood(scipy.stats)
    np.testing.assert_allclose(got[0], central_difference(scipy_f, (theta, raw), 0),
                               rtol=1e-6, atol=1e-8)
    raw_reference = central_difference(scipy_f, (theta, raw), 1)
    np.testing.assert_allclose(got[1], raw_reference, rtol=1e-6, atol=1e-8)
    assert np.all(got[1][np.triu_indices(5, 1)] == 0)
    assert np.abs(raw_reference[np.tril_indices(5, -1)]).min() > 1e-4  # the test can fail


def test_solve_triangular_and_cho_solve_ignore_the_other_triangle():
    a = RNG.normal(size=(4, 4)) + 4 * np.eye(4)  # both triangles full: only one is read
    b = RNG.normal(size=(4, 2))

    def program(linalg):
        def f(a, b):
            x = linalg.solve_triangular(a, b, lower=True)
            y = linalg.cho_solve((a, False), x)
            return np.sum(np.sin(x) * y)
        return f

    got = rulebridge.grad(program(rla), argnums=(0, 1))(a, b)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], central_difference(program(scipy.linalg), (a, b), i),
                                   rtol=1e-6, atol=1e-8)

    def jax_program(a, b):
        x = jla.solve_triangular(jnp.tril(a), b, lower=True)
        return jnp.sum(jnp.sin(x) * jla.cho_solve((jnp.triu(a), False), x))

    np.testing.assert_allclose(got[0], jax_grad(jax_program, a, b), rtol=1e-9, atol=1e-12)


def test_cholesky_reads_the_upper_triangle_by_default():
    s = RNG.normal(size=(4, 4))
    a = s @ s.T + 4 * np.eye(4) + np.tril(RNG.normal(size=(4, 4)), -1)  # junk below

    def f(linalg):
        return lambda a: np.sum(np.cos(linalg.cholesky(a)))

    got = rulebridge.grad(f(rla))(a)
    np.testing.assert_allclose(got, central_difference(f(scipy.linalg), (a,)), rtol=1e-6,
                               atol=1e-8)
    assert np.all(np.tril(got, -1) == 0)


# -- a plain SciPy call on a traced value --------------------------------------------------------


def test_a_plain_scipy_call_names_the_function_and_the_fix():
    with pytest.raises(rulebridge.TracingError) as info:
        rulebridge.grad(lambda x: np.sum(scipy.stats.norm.logpdf(x, 0.0, 1.0)))(X)
    message = info.value.message  # str() starts with this file's line
    assert message.startswith("scipy.stats.norm.logpdf converted a traced value")
    fix = "`import rulebridge.scipy.stats as stats`"
    assert fix in message.splitlines()[1] and "buf[i] = x" not in message  # one cause


def test_a_conversion_in_the_users_own_code_is_not_blamed_on_scipy():
    import scipy.integrate

    import rulebridge.scipy.integrate as rintegrate

    asarray = np.asarray  # bound before the trace: NumPy's own, which refuses a traced value

    def dynamics(y, t):  # called by SciPy's odeint, but the conversion here is the user's
        return -asarray(y)

    # the dynamics are traced when the rule is checked before its first use
    with pytest.raises(rulebridge.ImportRuleError) as info:
        rulebridge.grad(lambda y0: np.sum(rintegrate.odeint(dynamics, y0, np.arange(3.0))))(X)
    message = str(info.value)
    assert "its pullback raised TracingError: np.asarray, np.array or a library" in message
    assert "odeint converted" not in message
    assert scipy.integrate.odeint is not rintegrate.odeint
    # spelled np.asarray(y) in the dynamics it is followed (issue 25): d/dy0 sum_t y0 e^-t
    got = rulebridge.grad(lambda y0: np.sum(rintegrate.odeint(
        lambda y, t: -np.asarray(y), y0, np.arange(3.0))))(X)
    np.testing.assert_allclose(got, np.full(len(X), np.exp(-np.arange(3.0)).sum()), rtol=1e-6)


def test_a_function_rulebridge_scipy_lacks_gets_the_import_rule_line():
    import scipy.ndimage

    with pytest.raises(rulebridge.TracingError) as info:
        rulebridge.grad(lambda x: np.sum(scipy.ndimage.map_coordinates(x, [[0.5, 1.5]])))(X)
    message = info.value.message
    assert message.startswith("scipy.ndimage.map_coordinates converted a traced value")
    assert "rulebridge.import_rule(scipy.ndimage.map_coordinates)" in message


# -- odeint: a parameter fit through dynamics written in plain NumPy ------------------------------


def test_odeint_parameter_fit():
    import scipy.integrate
    import scipy.optimize

    import rulebridge.scipy.integrate as rintegrate

    def dynamics(y, t, k):  # np.sin: autograd could not differentiate this function itself
        return np.stack([y[1], -k[0] * np.sin(y[0]) - k[1] * y[1]])

    times, y0, truth = np.linspace(0, 3, 7), np.array([1.0, 0.0]), np.array([2.0, 0.4])
    observed = scipy.integrate.odeint(dynamics, y0, times, args=(truth,), rtol=1e-10, atol=1e-10)

    def loss(integrate):
        def f(k):
            path = integrate.odeint(dynamics, y0, times, args=(k,), rtol=1e-10, atol=1e-10)
            return np.sum((path - observed) ** 2)
        return f

    start = np.array([1.5, 0.2])
    value, gradient = rulebridge.value_and_grad(loss(rintegrate))(start)
    assert value == loss(scipy.integrate)(start)
    np.testing.assert_allclose(gradient, central_difference(loss(scipy.integrate), (start,),
                                                            h=1e-5), rtol=1e-5)
    fit = scipy.optimize.minimize(rulebridge.value_and_grad(loss(rintegrate)), start, jac=True,
                                  method="BFGS")
    np.testing.assert_allclose(fit.x, truth, rtol=1e-4)


def _nn_predict(inputs, t, params, scale=1.0, unused=None):
    """autograd's ode_net dynamics (tanh for its relu, which has a kink)."""
    for W, b in (params["layers"] if isinstance(params, dict) else params):
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs * scale


_RS = np.random.RandomState(0)
_PARAMS = [(_RS.randn(2, 3) * 0.5, _RS.randn(3) * 0.5), (_RS.randn(3, 2) * 0.5, _RS.randn(2) * 0.5)]
_Y0, _TIMES = np.array([1.0, 0.0]), np.linspace(0.0, 1.0, 4)


@pytest.mark.parametrize("call", [
    # autograd's ode_net: `args` positional, a keyword after it
    lambda integrate, p: integrate.odeint(_nn_predict, _Y0, _TIMES, tuple((p,)), rtol=1e-10,
                                          atol=1e-10),
    # by keyword, among plain extras, in a dict
    lambda integrate, p: integrate.odeint(_nn_predict, _Y0, _TIMES, rtol=1e-10, atol=1e-10,
                                          args=({"layers": p}, 0.7, None)),
])
def test_odeint_takes_args_positionally_and_nested_parameters_as_autograds_example(call):
    """autograd's ode_net example: odeint(nn_predict, y0, t, tuple((params,)), rtol=...), its
    `args` positional and holding a list of (W, b) pairs. It raised "got a traced value as
    keyword argument 'args', which has no positional slot" when a keyword came along, and then
    recursed without end: the tape unboxes one list deep, the boxes two lists down reached the
    op's forward, the drop-in itself, which recorded the call again."""
    import scipy.integrate

    import rulebridge.scipy.integrate as rintegrate

    def loss(integrate):
        return lambda p: np.sum(call(integrate, p) ** 2)

    value, g = rulebridge.value_and_grad(loss(rintegrate))(_PARAMS)
    assert value == loss(scipy.integrate)(_PARAMS)
    vector, unflatten = rulebridge.flatten(_PARAMS)
    expected = central_difference(lambda v: loss(scipy.integrate)(unflatten(v)), (vector,),
                                  h=1e-5)
    assert isinstance(g, list) and [len(pair) for pair in g] == [2, 2]
    np.testing.assert_allclose(rulebridge.flatten(g)[0], expected, rtol=1e-5, atol=1e-8)

"""Adapters as plugins: a third-party adapter (tests/adapters/example_adapter) installed into a
temporary directory and found through its entry point, broken adapters, and how `source=None` chooses
among several adapters' rules."""

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.registry import Registry
from rulebridge.checking.status import STATUS_FILE

from tests.support.plugins import EXAMPLE_ADAPTER, install

DISTRIBUTIONS = [EXAMPLE_ADAPTER, EXAMPLE_ADAPTER / "broken"]
PLUGINS = ("example", "malformed", "raises-on-import")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    for project in DISTRIBUTIONS:
        install(project, site)
    return site


@pytest.fixture
def installed(site):
    """The plugins on sys.path for one test; afterwards the process is as it was."""
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    rb.REGISTRY.rediscover()
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        for module in [m for m in sys.modules if m.startswith("rulebridge_example")]:
            del sys.modules[module]
        importlib.invalidate_caches()
        rb.REGISTRY.rediscover()
        assert not set(PLUGINS) & set(rb.adapters())


# -- the worked example ------------------------------------------------------------------------


def test_adapters_lists_the_plugins_without_importing_them(installed):
    found = {str(a): a for a in rb.adapters()}
    assert set(PLUGINS) <= set(found)
    assert found["example"].distribution == "rulebridge-example" and found["example"].available
    assert "rulebridge_example" not in sys.modules  # listed, not imported


def test_example_adapter_differentiates_numpy_code(installed):
    import autograd
    import autograd.numpy as anp

    x = np.linspace(-1.0, 1.0, 5)
    f = lambda x: np.sum(np.tanh(np.sin(np.exp(x))))
    g = rb.grad(f, source="example")(x)
    reference = autograd.grad(lambda x: anp.sum(anp.tanh(anp.sin(anp.exp(x)))))(x)
    np.testing.assert_allclose(g, reference, rtol=1e-13)
    _, tape = rb.trace(f, x, source="example")
    assert "[example]" in str(tape)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_the_example_adapter_s_pushforwards_pass_their_check(installed, dtype):
    x = np.linspace(0.2, 0.9, 4).astype(dtype)
    if dtype is np.complex128:
        x = x + 0.3j * x[::-1]
    for function in (np.sin, np.cos, np.exp, np.tanh, np.log1p, np.sum):
        rule = rb.lookup(function, rb.signature_of((x,)), source="example")
        assert rb.check_pushforward(rule, (x,)).status == "pass", function
    v = np.cos(x)
    _, ydot = rb.jvp(lambda x: np.tanh(np.sin(x)), (x,), (v,), source="example")
    np.testing.assert_allclose(ydot, (1 - np.tanh(np.sin(x)) ** 2) * np.cos(x) * v, rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_check_rule_verifies_the_example_rules(installed, dtype):
    x = np.linspace(0.2, 0.9, 4).astype(dtype)
    if dtype is np.complex128:
        x = x + 0.3j * x[::-1]  # off the real line, where a conjugation error would show
    for function in (np.sin, np.cos, np.exp, np.tanh, np.log1p, np.sum):
        result = rb.check_rule(function, x, source="example")
        assert result.status == "pass", result.describe()
    X = x[:, None] * x
    for kwargs in ({"axis": 0}, {"axis": 1, "keepdims": True}):
        assert rb.check_rule(np.sum, X, source="example", **kwargs).passed


def test_example_adapter_appears_in_the_matrix(site, tmp_path):
    path = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    out, json_path = tmp_path / "compat_matrix.md", tmp_path / "compat_matrix.json"
    shipped = STATUS_FILE.read_bytes()
    subprocess.run([sys.executable, "-m", "rulebridge.cli", "matrix", "--source", "example",
                    "--jobs", "1"], check=True, env=env, cwd=tmp_path, timeout=600)
    assert STATUS_FILE.read_bytes() == shipped  # the package's shipped status is not a user's
    cells = json.loads(json_path.read_text())["cells"]
    example = [c for c in cells if c["source"] == "example"]
    assert {c["status"] for c in example if c["dtype"] != "gradgrad"} == {"pass"}, example
    covered = {(c["function"], c["dtype"]) for c in example}
    assert covered == {(f"numpy.{name}", dtype)
                       for name in ("sin", "cos", "exp", "tanh", "log1p", "sum")
                       for dtype in ("float32", "float64", "complex128", "jvp", "gradgrad")}
    # its second order: its pullbacks are NumPy code, whose own ops (multiply) it has no rule
    # for, so with this source alone they cannot be differentiated again, and the column says so
    second = {c["status"] for c in example if c["dtype"] == "gradgrad"}
    assert second == {"error"}, example
    assert "example" in out.read_text()


def test_an_adapter_without_import_hooks_says_so(installed):
    import scipy.special

    with pytest.raises(rb.ImportRuleError, match=r"from example: it does not implement "
                                                  r"Adapter.import_rule"):
        rb.import_rule(scipy.special.logsumexp, "example")


# -- broken adapters ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::rulebridge.AdapterWarning")  # malformed, tested below
def test_an_adapter_that_fails_to_import_is_named_and_the_others_keep_working(installed):
    with pytest.raises(rb.AdapterError, match=r"'raises-on-import' .*rulebridge-example-broken"
                                              r".*failed to load: RuntimeError: libexample.so"):
        rb.vjp(np.sin, np.ones(3), source="raises-on-import")
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(np.sin(x)))(x), np.cos(x), rtol=1e-15)
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(np.sin(x)), source="example")(x),
                               np.cos(x), rtol=1e-15)


def test_a_malformed_rule_names_the_adapter_and_the_others_keep_working(installed):
    x = np.array([0.1, 0.2])
    with pytest.raises(rb.AdapterError, match=r"'malformed' returned tuple for numpy.sin"):
        rb.vjp(np.sin, x, source="malformed")
    with pytest.raises(rb.UnverifiedRuleError, match=r"malformed: error: .*shape"):
        rb.vjp(np.cos, x, source="malformed")  # by default its check at first use stops it
    with rb.trust():  # and trusted, the engine's cheap checks do
        _, pullback = rb.vjp(np.cos, x, source="malformed")
        with pytest.raises(rb.RuleContractError, match=r"malformed rule for numpy.cos.*shape"):
            pullback(np.ones(2))
    assert rb.check_rule(np.cos, x, source="malformed").status == "error"
    # With every adapter asked, the malformed one is reported and skipped.
    rb.prefer(np.sin, "malformed", "example")
    try:
        with pytest.warns(rb.AdapterWarning, match="'malformed' returned tuple"):
            g = rb.grad(lambda x: np.sum(np.sin(x)))(x)
    finally:
        rb.REGISTRY._per_function.pop(np.sin, None)
        rb.REGISTRY._invalidate()
    np.testing.assert_allclose(g, np.cos(x), rtol=1e-15)


# -- choosing among sources --------------------------------------------------------------------


def wave(x):
    """A function only the two test adapters below cover."""
    return np.sin(3 * x)


class Wave(rb.Adapter):
    """Hand-written rules for `wave`: `delay` slows the pullback, `sign=-1` makes it wrong."""

    def __init__(self, name: str, delay: float = 0.0, sign: float = 1.0) -> None:
        self.name, self.delay, self.sign = name, delay, sign

    def build_rule(self, function, signature):
        if function is not wave:
            raise rb.Declined("covers wave only")

        def pullback(x, g, argnums):
            time.sleep(self.delay)
            return (self.sign * 3 * np.cos(3 * x) * g,)

        return rb.Rule(wave, signature, lambda args, kwargs: (wave(*args), args[0]), pullback,
                       source=self.name)


@pytest.fixture
def two_sources():
    rb.register_adapter(Wave("a_slow", delay=0.02))  # well above a loaded machine's noise
    rb.register_adapter(Wave("b_fast"))
    yield
    for name in ("a_slow", "b_fast"):
        rb.REGISTRY.unregister(name)
    rb.REGISTRY._per_function.pop(wave, None)


def chosen(x) -> str:
    return rb.rule_for(wave, rb.signature_of((x,))).source


def record(result) -> None:
    rb.REGISTRY.set_status(result.function, result.source, result.signature, result.status)


def test_the_faster_measured_rule_is_chosen(two_sources):
    x = np.linspace(0.0, 1.0, 4)
    assert chosen(x) == "a_slow"  # nothing measured: the preference order
    seconds = rb.measure_rules(wave, x)
    assert seconds["a_slow"] > seconds["b_fast"]
    assert chosen(x) == "b_fast"
    assert chosen(x.astype(np.float32)) == "a_slow"  # measured per signature


def test_a_verified_rule_wins_over_a_faster_unverified_one(two_sources):
    x = np.linspace(0.0, 1.0, 4)
    rb.measure_rules(wave, x)  # measured, not checked: both stay unverified
    record(rb.check_rule(wave, x, source="a_slow"))
    assert chosen(x) == "a_slow"
    record(rb.check_rule(wave, x, source="b_fast"))
    assert chosen(x) == "b_fast"  # both verified: the faster


def test_a_failed_rule_is_never_chosen_over_another(two_sources):
    rb.REGISTRY.unregister("b_fast")
    rb.register_adapter(Wave("b_fast", sign=-1.0))
    x = np.linspace(0.0, 1.0, 4)
    rb.measure_rules(wave, x)
    result = rb.check_rule(wave, x, source="b_fast")
    assert result.status == "fail"
    record(result)
    assert chosen(x) == "a_slow"
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(wave(x)))(x), 3 * np.cos(3 * x))


def test_prefer_for_one_function_outranks_speed(two_sources):
    x = np.linspace(0.0, 1.0, 4)
    rb.measure_rules(wave, x)
    rb.prefer(wave, "a_slow")
    assert chosen(x) == "a_slow"


def test_with_no_adapter_installed_the_error_says_how_to_install_one():
    registry = Registry()
    for name in list(registry.infos()):
        registry.unregister(name)
    with pytest.raises(rb.NoRuleError) as caught:
        registry.require(np.sin, rb.signature_of((np.ones(3),)))
    message = str(caught.value)
    assert "No rulebridge adapter is installed" in message
    assert "pip install -e adapters/NAME" in message and "requirements-dev.txt" in message
    assert "dtype" not in message  # the advice is about installing, not about the arguments

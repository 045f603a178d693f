"""The pytest plugin's `check_grads` fixture, as a user's test suite uses it: a test file of
its own, run by pytest in a subprocess (the plugin found through its entry point)."""

from __future__ import annotations

import inspect
import textwrap

import pytest

from tests.support.adapters import OffByOnePercent  # the user's wrong rule, in their file

pytest_plugins = ["pytester"]

USER_TESTS = textwrap.dedent("""
    import numpy as np
    import pytest
    import rulebridge as rb


    def loss(params, x):
        h = np.tanh(x @ params["layers"][0][0] + params["layers"][0][1])
        return {"loss": np.sum(h ** 2) * params["scale"], "h": h}


    PARAMS = {"layers": [(np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([0.1, -0.1]))],
              "scale": 0.7}
    X = np.array([[1.0, 2.0], [0.5, -1.0]])


    def test_a_right_gradient(check_grads):
        assert 0.0 <= check_grads(loss, PARAMS, X) < 1e-6
        assert check_grads(loss, PARAMS, X, argnums=0, directions=5) < 1e-6


    ADAPTER

    @pytest.fixture
    def off_by_one_percent():
        rb.register_adapter(OffByOnePercent())
        with rb.trust():  # used unchecked: only check_grads can find the error
            yield OffByOnePercent.name
        rb.REGISTRY.unregister(OffByOnePercent.name)


    def test_a_wrong_gradient(check_grads, off_by_one_percent):
        check_grads(lambda p: np.tanh(p["b"]), {"b": np.array([1.0, 2.0])},
                    source=off_by_one_percent)
""".replace("    ADAPTER\n", textwrap.indent(inspect.getsource(OffByOnePercent), "    ")))


def run(pytester, *options):
    pytester.makepyfile(test_user=USER_TESTS)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", *options)


def test_the_fixture_passes_a_right_gradient_and_fails_a_wrong_one(pytester):
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*test_a_wrong_gradient*",
        "*check_grads(*<lambda>): the gradient disagrees with central differences*relative error*"
        "> rtol 1e-06*(source 'off-by-one-percent')",
    ])
    assert "During handling" not in result.stdout.str()
    assert "rulebridge/api.py" not in result.stdout.str()  # the message, not rulebridge's frames


EACH_SOURCE = textwrap.dedent('''
    import numpy as np
    import rulebridge as rb
    from test_user import OffByOnePercent

    rb.register_adapter(OffByOnePercent())
    rb.trust()  # unverified rules used unchecked, in this process only


    def test_tanh(check_grads):
        check_grads(np.tanh, np.array([0.5, -1.0]))
''')


@pytest.mark.parametrize("sources, failed", [
    (("autograd", "jax"), 0),
    (("autograd", "off-by-one-percent", "jax"), 1),
])
def test_the_fixture_checks_each_source_given(pytester, sources, failed):
    pytester.makepyfile(test_each_source=EACH_SOURCE)
    options = [a for s in sources for a in ("--rulebridge-source", s)]
    result = run(pytester, "test_each_source.py", *options)
    result.assert_outcomes(passed=1 - failed, failed=failed)
    if failed:
        result.stdout.fnmatch_lines(["*relative error*(source 'off-by-one-percent')"])

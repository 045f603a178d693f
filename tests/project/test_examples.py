"""Every program in examples/ runs and passes its own assertions, at small sizes.

Each runs in a fresh interpreter, as a user would run it: the examples register adapters and
set preferences, which must not leak into the other tests."""

import os
import subprocess
import sys

import pytest
from tests.support.paths import ROOT

EXAMPLES = ROOT / "examples"

# example -> keyword arguments of its main() that keep the test quick
SMALL = {
    "logistic_regression": {"n_samples": 200},
    "gaussian_process": {"n_points": 30},
    "ode_fit": {"n_steps": 40, "dt": 0.15, "every": 2},
    "custom_adapter": {},
    "mlp": {"steps": 300},
    "newton_rosenbrock": {"n": 6},
    "jit_training": {"steps": 100},
}


def run_main(name: str, kwargs: dict) -> subprocess.CompletedProcess:
    # run_name other than "__main__": the file's definitions, not its full-size script block
    path = str(EXAMPLES / f"{name}.py")
    code = f"import runpy; runpy.run_path({path!r}, run_name={name!r})['main'](**{kwargs!r})"
    # warnings are errors: an example that overflows or divides by zero on its way is wrong
    return subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                          text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, timeout=300)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_runs_and_its_assertions_hold(name):
    result = run_main(name, SMALL[name])
    assert result.returncode == 0, f"examples/{name}.py failed:\n{result.stdout}\n{result.stderr}"


def test_every_example_is_run_by_this_file():
    assert {p.stem for p in EXAMPLES.glob("*.py")} == set(SMALL)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_runs_as_a_script_at_its_own_sizes(name):
    result = subprocess.run([sys.executable, "-W", "error", str(EXAMPLES / f"{name}.py")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"examples/{name}.py failed:\n{result.stdout}\n{result.stderr}"

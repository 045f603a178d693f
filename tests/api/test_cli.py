"""The `rulebridge` command as a user runs it: `--version`, `python -m rulebridge`, `demo`."""

import os
import re
import shutil
import subprocess
import sys
import tomllib

import numpy as np
import pytest

import rulebridge
from rulebridge.demo import loss
from tests.support.paths import ROOT


def run(*command: str, **options) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, **options)


def test_python_m_rulebridge_version_prints_the_package_version():
    result = run(sys.executable, "-m", "rulebridge", "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"rulebridge {rulebridge.__version__}\n"


def test_version_is_written_once_and_the_distribution_reads_it():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in config["project"] and "version" in config["project"]["dynamic"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "rulebridge.__version__"}
    assert [int(part) for part in rulebridge.__version__.split(".")]  # a plain release number


@pytest.mark.skipif(shutil.which("rulebridge") is None, reason="the console script is not installed")
def test_console_script_version():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # this checkout's rulebridge
    result = run("rulebridge", "--version", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"rulebridge {rulebridge.__version__}\n"


def test_help_lists_the_python_transformations_and_each_exists():
    result = run(sys.executable, "-m", "rulebridge", "--help")
    assert result.returncode == 0, result.stderr
    listed = re.findall(r"rulebridge\.(\w+)\(|, (\w+)\(", result.stdout.split("in Python")[1])
    names = {name for pair in listed for name in pair if name}
    assert {"grad", "vjp", "jvp", "jacfwd", "jacrev", "linearize", "hessian", "hvp", "jit"} <= names
    assert names <= set(rulebridge.__all__), names - set(rulebridge.__all__)


def test_no_command_is_an_error_that_lists_the_commands():
    result = run(sys.executable, "-m", "rulebridge")
    assert result.returncode == 2
    assert "demo" in result.stderr and "matrix" in result.stderr


def test_demo_prints_numpys_loss_and_a_gradient_central_differences_agree_with():
    result = run(sys.executable, "-m", "rulebridge", "demo")
    assert result.returncode == 0, result.stderr
    # the demo's inputs, as it makes them
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(8, 4)), rng.integers(0, 3, size=8)
    W1, W2 = rng.normal(size=(4, 5)) * 0.5, rng.normal(size=(5, 3)) * 0.5
    assert f"loss = {loss(W1, W2, X, y):.6f}" in result.stdout
    h, gW1 = 1e-6, np.zeros_like(W1)
    for index in np.ndindex(W1.shape):
        step = np.zeros_like(W1)
        step[index] = h
        gW1[index] = (loss(W1 + step, W2, X, y) - loss(W1 - step, W2, X, y)) / (2 * h)
    assert f"|d loss / d W1| = {np.linalg.norm(gW1):.6f}" in result.stdout
    assert "Tape with 12 ops" in result.stdout


def test_demo_dot_writes_the_tape_it_lists(tmp_path):
    target = tmp_path / "tape.dot"
    result = run(sys.executable, "-m", "rulebridge", "demo", "--dot", str(target))
    assert result.returncode == 0, result.stderr
    text = target.read_text()
    assert text.startswith("digraph tape {") and text.rstrip().endswith("}")
    assert text.count("shape=\"box\"") == 12  # one box per op of "Tape with 12 ops"


def test_demo_dot_dash_prints_only_dot_text_for_a_pipe():
    result = run(sys.executable, "-m", "rulebridge", "demo", "--dot", "-")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("digraph tape {") and result.stdout.endswith("}\n")

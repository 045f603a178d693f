"""What a distribution carries besides code: the licence, classifiers PyPI accepts, the typing
marker, and a wheel that really contains them."""

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from trove_classifiers import classifiers as KNOWN_CLASSIFIERS
from tests.support.paths import ROOT

PROJECTS = [ROOT, ROOT / "adapters" / "autograd", ROOT / "adapters" / "jax"]


def project_table(project: Path) -> dict:
    return tomllib.loads((project / "pyproject.toml").read_text())["project"]


def test_license_file_is_mit_for_the_developers():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 rulebridge developers" in text
    assert "WITHOUT WARRANTY OF ANY KIND" in text


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_each_distribution_declares_mit_and_ships_the_license_file(project):
    meta = project_table(project)
    assert meta["license"] == "MIT"
    for name in meta["license-files"]:
        assert (project / name).read_text() == (ROOT / "LICENSE").read_text()


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: p.name)
def test_classifiers_are_ones_pypi_accepts(project):
    found = project_table(project)["classifiers"]
    unknown = [c for c in found if c not in KNOWN_CLASSIFIERS]
    assert not unknown, f"{project / 'pyproject.toml'}: not trove classifiers: {unknown}"
    assert any(c.startswith("Development Status ::") for c in found)
    assert "Programming Language :: Python :: 3" in found
    # PEP 639: with a licence expression a License classifier is an error for setuptools
    assert not [c for c in found if c.startswith("License ::")]


def test_core_is_marked_typed_and_ships_the_marker():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "Typing :: Typed" in config["project"]["classifiers"]
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["rulebridge"]
    assert (ROOT / "rulebridge" / "py.typed").is_file()


@pytest.mark.slow
def test_wheel_contains_the_marker_the_license_and_the_classifiers(tmp_path):
    # builds in an isolated environment, so it fetches setuptools: out of the default run
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                    str(ROOT)], check=True)
    wheel, = tmp_path.glob("rulebridge-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    assert "rulebridge/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert b"License-Expression: MIT" in metadata
    assert b"Classifier: Typing :: Typed" in metadata


def test_the_readme_venv_leaves_git_status_clean():
    """The README's first step makes `.venv/` in the checkout: git ignores it."""
    run = subprocess.run(["git", "check-ignore", "-q", ".venv/bin/python"], cwd=ROOT)
    assert run.returncode == 0, ".venv/ is not in .gitignore"

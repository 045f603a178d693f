"""The documentation builds with Sphinx with warnings as errors and every cross-reference
resolved (nitpicky), so a broken docstring or a dead link between pages fails the tests."""

import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rulebridge
from tests.support.markdown_blocks import programs, run_program
from tests.support.paths import ROOT

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")

DOCS = ROOT / "docs"
# pages whose ```python blocks are programs to run (the others show contracts, not programs)
RUNNABLE_PAGES = ["tapes.md"]


def build(source: Path, out: Path, builder: str = "text") -> subprocess.CompletedProcess:
    # -E: read every page afresh; -W --keep-going: every warning reported, then a failure
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-E", "-q", "-b", builder,
         "-d", str(out / "doctrees"), str(source), str(out / builder)],
        capture_output=True, text=True)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    result = build(DOCS, out)
    assert result.returncode == 0, f"the docs do not build cleanly:\n{result.stderr}"
    return out / "text"


def test_docs_build_without_warnings(built):
    assert (built / "index.txt").is_file()


def test_api_reference_documents_every_public_name(built):
    text = (built / "api.txt").read_text()
    missing = [name for name in rulebridge.__all__ if f"rulebridge.{name}" not in text]
    assert not missing, f"public names missing from the API reference: {missing}"


def _objects(built: Path) -> dict:
    """What the reference defines, by full name (the names its anchors are made from)."""
    environment = pickle.loads((built.parent / "doctrees" / "environment.pickle").read_bytes())
    return environment.domaindata["py"]["objects"]


def test_every_public_name_is_defined_once_under_its_own_name(built):
    objects = _objects(built)
    assert not [name for name in objects if name.startswith("rulebridge.rulebridge.")]
    missing = [name for name in rulebridge.__all__ if f"rulebridge.{name}" not in objects]
    assert not missing, missing


def test_api_reference_has_the_scipy_namespace(built):
    """`rulebridge.scipy` and each of its modules, with how a drop-in behaves."""
    import rulebridge.scipy as rulebridge_scipy

    objects = _objects(built)
    for module in ("rulebridge.scipy", *(f"rulebridge.scipy.{m}" for m in rulebridge_scipy.MODULES)):
        assert module in objects, f"{module} is not in the API reference"
        assert objects[module].objtype == "module"
    text = (built / "api.txt").read_text()
    assert "import rulebridge.scipy.stats as stats" in text  # the package's own docstring
    assert "rulebridge.scipy.dropin.DropIn" in objects


@pytest.mark.parametrize("page, program", [
    (page, program) for page in RUNNABLE_PAGES for program in programs(DOCS / page)],
    ids=lambda item: item if isinstance(item, str) else f"line {item[0][0] + 1}")
def test_python_blocks_of_the_pages_run_as_written(page, program, tmp_path):
    run_program(DOCS / page, program, cwd=tmp_path)


@pytest.mark.parametrize("breakage", [
    "See [the matrix](no-such-page.md).\n",
    "See [a section](errors.md#no-such-section).\n",
    "```{eval-rst}\n:func:`rulebridge.no_such_function`\n```\n",
])
def test_a_dead_link_fails_the_build(tmp_path, breakage):
    # the check above is worth something only if a broken page really fails the build
    source = tmp_path / "docs"
    shutil.copytree(DOCS, source, ignore=shutil.ignore_patterns("_build"))
    with open(source / "errors.md", "a") as page:
        page.write("\n" + breakage)
    result = build(source, tmp_path / "out", builder="dummy")
    assert result.returncode != 0
    assert "errors.md" in result.stderr


@pytest.fixture
def public_api():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import public_api
        yield public_api
    finally:
        sys.path.remove(str(DOCS / "_ext"))


@pytest.mark.parametrize("lines, complaint", [
    ([], "has no docstring"),
    (["The rule rulebridge would use, in prose only."], "no numpy-style 'Parameters' section"),
])
def test_a_public_function_without_a_numpy_docstring_is_a_build_warning(public_api, caplog,
                                                                       lines, complaint):
    public_api._check_docstring(None, "function", "rulebridge.lookup", rulebridge.lookup, {},
                                lines)
    assert complaint in caplog.text


def test_a_numpy_docstring_passes(public_api, caplog):
    public_api._check_docstring(None, "function", "rulebridge.lookup", rulebridge.lookup, {},
                                ["The rule.", "", "Parameters", "----------", "function : f"])
    assert caplog.text == ""


def test_public_constants_are_documented_where_they_are_assigned(public_api, caplog):
    text = public_api._directive("ENTRY_POINT_GROUP")
    assert ":value: 'rulebridge.adapters'" in text and "entry-point group" in text
    assert caplog.text == ""
    public_api._data_directive("UNDOCUMENTED", object())
    assert "has no documentation" in caplog.text

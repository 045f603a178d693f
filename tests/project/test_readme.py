"""The README is followed literally: every ```python block runs as written (how blocks group
into programs: tests/support/markdown_blocks.py), its set-up commands are the ones CI runs, and every link
points at a file in this repository."""

import re

import pytest

from tests.support.markdown_blocks import fenced_blocks, programs, run_program
from tests.support.paths import ROOT

README = ROOT / "README.md"


def test_readme_has_a_quick_start_to_run():
    assert len(programs(README)) >= 3


@pytest.mark.parametrize("program", programs(README), ids=lambda p: f"line {p[0][0] + 1}")
def test_python_block_runs_as_written(program):
    run_program(README, program, cwd=ROOT)


def test_every_fenced_block_says_its_language():
    """A python block fenced without its language (or as ```py) would never be run by the test
    above: every block is python (run), bash (checked below) or text (a listing, a tape)."""
    opening = False
    for number, line in enumerate(README.read_text().split("\n"), 1):
        if line.startswith("```"):
            opening = not opening
            assert not opening or line.strip() in ("```python", "```bash", "```text"), \
                f"README.md:{number}: {line.strip()!r}: fence a block as python, bash or text"


def test_set_up_is_the_virtual_environment_then_the_commands_ci_runs():
    text = README.read_text()
    commands = [line.split("#")[0].strip() for _, block in fenced_blocks(README, "bash")
                for line in block.splitlines()]
    assert "python -m venv .venv && . .venv/bin/activate" in commands
    assert "pip install -r requirements-dev.txt && rulebridge matrix" in commands
    assert "pip install -r requirements-dev.txt && pytest" in commands
    assert "pip install -r requirements-dev.txt && pytest" in (ROOT / ".ci" / "run").read_text()
    assert "repository's root" in text


def test_every_script_the_readme_runs_exists():
    scripts = []
    for _, block in fenced_blocks(README, "bash"):
        scripts += re.findall(r"^python (\S+\.py)", block, flags=re.M)
        # `python -m benchmarks.suite`: a module of this repository (not `-m venv`)
        scripts += [name.replace(".", "/") + ".py" for name in
                    re.findall(r"^python -m (\S+)", block, flags=re.M)
                    if (ROOT / name.split(".")[0]).is_dir()]
    assert scripts
    for script in scripts:
        assert (ROOT / script).is_file(), f"README.md runs {script}, which does not exist"


def test_every_link_points_into_the_repository():
    links = re.findall(r"\]\(([^)\s]+)\)", README.read_text())
    assert links
    for link in links:
        path = link.split("#")[0]
        assert "://" not in link and not link.startswith("/"), f"README.md links outside: {link}"
        target = (ROOT / path).resolve()
        assert target.is_relative_to(ROOT), f"README.md links outside the repository: {link}"
        assert target.exists(), f"README.md links {link}, which does not exist"


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_to_a_section_names_a_heading():
    text = README.read_text()
    headings = {github_anchor(line.lstrip("#")) for line in text.splitlines()
                if re.match(r"^#{1,6} ", line)}
    anchors = re.findall(r"\]\(#([^)\s]+)\)", text)
    assert anchors
    for anchor in anchors:
        assert anchor in headings, f"README.md links #{anchor}, which no heading is"


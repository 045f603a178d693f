"""The README is followed literally: every ```python block runs as written, its set-up commands
are the ones CI runs, and every link points at a file in this repository.

A block runs in a fresh interpreter and namespace, unless its first line is the comment
`# continues the block above`: then it runs after the blocks it continues, in their namespace."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONTINUES = "# continues the block above"

# exec each block compiled with its README line numbers, so a traceback points at the README
RUNNER = """
import json, sys
namespace = {"__name__": "__main__"}
for line, code in json.load(sys.stdin):
    exec(compile("\\n" * line + code, "README.md", "exec"), namespace)
"""


def fenced_blocks(text: str, language: str) -> list[tuple[int, str]]:
    """(line of the opening fence, 0-based; the block's code) of each ```language block."""
    blocks, lines, start = [], text.split("\n"), None
    for i, line in enumerate(lines):
        if start is None and line.strip() == f"```{language}":
            start = i
        elif start is not None and line.strip() == "```":
            blocks.append((start, "\n".join(lines[start + 1:i]) + "\n"))
            start = None
    assert start is None, f"README.md: the ```{language} block at line {start + 1} is not closed"
    return blocks


def programs() -> list[list[tuple[int, str]]]:
    """The python blocks grouped into programs: a block and the blocks that continue it."""
    grouped: list[list[tuple[int, str]]] = []
    for line, code in fenced_blocks(README.read_text(), "python"):
        if code.startswith(CONTINUES):
            assert grouped, f"README.md:{line + 1}: the first block cannot continue another"
            grouped[-1].append((line, code))
        else:
            grouped.append([(line, code)])
    return grouped


def test_readme_has_a_quick_start_to_run():
    assert len(programs()) >= 3


@pytest.mark.parametrize("program", programs(), ids=lambda p: f"line {p[0][0] + 1}")
def test_python_block_runs_as_written(program):
    result = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", RUNNER],
                            input=json.dumps(program), capture_output=True, text=True,
                            cwd=ROOT, timeout=300)
    assert result.returncode == 0, (f"the README's block at line {program[-1][0] + 1} failed:\n"
                                    f"{result.stderr}")


def test_set_up_is_the_virtual_environment_then_the_commands_ci_runs():
    text = README.read_text()
    commands = [line.split("#")[0].strip() for _, block in fenced_blocks(text, "bash")
                for line in block.splitlines()]
    assert "python -m venv .venv && . .venv/bin/activate" in commands
    assert "pip install -r requirements-dev.txt && rulebridge matrix" in commands
    assert "pip install -r requirements-dev.txt && pytest" in commands
    assert "pip install -r requirements-dev.txt && pytest" in (ROOT / ".ci" / "run").read_text()
    assert "repository's root" in text


def test_every_script_the_readme_runs_exists():
    for _, block in fenced_blocks(README.read_text(), "bash"):
        for script in re.findall(r"^python (\S+\.py)", block, flags=re.M):
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

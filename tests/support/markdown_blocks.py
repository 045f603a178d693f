"""Fenced code blocks of a Markdown page, and running its python blocks as a reader would.

A python block runs in a fresh interpreter and namespace, unless its first line is the comment
`# continues the block above`: then it runs after the blocks it continues, in their namespace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CONTINUES = "# continues the block above"

# exec each block compiled with its page's line numbers, so a traceback points at the page
RUNNER = """
import json, sys
page, blocks = json.load(sys.stdin)
namespace = {"__name__": "__main__"}
for line, code in blocks:
    exec(compile("\\n" * line + code, page, "exec"), namespace)
"""


def fenced_blocks(page: Path, language: str) -> list[tuple[int, str]]:
    """(line of the opening fence, 0-based; the block's code) of each ```language block."""
    blocks, lines, start = [], page.read_text().split("\n"), None
    for i, line in enumerate(lines):
        if start is None and line.strip() == f"```{language}":
            start = i
        elif start is not None and line.strip() == "```":
            blocks.append((start, "\n".join(lines[start + 1:i]) + "\n"))
            start = None
    assert start is None, f"{page.name}: the ```{language} block at line {start + 1} is not closed"
    return blocks


def programs(page: Path) -> list[list[tuple[int, str]]]:
    """The page's python blocks grouped into programs: a block and the blocks that continue it."""
    grouped: list[list[tuple[int, str]]] = []
    for line, code in fenced_blocks(page, "python"):
        if code.startswith(CONTINUES):
            assert grouped, f"{page.name}:{line + 1}: the first block cannot continue another"
            grouped[-1].append((line, code))
        else:
            grouped.append([(line, code)])
    return grouped


def run_program(page: Path, program: list[tuple[int, str]], cwd: Path) -> None:
    """Run one program in a fresh interpreter in `cwd`; fail with its traceback if it raises."""
    result = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", RUNNER],
                            input=json.dumps([page.name, program]), capture_output=True,
                            text=True, cwd=cwd, timeout=300)
    lines = ", ".join(str(line + 1) for line, _ in program)
    assert result.returncode == 0, (f"{page.name}: the python block(s) at line {lines} failed "
                                    f"(the traceback's line numbers are the page's):\n"
                                    f"{result.stderr}")

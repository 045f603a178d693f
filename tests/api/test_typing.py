"""`mypy --strict` on a user's script: the public API is typed, grad(f) keeps f's parameters
(typing.ParamSpec), so a wrong call to a gradient function is a type error, and a gradient has
its argument's type (an ndarray for an ndarray, the same container for a container)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent / "typing"

pytest.importorskip("mypy")


def _mypy(tmp_path: Path) -> dict[str, list[str]]:
    """mypy's messages per script, run as a user runs it: in a folder of their own, with no
    configuration and no MYPYPATH, so rulebridge is found only the way it is installed (the
    README's `pip install -r requirements-dev.txt`, an editable install mypy must see)."""
    for name in ("user_script.py", "misuse.py"):
        shutil.copy(SCRIPTS / name, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", "--show-error-codes", "user_script.py", "misuse.py"],
        cwd=tmp_path, capture_output=True, text=True, env=env)
    assert not result.stderr.strip(), result.stderr
    assert "import-not-found" not in result.stdout, (
        "mypy cannot see the installed rulebridge (an editable install by an import hook?): "
        f"reinstall with `pip install -r requirements-dev.txt`\n{result.stdout}")
    messages: dict[str, list[str]] = {"user_script.py": [], "misuse.py": []}
    for line in result.stdout.splitlines():
        name = line.split(":", 1)[0]
        messages.setdefault(name, []).append(line)
    return messages


def test_mypy_strict_on_a_user_script(tmp_path):
    messages = _mypy(tmp_path)
    assert messages["user_script.py"] == []
    misuse = messages["misuse.py"]
    source = (SCRIPTS / "misuse.py").read_text().splitlines()
    expected_lines = {i + 1 for i, text in enumerate(source) if "# error:" in text}
    error_lines = {int(m.split(":")[1]) for m in misuse if ": error:" in m}
    assert error_lines == expected_lines, "\n".join(misuse)
    assert set(messages) == {"user_script.py", "misuse.py"}, messages
    note = next(m for m in misuse if "Revealed type" in m)
    # f's parameters, the differentiated one positional, and a gradient of w's type
    assert re.search(r"def \(numpy\.ndarray\[.*float64\]\], x: .*scale: (builtins\.)?float =\) "
                     r"-> numpy\.ndarray\[.*float64\]\]\"$", note), note

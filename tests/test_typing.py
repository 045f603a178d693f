"""`mypy --strict` on a user's script: the public API is typed, and grad(f) keeps f's
parameters (typing.ParamSpec), so a wrong call to a gradient function is a type error."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = Path(__file__).resolve().parent / "typing"

pytest.importorskip("mypy")


def _mypy(tmp_path: Path) -> dict[str, list[str]]:
    """mypy's messages per script, with rulebridge read from this checkout as an installed
    package is (its own modules' errors silenced, as mypy silences site-packages)."""
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\n[mypy-rulebridge.*]\nfollow_imports = silent\n")
    for name in ("user_script.py", "misuse.py"):
        shutil.copy(SCRIPTS / name, tmp_path / name)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(config),
         "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", "--show-error-codes",
         "user_script.py", "misuse.py"],
        cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "MYPYPATH": str(ROOT)})
    assert not result.stderr.strip(), result.stderr
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
    assert re.search(r"w: .*x: .*scale: (builtins\.)?float =.*\) -> Any", note), note

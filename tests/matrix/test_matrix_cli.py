"""`rulebridge matrix` end to end on small adapters: write, --check, stale detection, committed
files that regenerate byte for byte, progress in and out of a terminal, cores."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

import rulebridge
from rulebridge.checking import status
from rulebridge.checking.command import JSON, MARKDOWN, MEASURED, main as matrix_main

from tests.support.adapters import SignFlippedSin
from tests.support.plugins import EXAMPLE_ADAPTER, install


@pytest.fixture
def flipped():
    rulebridge.register_adapter(SignFlippedSin())
    yield SignFlippedSin.name
    rulebridge.REGISTRY.unregister(SignFlippedSin.name)


def run_matrix(source: str, folder: Path, *extra: str) -> int:
    return matrix_main(["--source", source, "--jobs", "1", "--output", str(folder), *extra])


def test_write_then_check_then_detect_a_stale_file(flipped, tmp_path, capsys):
    shipped = status.STATUS_FILE.read_bytes()
    assert run_matrix(flipped, tmp_path) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([MARKDOWN, JSON, MEASURED])
    assert status.STATUS_FILE.read_bytes() == shipped  # never the package's file
    md, js = tmp_path / MARKDOWN, tmp_path / JSON
    matrix = json.loads(js.read_text())
    sin64 = [c for c in matrix["cells"] if c["function"] == "numpy.sin"
             and c["dtype"] == "float64"]
    assert sin64 and all(c["status"] == "fail" for c in sin64)  # the sign error, shown
    assert "fail [1]" in md.read_text() and "finite differences" in md.read_text()
    assert set(status.verified_status(matrix)[flipped]["numpy.sin"].values()) == {"fail"}

    assert run_matrix(flipped, tmp_path, "--check") == 0
    md.write_text(md.read_text().replace("fail [1]", "pass"))
    assert run_matrix(flipped, tmp_path, "--check") == 1
    assert "stale" in capsys.readouterr().err


def test_the_committed_files_hold_no_figure_and_regenerate_byte_for_byte(flipped, tmp_path,
                                                                        capsys):
    first, second = tmp_path / "first", tmp_path / "second"
    assert run_matrix(flipped, first) == 0 and run_matrix(flipped, second) == 0
    for name in (MARKDOWN, JSON):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    cells = json.loads((first / JSON).read_text())["cells"]
    assert all("max_rel_error" not in c for c in cells)
    # The figures are measured, and kept beside the committed files.
    measured = json.loads((first / MEASURED).read_text())["cells"]
    failing = [m for m in measured if m["dtype"] == "float64"]
    assert failing and all(m["max_rel_error"] > 1e-3 for m in failing)  # tolerance: 1e-6
    assert all("from finite differences" in m["measured"] for m in failing)
    assert not any(ch.isdigit() for c in cells for ch in c["reason"].replace("float64", ""))

    # --check ignores the measurements and compares every committed fact.
    (first / MEASURED).unlink()
    assert run_matrix(flipped, first, "--check") == 0
    matrix = json.loads((first / JSON).read_text())
    matrix["cells"][0]["status"] = "pass"
    (first / JSON).write_text(json.dumps(matrix))
    assert run_matrix(flipped, first, "--check") == 1
    assert "stale" in capsys.readouterr().err


def test_the_cli_dispatches_to_the_matrix(capsys):
    from rulebridge.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["matrix", "--help"])
    assert exit_info.value.code == 0
    assert "--check" in capsys.readouterr().out


# -- in a subprocess: progress and cores -------------------------------------------------------


@pytest.fixture(scope="module")
def example_env(tmp_path_factory) -> dict:
    """An environment whose Python finds the example adapter (tests/adapters/example_adapter)."""
    site = tmp_path_factory.mktemp("site")
    install(EXAMPLE_ADAPTER, site)
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(site),
                                                        os.environ.get("PYTHONPATH", "")]))


def matrix_command(folder: Path) -> list[str]:
    return [sys.executable, "-m", "rulebridge.cli", "matrix", "--source", "example", "--jobs",
            "1", "--output", str(folder), "--progress-every", "0.2"]


def test_a_pipe_sees_plain_progress_lines(example_env, tmp_path):
    done = subprocess.run(matrix_command(tmp_path), env=example_env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = [l for l in done.stderr.splitlines() if l.startswith("rulebridge matrix: ")]
    assert lines[0].startswith("rulebridge matrix: 0/6 functions, ")
    assert lines[-1].startswith("rulebridge matrix: 6/6 functions, ")
    assert "\r" not in done.stderr and "\x1b" not in done.stderr  # no bar drawn into a log
    assert all(" s elapsed" in line for line in lines)
    assert all("left" in line for line in lines[1:-1])


def test_a_terminal_sees_a_bar_with_an_estimate(example_env, tmp_path):
    pytest.importorskip("tqdm")
    main_fd, child_fd = pty.openpty()
    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    process = subprocess.Popen(matrix_command(tmp_path), env=example_env, cwd=tmp_path,
                               stdout=subprocess.DEVNULL, stderr=child_fd)
    os.close(child_fd)
    seen = b""
    while True:
        ready, _, _ = select.select([main_fd], [], [], 600)
        try:
            chunk = os.read(main_fd, 4096) if ready else b""
        except OSError:  # the terminal closed with the process
            chunk = b""
        if not chunk:
            break
        seen += chunk
    os.close(main_fd)
    assert process.wait(timeout=60) == 0
    text = seen.decode(errors="replace")
    assert "6/6" in text and "\r" in text  # one line redrawn in place
    assert "<00:00" in text or "<?" in text  # tqdm's [elapsed<remaining] estimate
    assert "rulebridge matrix: 0/6" not in text  # not the plain lines


def test_jobs_default_to_the_cores_this_process_may_use():
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "from rulebridge.checking.matrix import default_jobs; print(default_jobs())")
    one = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert one.stdout.strip() == "1"
    from rulebridge.checking.matrix import default_jobs

    assert default_jobs() == len(os.sched_getaffinity(0))


# -- bad options: a clear error, status 2, nothing written (issue 22, section 6) ----------------


def refused(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        matrix_main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_a_mistyped_source_checks_nothing_and_overwrites_nothing(flipped, tmp_path, capsys):
    assert run_matrix(flipped, tmp_path) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    err = refused(["--source", flipped + "x", "--jobs", "1", "--output", str(tmp_path)], capsys)
    assert f"--source {flipped}x: no adapter of that name is installed" in err
    assert flipped in err.split("installed:")[1]  # names what is installed
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_an_output_naming_a_file_is_an_error_not_a_traceback(flipped, tmp_path, capsys):
    target = tmp_path / "report.md"
    target.write_text("mine")
    err = refused(["--source", flipped, "--jobs", "1", "--output", str(target)], capsys)
    assert "it is a file, not a folder" in err and "Traceback" not in err
    assert target.read_text() == "mine"


def test_a_run_of_fewer_sources_does_not_replace_a_matrix_that_holds_more(flipped, tmp_path,
                                                                          capsys):
    held = {"sources": [flipped, "another"], "cells": []}
    (tmp_path / JSON).write_text(json.dumps(held))
    (tmp_path / MARKDOWN).write_text("the committed matrix")
    err = refused(["--source", flipped, "--jobs", "1", "--output", str(tmp_path)], capsys)
    assert "also holds another, which it would drop" in err and "--output DIR" in err
    assert json.loads((tmp_path / JSON).read_text()) == held
    assert (tmp_path / MARKDOWN).read_text() == "the committed matrix"


@pytest.mark.parametrize("option, value, says", [("--jobs", "0", "at least 1 process"),
                                                 ("--progress-every", "-1", "positive")])
def test_out_of_range_numbers_are_refused(flipped, tmp_path, capsys, option, value, says):
    err = refused(["--source", flipped, "--output", str(tmp_path), option, value], capsys)
    assert says in err and not list(tmp_path.iterdir())

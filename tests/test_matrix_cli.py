"""`rulebridge matrix` end to end on a one-function adapter: write, --check, stale detection."""

from __future__ import annotations

import json

import pytest

import rulebridge
from rulebridge.checking.command import main as matrix_main

from .test_check_first_use import SignFlippedSin


@pytest.fixture
def flipped():
    rulebridge.register_adapter(SignFlippedSin())
    yield SignFlippedSin.name
    rulebridge.REGISTRY.unregister(SignFlippedSin.name)


def test_write_then_check_then_detect_a_stale_file(flipped, tmp_path, capsys):
    md, js, st = tmp_path / "m.md", tmp_path / "m.json", tmp_path / "s.json"
    options = ["--source", flipped, "--workers", "1", "--out", str(md), "--json", str(js)]
    assert matrix_main(options + ["--status", str(st)]) == 0
    cells = json.loads(js.read_text())["cells"]
    sin64 = [c for c in cells if c["function"] == "numpy.sin" and c["dtype"] == "float64"]
    assert sin64 and all(c["status"] == "fail" for c in sin64)  # the sign error, shown
    assert "fail [1]" in md.read_text() and "finite differences" in md.read_text()
    status = json.loads(st.read_text())["status"][flipped]["numpy.sin"]
    assert set(status.values()) == {"fail"}

    assert matrix_main(options + ["--check"]) == 0
    md.write_text(md.read_text().replace("fail [1]", "pass"))
    assert matrix_main(options + ["--check"]) == 1
    assert "stale" in capsys.readouterr().err


def test_check_accepts_another_machine_s_error_figures_but_not_another_status(flipped, tmp_path,
                                                                            capsys):
    md, js = tmp_path / "m.md", tmp_path / "m.json"
    options = ["--source", flipped, "--workers", "1", "--out", str(md), "--json", str(js)]
    assert matrix_main(options + ["--status", str(tmp_path / "s.json")]) == 0
    matrix = json.loads(js.read_text())
    figures = [c for c in matrix["cells"] if c["max_rel_error"]]
    assert figures
    for cell in figures:
        cell["max_rel_error"] *= 10  # as libm and BLAS kernels of another CPU may give
    js.write_text(json.dumps(matrix))
    assert matrix_main(options + ["--check"]) == 0
    assert "differ from the committed ones" in capsys.readouterr().out

    figures[0]["status"] = "pass"
    js.write_text(json.dumps(matrix))
    assert matrix_main(options + ["--check"]) == 1
    err = capsys.readouterr().err
    assert '"status": "pass"' in err and '"status": "fail"' in err and "stale" in err


def test_the_cli_dispatches_to_the_matrix(capsys):
    from rulebridge.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["matrix", "--help"])
    assert exit_info.value.code == 0
    assert "--check" in capsys.readouterr().out

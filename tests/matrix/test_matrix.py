"""The committed compatibility matrix is fresh, consistent, and used to choose rules.

The default run regenerates a deterministic subset of rows in-process (a failure names the row),
checks the header and the Markdown/JSON/status consistency, and runs the full
`rulebridge matrix --check`; comparing every row separately is the slow test.
"""

from __future__ import annotations

import json
import runpy

import numpy as np
import pytest

import rulebridge
import rulebridge.scipy
from rulebridge.checking import conventions, render, status
from rulebridge.checking.catalogue import cases_for, exports
from rulebridge.checking.command import version_mismatch
from rulebridge.cli import matrix as matrix_main
from rulebridge.higher import check_gradgrad
from rulebridge.checking.matrix import Plan, case_key, changed_cells, check_function, example_call
from rulebridge.rules.keys import format_key, normalise

from tests.support.paths import ROOT

MARKDOWN, JSON = ROOT / "compat_matrix.md", ROOT / "compat_matrix.json"
COMMITTED = json.loads(JSON.read_text())
# the SciPy drop-ins' rows, for this module's rulebridge_row and PLAN (the command passes them)
rulebridge_importers = (rulebridge.scipy.imported,)
PLAN = Plan(tuple(COMMITTED["sources"]), tuple(COMMITTED["dtypes"]), COMMITTED["seed"],
            rulebridge_importers, check_gradgrad)  # as the command passes them
ROWS = list(dict.fromkeys(c["function"] for c in COMMITTED["cells"]))
# Every 25th row plus rows whose results are instructive (failures, decompositions, lists).
SUBSET = sorted(set(ROWS[::25]) | {"numpy.sin", "numpy.linalg.eigh", "numpy.fft.rfft",
                                   "numpy.where", "numpy.concatenate", "numpy.maximum"})


def test_committed_matrix_was_made_with_the_installed_versions():
    assert version_mismatch(JSON, None) == ""


@pytest.mark.parametrize("name", SUBSET)
def test_a_row_regenerates_identically(name):
    committed = [c for c in COMMITTED["cells"] if c["function"] == name]
    assert changed_cells(committed, check_function(name, PLAN)) == []


def test_a_failure_s_reason_holds_no_figure_that_depends_on_the_machine(flipped):
    # The same wrong rule checked at other inputs (another seed) fails with other figures: its
    # committed reason must be the same text, the figures only in `measured`.
    x = np.linspace(0.2, 0.9, 4)
    one, two = (rulebridge.check_rule(np.sin, x, source=flipped, seed=s) for s in (1, 2))
    assert one.status == two.status == "fail"
    assert one.reason == two.reason and one.measured != two.measured
    assert "finite differences" in one.reason and "from finite differences" in one.measured
    assert not any(ch.isdigit() for ch in one.reason)
    assert one.measured in one.describe()
    for cell in COMMITTED["cells"]:
        assert set(cell) == {"function", "source", "dtype", "signature", "kwargs", "key",
                             "status", "reason"}


def test_the_markdown_is_rendered_from_the_json():
    assert MARKDOWN.read_text() == render.to_markdown(COMMITTED)


def test_the_exports_counted_against_do_not_depend_on_what_ran_before():
    # Bound methods are made anew on each access: counted by identity, two of SciPy's
    # distribution methods could share the id of a freed temporary and count as one.
    import scipy.stats

    before = exports(ROWS)
    scipy.stats.expon.sf(1.0), scipy.stats.truncnorm.entropy(0.1, 2.0)
    assert before == exports(ROWS) == COMMITTED["exports"]
    assert len(before.get("scipy.stats.expon", [])) > 10


def test_the_conventions_in_the_json_are_what_the_sources_return():
    assert COMMITTED["conventions"] == conventions.evaluate(COMMITTED["sources"])


def test_the_shipped_status_is_made_from_the_committed_json():
    ship = runpy.run_path(str(ROOT / "tools" / "ship_status.py"), run_name="ship_status")
    assert status.STATUS_FILE.read_text() == ship["shipped_text"](JSON)
    assert ship["main"](["--check"]) == 0


def test_every_offered_function_has_a_row_and_the_targets_are_met():
    for source in COMMITTED["sources"]:
        offered = {rulebridge.function_name(f)
                   for f in rulebridge.REGISTRY.adapter(source).functions()}
        assert offered <= set(ROWS), sorted(offered - set(ROWS))
    verified = {row["source"]: row.get("verified", 0) for row in render.summary(COMMITTED)}
    assert verified.get("autograd", 0) >= 110
    if "jax" in verified:
        assert verified["jax"] >= 220


def test_a_stale_version_is_reported_plainly(tmp_path, capsys):
    altered = dict(COMMITTED, versions={**COMMITTED["versions"], "numpy": "0.0.1"})
    path = tmp_path / "compat_matrix.json"  # the name --output DIR reads
    path.write_text(json.dumps(altered))
    assert matrix_main(["--check", "--output", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "numpy: committed 0.0.1, installed" in err and "pip install -r" in err


def _pair_with_one_failed_source():
    """A committed (function, signature) where one source fails and another passes."""
    table = {name: entry["status"] for name, entry in status.load()["sources"].items()}
    for function, signatures in table.get("autograd", {}).items():
        for signature, state in signatures.items():
            if signature.endswith((" jvp", " gradgrad")):
                continue  # a pushforward's or a second order's verdict, not the pullback's
            others = [s for s in table if s != "autograd"
                      and table[s].get(function, {}).get(signature) == "pass"]
            if state == "fail" and others:
                return function, signature, others[0]
    return None


def test_a_failed_rule_is_not_chosen_when_another_source_is_verified():
    found = _pair_with_one_failed_source()
    if found is None:
        pytest.skip("no committed signature fails for autograd and passes for another source")
    function_name, key, good = found
    function = next(f for f in rulebridge.REGISTRY.adapter("autograd").functions()
                    if rulebridge.function_name(f) == function_name)
    for number, case in enumerate(cases_for(function_name)):
        for dtype in PLAN.dtypes:
            call = example_call(case, dtype, case_key(PLAN.seed, function_name, dtype, number))
            args, _, config = normalise(function, *call)
            signature = rulebridge.signature_of(args)
            if format_key(signature, config) == key:
                rule = rulebridge.REGISTRY.lookup(function, signature, None, config)
                assert rule.source == good and rule.status == "pass"
                # named, the failed source raises rather than give its wrong number
                with pytest.raises(rulebridge.NoRuleError, match="autograd: its rule failed"):
                    rulebridge.REGISTRY.require(function, signature, "autograd", config)
                return
    pytest.fail(f"no catalogue case has the key {key} of {function_name}")


def test_rulebridge_matrix_check_passes():
    # CI runs the full check (see the README for its time): the committed matrix is never stale.
    assert matrix_main(["--check", "--output", str(ROOT)]) == 0


@pytest.mark.slow
def test_every_row_matches_the_committed_matrix(rulebridge_row):
    committed = [c for c in COMMITTED["cells"] if c["function"] == rulebridge_row.name]
    assert changed_cells(committed, rulebridge_row.cells()) == []


def test_sources_disagreeing_with_numpy_show_as_failures():
    # autograd's rfft ignores `norm` (NumPy scales by 1/n): a real divergence, shown, not hidden.
    cells = [c for c in COMMITTED["cells"] if c["function"] == "numpy.fft.rfft"
             and c["source"] == "autograd" and c["kwargs"] == "norm='forward'"
             and c["dtype"] == "float64"]
    assert cells and cells[0]["status"] == "fail" and "finite differences" in cells[0]["reason"]

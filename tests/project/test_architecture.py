"""The package's structure, checked rather than remembered (docs/architecture.md)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from tests.support.paths import ROOT

SOURCES = ("autograd", "jax")


def test_import_contracts_hold():
    """The layers, and the two boundaries around the sources, in pyproject.toml."""
    # beside the interpreter running the tests (a venv's bin/ or Scripts/), so that
    # `.venv/bin/python -m pytest` works without an activated venv; PATH only as a last resort
    command = (shutil.which("lint-imports", path=str(Path(sys.executable).parent))
               or shutil.which("lint-imports"))
    assert command is not None, "import-linter is in requirements-dev.txt"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "adapters" / "autograd"), str(ROOT / "adapters" / "jax")])
    run = subprocess.run([command, "--no-cache"], cwd=ROOT, env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


def test_no_module_of_the_core_imports_itself_back():
    """No import cycle anywhere in rulebridge, also inside a package and through imports made
    inside functions (which a layers contract between packages does not see)."""
    graph = grimp.build_graph("rulebridge", cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if imported == module or imported.startswith(module + "."):
                continue
            if module.startswith(imported + ".") and imported == "rulebridge":
                continue  # a package's own __init__ re-exporting its modules
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain is not None and not _through_package_init(chain):
                cycles.append(" -> ".join((module,) + tuple(chain)))
    assert not cycles, "\n".join(cycles)


def _through_package_init(chain) -> bool:
    """`rulebridge.writes` (its __init__) importing `rulebridge.writes.routes` is the package
    exporting its names, not a cycle of modules."""
    return any(b.startswith(a + ".") for a, b in zip(chain, chain[1:]))


@pytest.mark.parametrize("path", sorted(str(p.relative_to(ROOT))
                                        for p in (ROOT / "rulebridge").rglob("*.py")))
def test_modules_stay_readable_in_a_sitting(path):
    lines = (ROOT / path).read_text().count("\n")
    assert lines <= 420, f"{path} has {lines} lines: split it by concept (about 400 at most)"


def _code_strings():
    """(where, text) of every string constant in the core's code, docstrings left out."""
    for path in (ROOT / "rulebridge").rglob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and id(node) not in docstrings):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.value


def test_the_core_names_no_source():
    """Which sources exist is the adapters' business: their metadata gives the default order,
    the install hints and the libraries a matrix records, never a table in the core. (Examples
    in docstrings may name them.)"""
    offenders = [f"{where}: {text!r}" for where, text in _code_strings()
                 if any(source in text.lower() for source in SOURCES)]
    assert not offenders, "\n".join(offenders)


def test_no_module_is_imported_by_a_name_the_contracts_cannot_see():
    """A module of the core named in a string (`importlib.import_module("rulebridge.scipy")`)
    is an import the layers contract never sees: the checking layer once loaded the SciPy
    drop-ins, two layers above it, that way. A layer above passes what it has instead."""
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in (ROOT / "rulebridge").rglob("*.py")} - {"rulebridge"}
    offenders = [f"{where}: {text!r}" for where, text in _code_strings() if text in modules]
    assert not offenders, "\n".join(offenders)


def test_the_matrix_loads_nothing_above_the_checking_layer():
    program = ("import sys\n"
               "from rulebridge.checking.matrix import Plan, check_function, row_names\n"
               "names = row_names(('autograd',))\n"
               "check_function('numpy.sin', Plan(('autograd',), ('float64',)))\n"
               "print(len(names), sorted(m for m in sys.modules if m.startswith('rulebridge.')"
               " and m.split('.')[1] in ('scipy', 'cli', 'demo')))\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.split()
    assert int(out[0]) > 100 and out[1:] == ["[]"], out


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


def test_one_answer_to_is_this_value_differentiable():
    """The API, the tape, the registry's missing rule, the checks and the speed measurement ask
    rulebridge.rules.signature.is_differentiable; nobody spells `kind in "fc"` again."""
    import rulebridge
    from rulebridge import api
    from rulebridge.checking import check
    from rulebridge.engine import tape
    from rulebridge.rules import missing, signature, speed

    predicate = signature.is_differentiable
    assert rulebridge.is_differentiable is predicate
    for module in (api, tape, check, missing, speed):  # missing: the registry's missing rule
        assert module.is_differentiable is predicate, module.__name__
    spelled = []
    for path in (ROOT / "rulebridge").rglob("*.py"):
        if path.name == "signature.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if 'kind in "fc"' in line or "kind in 'fc'" in line or 'kind not in "fc"' in line:
                spelled.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not spelled, "\n".join(spelled)


def test_stored_ops_are_unpacked_by_op_s_field_names():
    """The tape stores ops as plain tuples in `Op`'s field order (docs/performance.md says why):
    wherever code unpacks one, it binds Op's field names in that order (`_` for a field it
    leaves), so the layout is written once, in `Op`, and a reordering cannot go unnoticed."""
    from rulebridge.engine.op import Op

    fields = Op._fields
    found = []
    for path in sorted((ROOT / "rulebridge").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Store)
                    and len(node.elts) == len(fields)
                    and all(isinstance(e, ast.Name) for e in node.elts)
                    and node.elts[0].id in ("rule", "_")):
                names = tuple(e.id for e in node.elts)
                found.append(path.name)
                assert all(n in (f, "_") for n, f in zip(names, fields)), (
                    f"{path.relative_to(ROOT)}:{node.lineno} unpacks an op as {names}; "
                    f"Op's fields are {fields}")
    assert {"sweep.py", "shedding.py", "op.py"} <= set(found)

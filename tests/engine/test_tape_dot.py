"""`Tape.to_dot()`: the tape as Graphviz DOT text, node for node and edge for edge."""

import re
import shutil
import subprocess
import sys

import autograd.numpy as anp
import numpy as np
import pytest

import rulebridge
from tests.support.paths import ROOT

NODE = re.compile(r'^  (\w+) \[(.*)\];$')
EDGE = re.compile(r'^  (\w+) -> (\w+)( \[label="%(\d+)"\])?;$')


def parse(dot: str):
    """Nodes {name: attributes} and edges [(from, to, variable label or None)] of to_dot's text;
    any other line than the header's is an error."""
    lines = dot.splitlines()
    assert lines[0] == "digraph tape {" and lines[-1] == "}"
    nodes, edges = {}, []
    for line in lines[1:-1]:
        if line.startswith(("  rankdir", "  node [", "  edge [")):
            continue
        edge = EDGE.match(line)
        if edge:
            edges.append((edge[1], edge[2], edge[4] and int(edge[4])))
            continue
        node = NODE.match(line)
        assert node, f"not a node or an edge: {line!r}"
        nodes[node[1]] = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', node[2]))
    return nodes, edges


def program(a, b, m):
    w, v = np.linalg.eigh(m @ m.T + 3 * np.eye(3))      # one op, two outputs
    c = np.concatenate([a, np.sin(b)])                  # a list argument with two variables
    s = np.sum(c * 2.0) + np.sum(w) * np.sum(v[:, 0] ** 2)
    return s, c


@pytest.fixture
def traced():
    rng = np.random.default_rng(0)
    a, b, m = rng.normal(size=3), rng.normal(size=2), rng.normal(size=(3, 3))
    return rulebridge.trace(program, a, b, m)[1]


def variables(structure):
    if type(structure) is int:
        return [structure]
    if isinstance(structure, (tuple, list)):
        return [v for item in structure for v in variables(item)]
    return []


def test_one_node_per_input_and_op_one_edge_per_variable_read(traced):
    nodes, edges = parse(traced.to_dot())
    ops = list(traced.ops)
    assert len(nodes) == len(traced.inputs) + len(ops) + 1  # + the result
    reads = sum(len(variables(op.inputs)) for op in ops) + len(variables(traced.outputs))
    assert len(edges) == reads
    # each edge leaves the node that defines the variable and enters the op that reads it
    defined_by = {var: f"in{var}" for var in traced.inputs}
    expected = []
    for index, op in enumerate(ops):
        expected += [(defined_by[var], f"op{index}") for var in variables(op.inputs)]
        defined_by.update({var: f"op{index}" for var in op.outputs if var is not None})
    expected += [(defined_by[var], "result") for var in variables(traced.outputs)]
    assert sorted((a, b) for a, b, _ in edges) == sorted(expected)


def test_op_nodes_show_function_source_and_whether_the_rule_is_verified(traced):
    nodes, _ = parse(traced.to_dot())
    assert all(op.rule.source != "rulebridge" for op in traced.ops)  # no writes in `program`
    for index, op in enumerate(traced.ops):
        label = nodes[f"op{index}"]["label"]
        outputs, rest = label.split(" = ")
        name, provenance = rest.split("\\n")
        assert outputs == ", ".join(f"%{v}" for v in op.outputs)
        assert name == rulebridge.function_name(op.rule.function).rsplit(".", 1)[-1]
        verified = op.rule.status == "pass"
        assert provenance == f"{op.rule.source}: " + ("verified" if verified else op.rule.status)


def test_the_engines_own_write_ops_are_drawn_as_the_engines():
    def f(x):
        y = np.zeros_like(x)  # a buffer, then two writes: ops of the engine, not of a source
        y[0] = np.sin(x[0])
        y *= 2.0
        return np.sum(y)

    _, tape = rulebridge.trace(f, np.linspace(0.1, 1.0, 3))
    nodes, _ = parse(tape.to_dot())
    engine = {nodes[f"op{i}"]["fillcolor"] for i, op in enumerate(tape.ops)
              if op.rule.source == "rulebridge"}
    labels = [nodes[f"op{i}"]["label"] for i, op in enumerate(tape.ops)
              if op.rule.source == "rulebridge"]
    assert len(labels) == 3 and all(label.endswith("\\nrulebridge (engine)") for label in labels)
    others = {nodes[f"op{i}"]["fillcolor"] for i, op in enumerate(tape.ops)
              if op.rule.source != "rulebridge"}
    assert len(engine) == 1 and not engine & others


def test_a_result_in_a_dict_with_a_constant_beside_it():
    # 3 is a constant of the result, not variable %3 (which the tape also has)
    _, tape = rulebridge.trace(lambda x: {"y": np.sin(np.cos(np.exp(x))), "n": 3}, np.ones(2))
    nodes, edges = parse(tape.to_dot())
    assert len(nodes) == 1 + 3 + 1
    assert [(a, b) for a, b, _ in edges if b == "result"] == [("op2", "result")]


def test_only_edges_from_a_multi_output_op_name_their_variable(traced):
    nodes, edges = parse(traced.to_dot())
    eigh = next(i for i, op in enumerate(traced.ops) if op.rule.function is np.linalg.eigh)
    w, v = traced.ops[eigh].outputs
    labelled = {(a, var) for a, _, var in edges if var is not None}
    assert labelled == {(f"op{eigh}", w), (f"op{eigh}", v)}


def test_an_unchecked_rule_is_drawn_differently_from_a_verified_one():
    def own_log1p(x):  # a function of the user's: its imported rule was never checked
        return np.log1p(x)

    own = rulebridge.import_rule(own_log1p, "autograd", equivalent=anp.log1p, check=False)
    _, tape = rulebridge.trace(lambda x: np.sum(own(np.sin(x))), np.linspace(0.1, 1.0, 4))
    nodes, _ = parse(tape.to_dot())
    fills = {op.rule.status: nodes[f"op{i}"]["fillcolor"] for i, op in enumerate(tape.ops)}
    assert set(fills) == {"pass", "unchecked"}
    assert fills["pass"] != fills["unchecked"]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_renders_it(traced):
    result = subprocess.run(["dot", "-Tsvg"], input=traced.to_dot(), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count('class="node"') == len(traced.inputs) + len(traced) + 1


def test_the_picture_in_the_docs_is_the_demos_tape_as_it_is_today():
    # docs/tapes.md shows `rulebridge demo`'s listing and docs/tape.svg, rendered from its DOT
    docs = ROOT / "docs"
    result = subprocess.run([sys.executable, "-m", "rulebridge", "demo", "--dot", "-"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    nodes, edges = parse(result.stdout)
    svg = (docs / "tape.svg").read_text()
    stale = "docs/tape.svg is stale: run `rulebridge demo --dot - | dot -Tsvg -o docs/tape.svg`"
    assert svg.count('class="node"') == len(nodes), stale
    assert svg.count('class="edge"') == len(edges), stale
    for name, attributes in nodes.items():
        assert f"<title>{name}</title>" in svg, stale
        for line in attributes["label"].split("\\n"):
            assert f">{line}</text>" in svg, stale
    listing = subprocess.run([sys.executable, "-m", "rulebridge", "demo"], capture_output=True,
                             text=True, timeout=120).stdout
    tape_listing = listing[listing.index("Tape with"):].rstrip()
    assert f"```text\n{tape_listing}\n```" in (docs / "tapes.md").read_text(), \
        "docs/tapes.md's listing is not what `rulebridge demo` prints"

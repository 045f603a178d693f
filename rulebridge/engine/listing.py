"""`print(tape)`: one line per op (output ids, function, input ids, the rule's source); and
`Tape.to_dot()`: the same ops as a Graphviz graph."""

from __future__ import annotations

import numpy as np

from ..rules.rule import function_name
from ..rules.signature import format_spec, spec_of
from ..tree import tree_flatten


def format_tape(tape) -> str:
    lines = [f"Tape with {len(tape.entries)} ops"]
    for var in tape.inputs:
        lines.append(f"  input %{var}::{format_spec(spec_of(tape.values[var]))}")
    for op in tape.ops:
        lines.append("  " + format_op(op))
    if tape.outputs is not None:
        lines.append(f"  return {_format_result(tape.outputs)}")
    return "\n".join(lines)


def format_op(op) -> str:
    """One op as `print(tape)` shows it."""
    outs = ", ".join("_" if v is None else f"%{v}" for v in op.outputs)
    name = function_name(op.rule.function).rsplit(".", 1)[-1]
    args = ", ".join(_format_arg(a, v) for a, v in zip(op.args, op.inputs))
    kwargs = "".join(f", {k}={v!r}" for k, v in op.kwargs.items())
    return f"{outs} = {name}({args}{kwargs})  [{op.rule.source}]"


def _format_arg(value, var) -> str:
    if type(var) is int:
        return f"%{var}"
    if type(var) is tuple:
        return "[" + ", ".join(_format_arg(a, v) for a, v in zip(value, var)) + "]"
    if isinstance(value, np.ndarray):
        return f"const {format_spec(spec_of(value))}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _format_result(result) -> str:
    leaves, structure = tree_flatten(result)
    return repr(structure.unflatten([_Shown(f"%{v}" if type(v) is int else "const")
                                     for v in leaves]))


class _Shown:
    """A leaf of `return ...` as printed: `%7` or `const`, without quotes."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


# Fill colours of an op's node by its rule's check status: verified, failed, anything else; and
# the engine's own ops (writes, buffers: rules the writes package builds under this source name).
_FILLS = {"pass": "#d5efd5", "fail": "#f4c7c3"}
_UNVERIFIED_FILL = "#fbe5c0"
_ENGINE_SOURCE, _ENGINE_FILL = "rulebridge", "#e6e6e6"


def format_dot(tape) -> str:
    """The tape as a Graphviz DOT digraph (`Tape.to_dot`): one node per traced input, one per op
    (its outputs, function, source and check status), one for the result, and an edge from the
    node that defines each variable to each op that reads it (labelled with the variable when
    the node defines several)."""
    lines = ["digraph tape {", '  rankdir="TB";',
             '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    producer: dict[int, str] = {}  # variable -> the node that defines it
    several: set[str] = set()  # nodes that define more than one variable
    for var in tape.inputs:
        producer[var] = f"in{var}"
        label = f"%{var}\n{format_spec(spec_of(tape.values[var]))}"
        lines.append(f'  in{var} [shape="ellipse", label="{_escape(label)}"];')
    for index, op in enumerate(tape.ops):
        node = f"op{index}"
        name = function_name(op.rule.function).rsplit(".", 1)[-1]
        outs = ", ".join("_" if v is None else f"%{v}" for v in op.outputs)
        provenance, fill = _provenance(op.rule)
        label = f"{outs} = {name}\n{provenance}"
        lines.append(f'  {node} [shape="box", style="rounded,filled", fillcolor="{fill}", '
                     f'label="{_escape(label)}"];')
        lines += _edges(op.inputs, producer, several, node)
        for var in op.outputs:
            if var is not None:
                producer[var] = node
        if len(op.outputs) > 1:
            several.add(node)
    if tape.outputs is not None:
        lines.append('  result [shape="plaintext", label="return"];')
        lines += _edges(tape.outputs, producer, several, "result")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _provenance(rule) -> tuple[str, str]:
    """The second line of an op's label and its fill colour."""
    if rule.source == _ENGINE_SOURCE:
        return "rulebridge (engine)", _ENGINE_FILL
    verdict = "verified" if rule.status == "pass" else rule.status
    return f"{rule.source}: {verdict}", _FILLS.get(rule.status, _UNVERIFIED_FILL)


def _edges(inputs, producer: dict[int, str], several: set[str], node: str) -> list[str]:
    edges = []
    for var in _variables_of(inputs):
        source = producer[var]
        edges.append(f'  {source} -> {node}' + (f' [label="%{var}"];' if source in several else ";"))
    return edges


def _variables_of(structure) -> list[int]:
    """The variables in an op's inputs or a traced result: the int leaves (a constant in a
    result is a `Constant`)."""
    return [v for v in tree_flatten(structure)[0] if type(v) is int]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")

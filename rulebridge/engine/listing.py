"""`print(tape)`: one line per op (output ids, function, input ids, the rule's source)."""

from __future__ import annotations

import numpy as np

from ..rules.rule import function_name
from ..rules.signature import format_spec, spec_of


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
    if type(result) is int:
        return f"%{result}"
    if isinstance(result, (tuple, list)):
        return "(" + ", ".join(_format_result(r) for r in result) + ")"
    return "const"

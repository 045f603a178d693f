"""`Tape.outputs`: the traced function's result as the tape holds it, for `replay` and printing.

It is the result's structure (rulebridge/tree.py) with each traced leaf replaced by its
variable, an int; every other leaf is held as a `Constant`, so an int the function returned is
never read as a variable.
"""

from __future__ import annotations

from typing import Any

from ..tree import tree_flatten


class Constant:
    """A leaf of `Tape.outputs` that no op computed (an int, a string, a plain array)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def substitute_result(result: Any, env: dict[int, Any]) -> Any:
    """`result` with each variable replaced by its value in `env`."""
    leaves, structure = tree_flatten(result)
    return structure.unflatten([env[v] if type(v) is int else
                                v.value if type(v) is Constant else v for v in leaves])

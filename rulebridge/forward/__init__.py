"""Forward mode: `jvp`, `jacfwd`, `linearize`.

The program is recorded on a tape exactly as `grad` records it (nothing on the per-op path
changes); then one forward sweep (sweep.py) walks the ops in program order and pushes the
tangents of the traced arguments through each op's pushforward: the rule's `jvp`, checked
against finite differences at the first inputs of each key (rules/selection.py `pushforward`),
or, where a rule has none or its check fails, the rule's pullback transposed (transpose.py: the pullback is linear,
so `J xdot` is read off it one output entry at a time).
"""

from .api import jacfwd, jvp, linearize

__all__ = ["jacfwd", "jvp", "linearize"]

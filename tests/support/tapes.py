"""The tapes a differentiation makes, for tests that read what was recorded."""

from __future__ import annotations

from rulebridge.engine import tape as tape_module


def recorded_tapes(monkeypatch) -> list:
    """A list that receives every `Tape` made from now until the test ends, in order."""
    tapes = []
    real_init = tape_module.Tape.__init__

    def init(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        tapes.append(self)

    monkeypatch.setattr(tape_module.Tape, "__init__", init)
    return tapes

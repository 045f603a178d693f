"""`rulebridge.scipy.linalg`: `scipy.linalg`, with every function an installed source has a rule
for as a drop-in (SciPy's own on plain arrays, an imported rule on traced values); the rest is
SciPy's."""

from __future__ import annotations

from .dropin import drop_ins, public_names

globals().update(public_names("scipy.linalg"))
DROP_INS = {name.rpartition(".")[2]: f for name, f in drop_ins("scipy.linalg").items()}
globals().update(DROP_INS)
__all__ = sorted(public_names("scipy.linalg"))

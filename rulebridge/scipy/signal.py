"""`rulebridge.scipy.signal`: `scipy.signal`, its functions as drop-ins (SciPy's own on plain arrays;
on traced values, an imported rule where an installed source has one); the rest is SciPy's."""

from __future__ import annotations

from .dropin import mirror

_names, DROP_INS = mirror("scipy.signal")
globals().update(_names)
__all__ = sorted(_names)
del _names

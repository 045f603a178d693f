"""`rulebridge.scipy.special`: `scipy.special`, with `logsumexp`, `softmax`, `log_softmax` and the
other non-ufunc functions as drop-ins (SciPy's own on plain arrays; on traced values, an imported
rule where an installed source has one). The ufuncs (`expit`, `logit`, `gammaln`, ...) are SciPy's
own: NumPy's protocols bring them to rulebridge."""

from __future__ import annotations

from .dropin import mirror

_names, DROP_INS = mirror("scipy.special")
globals().update(_names)
__all__ = sorted(_names)
del _names

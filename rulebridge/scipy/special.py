"""`rulebridge.scipy.special`: `scipy.special`, with `logsumexp`, `softmax`, `log_softmax` and the
other non-ufunc functions an installed source has a rule for as drop-ins. The ufuncs (`expit`,
`logit`, `gammaln`, ...) are SciPy's own: NumPy's protocols bring them to rulebridge."""

from __future__ import annotations

from .dropin import drop_ins, public_names

globals().update(public_names("scipy.special"))
DROP_INS = {name.rpartition(".")[2]: f for name, f in drop_ins("scipy.special").items()}
globals().update(DROP_INS)
__all__ = sorted(public_names("scipy.special"))

"""`rulebridge.scipy`: SciPy's module paths, with rules where SciPy's functions sit outside
NumPy's protocols.

`import jax.scipy.stats as stats` or `import autograd.scipy.stats as stats` becomes
`import rulebridge.scipy.stats as stats`. Each module re-exports SciPy's own names; the functions
that call `np.asarray` on their arguments (`scipy.stats.norm.logpdf`, `scipy.special.logsumexp`,
`scipy.linalg.solve_triangular`, `scipy.signal.convolve`, `scipy.integrate.odeint`) are replaced
by drop-ins where an installed source has a rule: SciPy's own function on plain arrays (values
are SciPy's to the bit), one recorded op with an imported rule on traced values. SciPy's ufuncs
(`scipy.special.expit`, `gammaln`) reach rulebridge through NumPy's protocols and are SciPy's own.

The modules: `special`, `stats`, `linalg`, `signal`, `integrate`.
"""

from __future__ import annotations

from . import integrate, linalg, signal, special, stats
from .dropin import DropIn


def imported(source: str) -> list[DropIn]:
    """The drop-ins with a rule imported from `source` (the compatibility matrix's rows).

    Parameters
    ----------
    source : str
        An adapter's name (`"jax"`, `"autograd"`).

    Returns
    -------
    list of DropIn
        Each is callable as SciPy's function; `drop_in.sources` names where its rules come from.
    """
    return [f for module in (special, stats, linalg, signal, integrate)
            for f in module.DROP_INS.values() if source in f.sources]

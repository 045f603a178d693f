"""`rulebridge.scipy`: SciPy's module paths, with rules where SciPy's functions sit outside
NumPy's protocols.

`import jax.scipy.stats as stats` or `import autograd.scipy.stats as stats` becomes
`import rulebridge.scipy.stats as stats`. Each module re-exports SciPy's own names; the functions
that call `np.asarray` on their arguments (`scipy.stats.norm.logpdf`, `scipy.special.logsumexp`,
`scipy.linalg.solve_triangular`, `scipy.signal.convolve`, `scipy.integrate.odeint`) are drop-ins:
SciPy's own function on plain arrays (values are SciPy's to the bit), one recorded op with an
imported rule on traced values where an installed source has one. SciPy's ufuncs
(`scipy.special.expit`, `gammaln`) reach rulebridge through NumPy's protocols and are SciPy's own.

The modules: `special`, `stats`, `linalg`, `signal`, `integrate`, each imported when first used
(`import rulebridge.scipy.stats` imports `scipy.stats` only, and no source: see dropin.py).
"""

from __future__ import annotations

import importlib
from typing import Any

from .dropin import DropIn

MODULES = ("special", "stats", "linalg", "signal", "integrate")


def __getattr__(name: str) -> Any:
    if name in MODULES:  # `rulebridge.scipy.linalg` after `import rulebridge.scipy` alone
        return importlib.import_module(f"{__name__}.{name}")  # a module of this package
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def imported(source: str) -> list[DropIn]:
    """The drop-ins with a rule imported from `source` (the compatibility matrix's rows).
    Every adapter is asked about every drop-in: this imports the sources.

    Parameters
    ----------
    source : str
        An adapter's name (`"jax"`, `"autograd"`).

    Returns
    -------
    list of DropIn
        Each is callable as SciPy's function; `drop_in.sources` names where its rules come from.
    """
    from . import integrate, linalg, signal, special, stats

    every = [*special.DROP_INS.values(), *stats.drop_ins().values(), *linalg.DROP_INS.values(),
             *signal.DROP_INS.values(), *integrate.DROP_INS.values()]
    return [f for f in every if source in f.sources]

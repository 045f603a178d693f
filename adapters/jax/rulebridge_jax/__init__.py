"""rulebridge adapter importing JAX's VJPs, compiled once per signature (entry point `jax`).

This module stays light: rulebridge reads the two declarations below without loading the
adapter, which imports JAX (about a second).
"""

rulebridge_priority = 10  # after adapters whose rules need no compilation
rulebridge_install = "pip install -e adapters/jax (from a checkout of rulebridge) and jax jaxlib"


def __getattr__(name: str):
    if name == "JaxAdapter":
        with _numpy_random_kept():
            from .adapter import JaxAdapter

        return JaxAdapter
    if name == "jax_function":  # rulebridge.jit's JAX back end, handed out (exported.py)
        with _numpy_random_kept():
            from .exported import jax_function

        return jax_function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _numpy_random_kept:
    """Importing JAX draws from NumPy's global generator; rulebridge imports it lazily, inside
    the user's first gradient, so the user's `np.random.seed(0)` stream would depend on whether
    that gradient loaded this adapter (and rulebridge.jit would see a draw the function never
    made). The generator's state is put back as it was."""

    def __enter__(self) -> None:
        import sys

        import numpy as np

        # only around JAX's own first import: a restore after that would rewind draws that
        # another thread made meanwhile
        self.state = None if "jax" in sys.modules else np.random.get_state()

    def __exit__(self, *exc: object) -> None:
        import numpy as np

        if self.state is not None:
            np.random.set_state(self.state)


__all__ = ["JaxAdapter", "jax_function"]

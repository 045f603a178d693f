"""rulebridge adapter importing JAX's VJPs, compiled once per signature (entry point `jax`).

This module stays light: rulebridge reads the two declarations below without loading the
adapter, which imports JAX (about a second).
"""

rulebridge_priority = 10  # after adapters whose rules need no compilation
rulebridge_install = "pip install -e adapters/jax (from a checkout of rulebridge) and jax jaxlib"


def __getattr__(name: str):
    if name == "JaxAdapter":
        from .adapter import JaxAdapter

        return JaxAdapter
    if name == "jax_function":  # rulebridge.jit's JAX back end, handed out (exported.py)
        from .exported import jax_function

        return jax_function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["JaxAdapter", "jax_function"]

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
    """Importing JAX draws from NumPy's global generator (jax/_src/clusters/k8s_cluster.py
    calls `np.random.rand(5)` at import); rulebridge imports it lazily, inside the user's first
    gradient, so the user's `np.random.seed(0)` stream would depend on whether that gradient
    loaded this adapter (and rulebridge.jit would see a draw the function never made).

    For the import's duration, each of numpy.random's functions of the global generator draws,
    in the importing thread only, from a generator of its own; every other thread still gets
    the global one's draws, in order. (Putting the global state back after the import instead
    rewound the draws another thread made meanwhile: it drew them twice.)"""

    def __enter__(self) -> None:
        import sys
        import threading

        import numpy as np

        self.replaced: dict = {}
        if "jax" in sys.modules:  # imported: nothing of JAX's draws again
            return
        shared = np.random.mtrand._rand
        importer, private = threading.get_ident(), np.random.RandomState(0)
        for name in dir(np.random):
            function = getattr(np.random, name)
            if getattr(function, "__self__", None) is not shared:
                continue

            def drawn(*args, _name=name, _shared=function, **kwargs):
                if threading.get_ident() == importer:
                    return getattr(private, _name)(*args, **kwargs)
                return _shared(*args, **kwargs)

            self.replaced[name] = function
            setattr(np.random, name, drawn)

    def __exit__(self, *exc: object) -> None:
        import numpy as np

        for name, function in self.replaced.items():
            setattr(np.random, name, function)


__all__ = ["JaxAdapter", "jax_function"]

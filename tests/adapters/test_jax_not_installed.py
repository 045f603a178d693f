"""Without jax, the jax adapter is listed as unavailable and asking for it says how to install it.

Runs in a subprocess where a path finder hides jax and jaxlib: their modules cannot be imported
and their distribution metadata cannot be found, as on a machine where they were never installed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

HIDE_JAX = textwrap.dedent("""
    import importlib.machinery, sys

    HIDDEN = {"jax", "jaxlib"}

    class WithoutJax(importlib.machinery.PathFinder):
        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                return None
            return super().find_spec(name, path, target)

        @classmethod
        def find_distributions(cls, *args, **kwargs):
            for dist in super().find_distributions(*args, **kwargs):
                if (dist.metadata["Name"] or "").lower() not in HIDDEN:
                    yield dist

    sys.meta_path[sys.meta_path.index(importlib.machinery.PathFinder)] = WithoutJax
""")

PROGRAM = HIDE_JAX + textwrap.dedent("""
    import numpy as np
    import rulebridge as rb

    try:
        import jax
    except ImportError:
        print("import jax: refused")
    (info,) = [a for a in rb.adapters() if a == "jax"]
    print("available:", info.available)
    print("reason:", info.reason)
    try:
        rb.grad(lambda x: np.sum(np.sin(x)), source="jax")(np.ones(3))
    except rb.AdapterError as exc:
        print("error:", exc)
    print("autograd still works:", rb.grad(lambda x: np.sum(np.sin(x)), source="autograd")(
        np.zeros(2)).tolist())
""")


def test_without_jax_the_adapter_is_unavailable_with_the_install_command():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "import jax: refused" in out
    assert "available: False" in out
    assert "reason: jax, jaxlib not installed; install it with `pip install jax jaxlib`" in out
    (error,) = [line for line in out.splitlines() if line.startswith("error:")]
    assert "'jax' is unavailable" in error and "pip install -e adapters/jax" in error
    assert "autograd still works: [1.0, 1.0]" in out

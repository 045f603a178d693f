"""`rulebridge matrix` lets adapters keep compiled code between runs (`Adapter.use_cache`): the
JAX adapter's second run compiles nothing its first run did, and gives the same numbers."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("jax")

RUN = """
import json, sys
from pathlib import Path
import jax, numpy as np, rulebridge as rb
events = []
jax.monitoring.register_event_listener(lambda name, **kw: events.append(name))
rb.REGISTRY.adapter("jax").use_cache(Path(sys.argv[1]))
a = np.random.default_rng(0).normal(size=(4, 4))
a = a @ a.T + 4 * np.eye(4)
g = rb.grad(lambda a: np.sum(np.linalg.eigh(a)[0] ** 2), source="jax")(a)
check = rb.check_rule(np.tanh, np.linspace(-1.0, 1.0, 5), source="jax")
print(json.dumps({"hits": sum(e.endswith("/cache_hits") for e in events),
                  "gradient": g.tolist(), "status": check.status}))
"""


def run(folder) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN, str(folder)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_second_run_reuses_what_the_first_compiled_and_agrees_to_the_bit(tmp_path):
    folder = tmp_path / "jax"
    first = run(folder)
    assert first["hits"] == 0 and first["status"] == "pass"
    assert any(folder.iterdir())  # the compiled pullbacks, kept
    second = run(folder)
    assert second["hits"] >= 2  # eigh's pullback and tanh's, not compiled again
    assert second["gradient"] == first["gradient"] and second["status"] == "pass"

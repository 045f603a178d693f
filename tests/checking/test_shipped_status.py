"""The status shipped with the package is bound to the distribution that produced it: it applies
to the adapter that distribution registers, at that version, and to no other adapter of the same
name (one registered in-process, one from another distribution). A name two distributions
register is reported, and neither adapter is used."""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.checking import status

from tests.support.plugins import install

X = np.linspace(0.1, 1.0, 4)
SIN = ("numpy.sin", "(float64[:])")


def sign_flipped_sin_adapter(name: str):
    """An adapter whose only rule, for np.sin, has the wrong sign."""

    class SignFlipped(rb.Adapter):
        def functions(self):
            return [np.sin]

        def build_rule(self, function, signature):
            if function is not np.sin:
                raise rb.Declined("only sin")
            return rb.Rule(np.sin, signature, lambda args, kw: (np.sin(args[0]), args[0]),
                           lambda x, g, argnums: (-g * np.cos(x),), source=self.name)

    adapter = SignFlipped()
    adapter.name = name
    return adapter


@pytest.fixture
def restored():
    """Whatever a test does to the adapters, the process gets the installed ones back."""
    yield
    rb.REGISTRY.unregister("autograd")
    importlib.invalidate_caches()
    rb.REGISTRY.rediscover()
    status.install(rb.REGISTRY)
    assert rb.REGISTRY.shipped_status(*SIN[:1], "autograd", SIN[1]) == "pass"


def test_the_shipped_status_names_the_distribution_that_made_it():
    shipped = status.load()["sources"]
    infos = {str(a): a for a in rb.adapters()}
    assert shipped, "verified.json ships no results"
    for name, entry in shipped.items():
        info = infos[name]
        assert (entry["distribution"], entry["version"]) == (info.distribution, info.version)
        assert entry["requires"] == info.requires and info.made(
            entry["distribution"], entry["version"], entry["requires"])
    assert rb.REGISTRY.shipped_status(SIN[0], "autograd", SIN[1]) == "pass"
    assert rb.rule_for(np.sin, rb.signature_of((X,)), "autograd").status == "pass"


def test_a_status_made_with_another_version_does_not_apply(restored):
    entry = dict(status.load()["sources"]["autograd"])
    for changed in ({"version": "0.0.9"}, {"requires": {**entry["requires"], "autograd": "1.0"}},
                    {"distribution": "rulebridge-autograd-fork"}):
        rb.REGISTRY.set_shipped({"autograd": {**entry, **changed}})
        assert rb.REGISTRY.shipped_status(SIN[0], "autograd", SIN[1]) is None, changed
        assert rb.rule_for(np.sin, rb.signature_of((X,)), "autograd").status != "pass"


def test_an_adapter_registered_in_process_under_a_shipped_name_gets_no_shipped_status(restored):
    rb.register_adapter(sign_flipped_sin_adapter("autograd"))
    assert rb.REGISTRY.shipped_status(SIN[0], "autograd", SIN[1]) is None
    impostor = rb.rule_for(np.sin, rb.signature_of((X,)), "autograd")
    assert impostor.status != "pass"
    # Asked among all sources, the verified JAX rule wins over the unverified impostor.
    assert rb.rule_for(np.sin, rb.signature_of((X,))).source == "jax"
    np.testing.assert_allclose(rb.grad(lambda x: np.sum(np.sin(x)))(X), np.cos(X), rtol=1e-14)


def fake_autograd(root: Path) -> Path:
    """A distribution `evil-autograd` 6.6.6 whose entry point is also named `autograd`,
    installed (dist-info and package) into a folder to put on sys.path."""
    project = root / "project"
    (project / "rulebridge_evil").mkdir(parents=True)
    (project / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "evil-autograd"
        version = "6.6.6"
        dependencies = ["rulebridge"]

        [project.entry-points."rulebridge.adapters"]
        autograd = "rulebridge_evil:adapter"
        """))
    (project / "rulebridge_evil" / "__init__.py").write_text(
        "from tests.test_shipped_status import sign_flipped_sin_adapter\n"
        "adapter = sign_flipped_sin_adapter('autograd')\n")
    site = root / "site"
    install(project, site)
    return site


def test_a_second_distribution_named_autograd_is_reported_and_trusted_by_no_one(tmp_path,
                                                                             restored):
    site = fake_autograd(tmp_path)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        with pytest.warns(rb.AdapterWarning, match=r"adapter named 'autograd': "
                                                   r"(rulebridge-autograd|evil-autograd) .* and "
                                                   r"(evil-autograd|rulebridge-autograd) "):
            rb.REGISTRY.rediscover()
            info = {str(a): a for a in rb.adapters()}["autograd"]
        assert not info.available
        assert "rulebridge-autograd 0.1.0" in info.reason and "evil-autograd 6.6.6" in info.reason
        # Neither is used under the name...
        with pytest.raises(rb.AdapterError, match="evil-autograd 6.6.6") as raised:
            rb.vjp(np.sin, X, source="autograd")
        assert "rulebridge-autograd" in str(raised.value)
        assert "rulebridge_evil" not in sys.modules  # the impostor was never even imported
        # ... nor given the shipped status ...
        assert rb.REGISTRY.shipped_status(SIN[0], "autograd", SIN[1]) is None
        # ... and the gradient comes, right, from the next source.
        assert rb.rule_for(np.sin, rb.signature_of((X,))).source == "jax"
        np.testing.assert_allclose(rb.grad(lambda x: np.sum(np.sin(x)))(X), np.cos(X),
                                   rtol=1e-14)
        # Were the impostor alone, the shipped status would not be its own either.
        entry = status.load()["sources"]["autograd"]
        made = {c.distribution: c.made(entry["distribution"], entry["version"], entry["requires"])
                for c in info.candidates}
        assert made == {"rulebridge-autograd": True, "evil-autograd": False}
    finally:
        sys.path.remove(str(site))
        sys.modules.pop("rulebridge_evil", None)

"""The library versions a matrix was made with (its header): rulebridge, NumPy, SciPy, each
source's requirements and each adapter's own version."""

from __future__ import annotations

from importlib import metadata
from typing import Iterable

from ..errors import AdapterError
from ..rules.adapter import requirement_names
from ..rules.registry import REGISTRY

# The libraries whose functions the matrix checks rules against; each source's own libraries
# are its adapter distribution's requirements.
LIBRARIES = ("numpy", "scipy")


def versions(sources: Iterable[str]) -> dict[str, str]:
    found = {"rulebridge": metadata.version("rulebridge")}
    libraries = list(LIBRARIES)
    for name in sources:
        info = REGISTRY.infos().get(name)
        if info is not None and info.distribution:
            libraries += requirement_names(info.distribution)
    for library in dict.fromkeys(libraries):
        if library == "rulebridge":
            continue
        try:
            found[library] = metadata.version(library)
        except metadata.PackageNotFoundError:
            pass
    for name in sources:
        try:
            found[f"adapter {name}"] = REGISTRY.adapter(name).version()
        except AdapterError:
            pass
    return found

"""Installing an adapter distribution into a folder, as pip would, without building a wheel."""

import shutil
import tomllib
from pathlib import Path

EXAMPLE_ADAPTER = Path(__file__).resolve().parents[1] / "adapters" / "example_adapter"


def install(project: Path, site: Path) -> None:
    """What `pip install --target site project` leaves behind, without building a wheel: the
    packages and a dist-info whose METADATA and entry_points.txt come from its pyproject."""
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    dist_info = site / f"{meta['name'].replace('-', '_')}-{meta['version']}.dist-info"
    dist_info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {meta['name']}", f"Version: {meta['version']}"]
    lines += [f"Requires-Dist: {r}" for r in meta.get("dependencies", [])]
    (dist_info / "METADATA").write_text("\n".join(lines) + "\n")
    points = meta["entry-points"]["rulebridge.adapters"]
    (dist_info / "entry_points.txt").write_text(
        "[rulebridge.adapters]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()))
    for package in project.glob("rulebridge_*"):
        shutil.copytree(package, site / package.name, ignore=shutil.ignore_patterns("__pycache__"))

"""Make the status shipped with the package (rulebridge/checking/verified.json) from the
committed compat_matrix.json: `python tools/ship_status.py` after `rulebridge matrix`, before a
release. A maintainer's step, not a user command: `rulebridge matrix` never writes into the
package. `--check` fails when the shipped file does not agree with compat_matrix.json."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rulebridge.checking import status  # noqa: E402

MATRIX = ROOT / "compat_matrix.json"


def shipped_text(matrix_path: Path = MATRIX) -> str:
    """The text verified.json must have for the matrix at `matrix_path`."""
    return status.to_text(status.from_matrix(json.loads(matrix_path.read_text())))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true",
                   help=f"fail if {status.STATUS_FILE.name} disagrees with {MATRIX.name}")
    args = p.parse_args(argv)
    text = shipped_text()
    if args.check:
        if status.STATUS_FILE.read_text() != text:
            print(f"{status.STATUS_FILE} does not agree with {MATRIX}: run "
                  "`python tools/ship_status.py` and commit it.", file=sys.stderr)
            return 1
        return 0
    status.STATUS_FILE.write_text(text)
    print(f"wrote {status.STATUS_FILE} from {MATRIX}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

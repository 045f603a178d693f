"""The `rulebridge` command: `rulebridge demo`, `rulebridge matrix`."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rulebridge", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="differentiate a small NumPy model; print gradient and tape")
    commands.add_parser("matrix", add_help=False,
                        help="check every rule against finite differences; write compat_matrix.md")
    args, rest = parser.parse_known_args(argv)
    if args.command == "demo":
        from .demo import run

        return run(rest)
    if args.command == "matrix":
        from .checking.command import main as matrix

        return matrix(rest)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())

"""The `rulebridge` command (also `python -m rulebridge`): `rulebridge demo`, `rulebridge matrix`."""

from __future__ import annotations

import argparse
import sys

from . import __version__


def matrix(argv: list[str] | None = None) -> int:
    """`rulebridge matrix ARGS`: NumPy's functions and the `rulebridge.scipy` drop-ins (this
    layer may import both; the checking layer below is handed the drop-ins).

    Parameters
    ----------
    argv : list of str, optional
        The command's arguments (`--check`, `--source NAME`, ...; `rulebridge matrix --help`).

    Returns
    -------
    int
        The exit status.
    """
    from .checking.command import main as run_matrix
    from .scipy import imported

    return run_matrix(argv, importers=(imported,))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rulebridge", description=__doc__)
    parser.add_argument("--version", action="version", version=f"rulebridge {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo",
                               help="differentiate a small NumPy model; print gradient and tape")
    demo.add_argument("--dot", metavar="FILE",
                      help="also write the tape as Graphviz DOT to FILE ('-': standard output "
                           "instead of the listing); render with `dot -Tsvg FILE -o tape.svg`")
    commands.add_parser("matrix", add_help=False,
                        help="check every rule against finite differences; write compat_matrix.md")
    args, rest = parser.parse_known_args(argv)
    if args.command == "demo":
        from .demo import run

        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        return run(dot=args.dot)
    if args.command == "matrix":
        return matrix(rest)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())

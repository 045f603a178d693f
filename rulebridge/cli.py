"""The `rulebridge` command (also `python -m rulebridge`): `rulebridge demo`, `rulebridge matrix`,
`rulebridge lookup "np.cumprod(float64[:, :], axis=0)"`."""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np

from . import __version__

# What `rulebridge --help` lists of the Python API: the transformations, as a user reaches for them.
TRANSFORMATIONS = (
    ("grad(f)", "the gradient of a real scalar function"),
    ("value_and_grad(f)", "(f(x), its gradient) from one trace"),
    ("vjp(f, *args)", "(y, pullback): reverse mode for any output"),
    ("jvp(f, primals, tangents)", "(y, ydot): forward mode along the tangents"),
    ("linearize(f, *primals)", "(y, f_jvp): forward mode, traced once"),
    ("jacrev(f), jacfwd(f)", "Jacobians in reverse and forward mode"),
    ("hessian(f), hvp(f)", "second derivatives; nest any of these for higher orders"),
    ("jit(fun)", "trace once, then replay with NumPy alone, or stage it with backend="),
)


def _python_api() -> str:
    width = max(len(call) for call, _ in TRANSFORMATIONS)
    rows = "\n".join(f"  rulebridge.{call:<{width}}  {what}" for call, what in TRANSFORMATIONS)
    return f"in Python (import rulebridge; docs/index.md):\n{rows}"


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
    from .higher import check_gradgrad
    from .scipy import imported

    return run_matrix(argv, importers=(imported,), second_order=check_gradgrad)


class _Spelled:
    """`float64[:, :]` in a spelled call: an array of that dtype and rank (3 along each axis);
    `float64` alone a scalar of it."""

    def __init__(self, dtype: str) -> None:
        self.dtype = np.dtype(dtype)

    def __getitem__(self, index) -> np.ndarray:
        axes = index if isinstance(index, tuple) else (index,)
        if any(a is not Ellipsis and a != slice(None) for a in axes):
            raise SyntaxError(f"{self.dtype}[...] takes only `:` per axis, as in float64[:, :]")
        rng = np.random.default_rng(0)
        value = rng.standard_normal((3,) * len(axes))
        return (value + 1j * rng.standard_normal(value.shape) if self.dtype.kind == "c"
                else value).astype(self.dtype)


def spelled_call(text: str) -> tuple:
    """`(function, args, kwargs)` of a call spelled like a key: `np.cumprod(float64[:, :],
    axis=0)`; `np`/`numpy` is NumPy and `scipy` is rulebridge.scipy (SciPy's names, drop-ins
    where SciPy is outside NumPy's protocols)."""
    import ast

    from . import scipy as dropins

    tree = ast.parse(text.strip(), mode="eval").body
    if not isinstance(tree, ast.Call):
        raise SyntaxError(f"{text!r} is not a call: spell one, as np.cumprod(float64[:, :], "
                          "axis=0)")
    scope = {"np": np, "numpy": np, "scipy": dropins, "inf": np.inf, "nan": np.nan}
    for name in ("float32", "float64", "complex128", "int64", "int32", "bool_"):
        scope[name] = _Spelled(name)

    def value(node):
        try:
            found = eval(compile(ast.Expression(node), "<lookup>", "eval"), scope)
        except NameError as exc:
            name = getattr(exc, "name", None) or ""
            respelled = re.sub(rf"\b{re.escape(name)}\b", "float64[:, :]", text.strip())
            raise SyntaxError(f"{exc}: spell each array by its type, as float64[:, :] (float32, "
                              "float64, complex128, int64, bool_), and each scalar by its "
                              f"value or type (2.0, float64); for a float64 matrix: "
                              f"rulebridge lookup \"{respelled}\"") from None
        return np.dtype(found.dtype).type(0.5) if isinstance(found, _Spelled) else found

    return (value(tree.func), tuple(value(a) for a in tree.args),
            {k.arg: value(k.value) for k in tree.keywords})


def lookup(text: str) -> int:
    """`rulebridge lookup "CALL"`: print `rulebridge.lookup` of a spelled call."""
    from . import lookup as look

    try:
        function, args, kwargs = spelled_call(text)
    except SyntaxError as exc:
        print(f"rulebridge lookup: {exc.msg if exc.msg else exc}", file=sys.stderr)
        return 2
    print(look(function, *args, **kwargs))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rulebridge", description=__doc__, epilog=_python_api(),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"rulebridge {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo",
                               help="differentiate a small NumPy model; print gradient and tape")
    demo.add_argument("--dot", metavar="FILE",
                      help="also write the tape as Graphviz DOT to FILE ('-': standard output "
                           "instead of the listing); render with `dot -Tsvg FILE -o tape.svg`")
    commands.add_parser("matrix", add_help=False,
                        help="check every rule against finite differences; write compat_matrix.md")
    look = commands.add_parser(
        "lookup", help="is this call verified? each source's verdict at its key",
        description="Each source's verdict at the key of one call, the keys the shipped matrix "
                    "checked, and the caveats. Spell arrays by type: "
                    "rulebridge lookup \"np.cumprod(float64[:, :], axis=0)\"; "
                    "\"scipy.stats.norm.logpdf(float64[:], 0.0, 1.0)\" (scipy is "
                    "rulebridge.scipy).")
    look.add_argument("call", help="a call such as \"np.linalg.eigh(float64[:, :])\"")
    args, rest = parser.parse_known_args(argv)
    if args.command == "demo":
        from .demo import run

        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        return run(dot=args.dot)
    if args.command == "matrix":
        return matrix(rest)
    if args.command == "lookup":
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        return lookup(args.call)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())

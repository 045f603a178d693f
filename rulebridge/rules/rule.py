"""The rule contract: what an adapter hands the engine for one function at one signature."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from .signature import Signature, format_signature

Forward = Callable[[tuple, dict], "tuple[Any, Any]"]
Pullback = Callable[[Any, Any, "tuple[int, ...]"], tuple]
Pushforward = Callable[[Any, tuple, "tuple[int, ...]"], Any]


def function_name(function: Callable) -> str:
    """The name users import `function` under, as errors, listings and the matrix spell it.

    Parameters
    ----------
    function : callable
        A NumPy or SciPy function or ufunc, an operator, or any callable.

    Returns
    -------
    str
        Its public module and name: ``numpy.sin``, ``numpy.linalg.solve``,
        ``scipy.special.gammaln``, ``operator.getitem`` (not ``numpy._core.fromnumeric.sum``).
    """
    explicit = getattr(function, "__rulebridge_name__", None)
    if explicit:
        return explicit
    name = getattr(function, "__name__", None) or type(function).__name__
    module = getattr(function, "__module__", None)
    if module is None and type(function).__name__ == "ufunc":
        module = _ufunc_module(function, name)
    if module is None:
        return name
    if module == "_operator":
        return f"operator.{name}"
    module = _public_module(module, name)
    return f"{module}.{name}"


def _ufunc_module(function: Callable, name: str) -> str:
    # Ufuncs carry no __module__; SciPy's (scipy.special.erf) are not NumPy's.
    import sys

    import numpy

    if getattr(numpy, name, None) is function:
        return "numpy"
    special = sys.modules.get("scipy.special")
    return "scipy.special" if getattr(special, name, None) is function else "numpy"


def _public_module(module: str, name: str) -> str:
    # NumPy and SciPy define functions in private modules (numpy._core.fromnumeric); name the
    # public namespace the user imports them from.
    for public in ("numpy.linalg", "numpy.fft", "scipy.special", "scipy.linalg", "numpy"):
        if module == public or module.startswith(public + ".") or module.startswith(public + "._"):
            return public
    if module.startswith("numpy"):
        return "numpy"
    return module


class CallResiduals(NamedTuple):
    """The residuals of a `CallForward` rule, as its pullback and `compact` receive them: the
    call's output, its positional arguments, and its keywords (None when it had none).

    The engine makes them as plain tuples in this field order (an instance of this class costs
    more to make on the hot path), so a pullback reads them by unpacking,
    ``output, args, kwargs = residuals``, or names them with ``CallResiduals._make(residuals)``.
    """

    output: Any
    args: tuple
    kwargs: Any


class _FunctionForward:
    """A forward that calls `function` (see its two kinds below), with an optional
    `compact(residuals, argnums) -> residuals`, which the engine calls once the forward pass is
    over on each op holding a large array (output or argument): the new residuals keep only what
    the pullback of those traced arguments needs, and the rule's pullback must accept them as
    well as the plain ones."""

    __slots__ = ("function", "compact")

    def __init__(self, function: Callable,
                 compact: "Callable[[tuple, tuple], Any] | None" = None) -> None:
        self.function = function
        self.compact = compact

    def __repr__(self) -> str:
        return f"{type(self).__name__}({function_name(self.function)})"


class CallForward(_FunctionForward):
    """The forward most imported rules have, as a value the engine recognises: the primal is
    `function(*args, **kwargs)` and the residuals are `CallResiduals` (output, args, kwargs or
    None). The engine runs it inline on its hot path (no call of the forward itself); called as a
    forward, it does the same. A wrapped rule (rulebridge/checking/wrapping.py) is simply not a
    `CallForward`, so its policy always runs. `compact` is optional (`_FunctionForward`)."""

    __slots__ = ()

    def __call__(self, args: tuple, kwargs) -> "tuple[Any, tuple]":
        out = self.function(*args, **kwargs) if kwargs else self.function(*args)
        return out, (out, args, kwargs or None)  # CallResiduals' fields, as the engine makes them


class ArgumentsForward(_FunctionForward):
    """A forward whose residuals are the call's arguments alone: the primal is
    `function(*args, **kwargs)` and the residuals are `(args, kwargs)`, the very tuple and
    mapping it was called with (the JAX adapter's, whose pullback reads no output). Declaring it
    lets the engine hand the pullback other arrays of the same values in place of the arguments
    (`Rule.rebased`): a compact copy of a small view, so the view's large base can be freed.
    `compact` is optional, as for `CallForward`."""

    __slots__ = ()

    def __call__(self, args: tuple, kwargs) -> "tuple[Any, tuple]":
        return self.function(*args, **kwargs), (args, kwargs)


class SparseCotangent:
    """A cotangent that is zero except for what `add_into(target)` adds, in place, into a dense
    array of its argument's shape and dtype: for an index read `x[i]`, `np.add.at(target, i, g)`.
    The sweep gives each variable one accumulator and lets every read add into it, so a loop of
    `x[i]` reads costs what the reads write, not a dense zero array per read."""

    __slots__ = ("add_into",)

    def __init__(self, add_into: Callable[[Any], Any]) -> None:
        self.add_into = add_into

    def __repr__(self) -> str:
        return f"SparseCotangent({self.add_into!r})"


class PullbackCall(NamedTuple):
    """A pullback offered as a call of a function with a rule of its own (`Rule.pullback_rule`).

    `rule.function(*args)` returns a tuple of arrays; `assemble(outputs)` (None: the outputs
    themselves) makes of them the pullback's result, one cotangent (or None) per traced argument.
    `args` may hold an enclosing differentiation's boxes: the engine records the call on that
    level. `rule`'s forward is a `CallForward` of `rule.function`, and `rule` may offer its own
    pullback as a rule in turn (the next order)."""

    rule: "Rule"
    args: tuple
    assemble: "Callable[[tuple], tuple] | None" = None


@dataclass(eq=False)
class Rule:
    """A forward and a pullback for `function` at one concrete `signature`, with its provenance.

    `forward(args, kwargs) -> (output, residuals)`;
    `pullback(residuals, output_cotangent, argnums) -> one cotangent (or None) per argnum`;
    optionally `jvp(residuals, tangents, argnums) -> the output's tangent`, the pushforward
    forward mode uses. See docs/adapter-contract.md.
    """

    function: Callable
    signature: Signature
    forward: Forward
    pullback: Pullback
    source: str
    source_version: str = ""
    notes: str = ""
    status: str = field(default="unchecked")  # unchecked, pass, fail, error, inconclusive
    # Optional: the same pullback, but allowed to return `SparseCotangent`s. The sweep prefers it;
    # checks and everything else use `pullback`, whose cotangents are dense.
    sparse_pullback: Pullback | None = None
    # Optional, beside a `CallForward` forward: `unary_vjp(output, x)(output_cotangent)` is x's
    # cotangent for a call `f(x)` with one positional argument, a traced ndarray, and no keywords
    # (autograd's VJP-maker form). The sweep calls it on such ops instead of `pullback` and uses
    # what it returns when that is an ndarray of x's shape and dtype; otherwise it calls
    # `pullback`, which must agree (rule checks compare the two).
    unary_vjp: Callable[[Any, Any], Callable[[Any], Any]] | None = None
    # Optional: `traced_forward(args, kwargs, traced) -> (output, residuals)`, the forward told
    # which positional arguments are traced (a tuple of positions). The engine calls it instead
    # of `forward` when it is set: a check before first use differentiates only those arguments
    # (the others are constants at their values). `forward` must mean the same with every
    # differentiable argument traced.
    traced_forward: Callable[[tuple, Any, tuple], tuple] | None = None
    # Optional: the pushforward, `jvp(residuals, tangents, argnums) -> output tangent`, with one
    # tangent per entry of `argnums` (each of its argument's shape and dtype; a list argument's
    # a list, zeros for its untraced items) and the residuals `forward` made. It returns the
    # output's tangent, or for several outputs a tuple with one per output (None: zero, or an
    # output that carries no derivative), each of its output's shape and dtype. Forward mode
    # (rulebridge.jvp, jacfwd, linearize) checks it against central differences of `function`
    # at the first inputs of each key before trusting it; a rule without one is pushed forward
    # through its pullback, which is linear (rulebridge/forward/transpose.py).
    jvp: Pushforward | None = None
    # Optional: the pullback as a function with a rule of its own, for a pullback that is not
    # NumPy code (a compiled function) and so cannot run on an enclosing differentiation's boxes
    # (grad of grad, hessian). `pullback_rule(residuals, cotangent, argnums) -> PullbackCall`:
    # a rule whose `function(*args)` returns what `pullback(residuals, cotangent, argnums)`
    # would, its cotangents (`assemble` puts them in that form). The engine records that call as
    # one op of the enclosing level, once its rule passed a check against central differences
    # of the pullback itself (docs/adapter-contract.md, "Pullbacks as rules").
    pullback_rule: "Callable[[Any, Any, tuple[int, ...]], PullbackCall] | None" = None
    # False declares that `pullback` cannot run on an enclosing differentiation's boxes (it is
    # compiled code, not NumPy code): under nesting the engine then never calls it on them and
    # goes at once where a pullback that raised on them goes (`pullback_rule`, else another
    # source's rule, else a clear refusal), rather than calling it and letting it raise.
    pullback_takes_boxes: bool = True

    @property
    def missing(self) -> bool:
        """True for the placeholder the registry caches when no adapter has a rule."""
        return self.status == "missing"

    @property
    def name(self) -> str:
        return function_name(self.function)

    def used(self, residuals: Any) -> "Rule":
        """The rule whose pullback runs on `residuals`, which this rule's forward made: itself
        (a rule that stands for others, like the check at first use, names the one it chose)."""
        return self

    def chosen(self, residuals: Any) -> "tuple[Rule, Any]":
        """`(rule, residuals)`: the rule that made `residuals` and its own residuals (`used`, with
        the residuals that rule's pullback and pushforward take)."""
        return self, residuals

    def call_residuals(self, residuals: Any) -> Any:
        """`residuals` in `CallResiduals`' fields when a `CallForward` made them, else None."""
        return residuals if type(self.forward) is CallForward else None

    def compacted(self, residuals: Any, argnums: tuple) -> Any:
        """What `CallForward.compact` keeps of `residuals` for the pullback of `argnums`; None
        where the rule has no compact (rulebridge/engine/shedding.py)."""
        forward = self.forward
        if ((type(forward) is CallForward or type(forward) is ArgumentsForward)
                and forward.compact is not None):
            return forward.compact(residuals, argnums)
        return None

    def rebased(self, residuals: Any, args: tuple) -> Any:
        """`residuals` with the op's positional arguments replaced by `args`, arrays of the same
        values (rulebridge/engine/shedding.py: compact copies of small views of large arrays);
        None where the rule's residuals are not known to hold the arguments as they came."""
        forward = self.forward
        if type(forward) is CallForward:
            return (residuals[0], args, residuals[2])  # CallResiduals' fields
        if type(forward) is ArgumentsForward:
            return (args, residuals[1])
        return None

    def describe(self) -> str:
        return f"{self.name}{format_signature(self.signature)} from {self.source}"

    def __repr__(self) -> str:
        return f"<Rule {self.describe()} [{self.status}]>"

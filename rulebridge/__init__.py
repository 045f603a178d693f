"""rulebridge: gradients of unmodified NumPy code, with rules imported from JAX and autograd and
checked against finite differences."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from .api import check_grads, elementwise_grad, grad, jacobian, trace, value_and_grad, vjp
from .checking import (CheckResult, RuleCheckError, assert_rule,
                       check_on_first_use, check_rule, trust)
from .checking import firstuse as _firstuse
from .checking import kinks as _kinks
from .checking import phase_refusal as _phase_refusal
from .checking import gradcheck as _gradcheck
from .checking import gradgrad as _gradgrad
from .checking import pushforward as _pushforward
from .checking import regimes as _regimes
from .checking import status as _status
from .checking.debug import debug
from .checking.pushforward import check_pushforward
from .checking.debug import enabled as debug_enabled
from .checking.lookup import Lookup, Verdict, lookup_call
from .engine.box import Traced
from .engine.tape import Op, Tape
from .errors import (AdapterError, AdapterWarning, ArgumentError, Declined, GradientCheckError,
                     ImportRuleError, MutationError, NestedDifferentiationError, NoDerivativeError,
                     NoRuleError, ReplayError, RulebridgeError, RuleContractError, TracingError,
                     UncheckedRuleWarning, UnverifiedRuleError, UsageError)
from .errors import JitError
from .flat import flatten
from .higher import hessian, hvp, jacrev
from .forward import jacfwd, jvp, linearize
from .import_rule import import_rule
from .jit import Jitted, jit
from .rules.adapter import ENTRY_POINT_GROUP, Adapter, AdapterInfo
from .rules.conform import DIFFERENTIABLE_DTYPES, conform_cotangent, decline_unsupported
from .rules.keys import key_of, spelled_for
from .rules.namespaces import dispatched_functions, dispatches
from .rules.levels import primal
from .rules.registry import REGISTRY
from .rules.rule import ArgumentsForward, CallForward, PullbackCall, Rule, SparseCotangent, function_name
from .rules.signature import (Signature, SpecInfo, format_signature, format_spec,
                              is_differentiable, parse_signature, signature_of, spec_of)
from .rules.speed import measure_rules
from .writes.follow import follow_plain_buffers
from .rules.triangles import (TriangleCall, hermitian_from_triangle, lower_triangle_cotangent,
                              one_triangle_call, reads_one_triangle, triangle_read)
from .tree import register_container

__version__ = "0.1.0"


def adapters() -> list[AdapterInfo]:
    """The installed adapters, found through their entry points without importing them.

    Returns
    -------
    list of AdapterInfo
        One item per adapter: its name (an `AdapterInfo` is a str), with `.available` (False
        when its distribution needs a package that is not installed) and `.reason`.
    """
    return list(REGISTRY.infos().values())


def rules() -> list[Rule]:
    """The rules looked up so far in this process.

    Returns
    -------
    list of Rule
        Every rule the registry has built, each with its source, signature and check status.
    """
    return REGISTRY.rules()


def prefer(*args) -> None:
    """Set the order in which `source=None` asks the installed adapters for a rule.

    A rule verified at the signature still comes before an unverified one; the order decides
    among rules of equal standing (docs/adapter-contract.md, "Which rule `source=None` uses").

    Parameters
    ----------
    *args : str, or a function followed by str
        ``prefer("jax", "autograd")`` sets the global order; ``prefer(np.linalg.eigh, "jax")``
        sets the order for one function, before the global one.

    Raises
    ------
    TypeError
        When no source name is given, or a name is not a str.
    """
    REGISTRY.prefer(*args)


def register_adapter(adapter: Adapter) -> None:
    """Add an adapter to this process's sources of rules.

    A distribution declares its adapter as an entry point in the group `ENTRY_POINT_GROUP`
    instead; this is for an adapter defined in a script, a notebook or a test.

    Parameters
    ----------
    adapter : Adapter
        An instance with a `name`; it replaces an adapter of the same name.

    Raises
    ------
    AdapterError
        When the adapter has no name.
    """
    REGISTRY.register(adapter)


def rule_for(function: Callable, signature: Signature, source: str | None = None) -> Rule:
    """The rule rulebridge would use for `function` at `signature` (what `lookup` returned
    before 0.2).

    Parameters
    ----------
    function : callable
        A NumPy or SciPy function, or one given a rule by `import_rule`.
    signature : Signature
        The concrete types of the positional arguments, from `signature_of` or
        `parse_signature` (``rulebridge.parse_signature("(float64[:, :], float64[:])")``).
    source : str, optional
        Ask only this adapter; None asks every installed adapter, as `grad` does.

    Returns
    -------
    Rule

    Raises
    ------
    NoRuleError
        When no adapter has a rule there; the message gives each adapter's reason.
    """
    if getattr(function, "__rulebridge_dropin__", False):  # rulebridge.scipy's DropIn
        function.sources  # imports the drop-in's rules, as its first traced call would
    return REGISTRY.require(function, signature, source)


def lookup(function: Callable, *args: Any, **kwargs: Any) -> Lookup:
    """Is this call verified? For ``function(*args, **kwargs)``: the key rulebridge trusts a
    rule at, each installed source's verdict there, the rule a call uses, the keys the shipped
    matrix checked for the function, and its caveats. Nothing is differentiated or checked.

    ``print(rulebridge.lookup(np.cumprod, x, axis=0))``; the command
    ``rulebridge lookup "np.cumprod(float64[:, :], axis=0)"`` prints the same.

    Parameters
    ----------
    function : callable
        A NumPy or SciPy function, a `rulebridge.scipy` drop-in, or one given a rule by
        `import_rule`.
    *args, **kwargs
        The call's arguments, plain arrays and values (only their types and the static values
        that make the key matter).

    Returns
    -------
    Lookup
        `.verified`, `.used` (the source used, None when a call raises), `.verdicts` (one
        `Verdict` per source: `.status`, `.origin`, `.reason`), `.nearby`, `.caveats`.

    Notes
    -----
    ``lookup(function, signature, source=None)`` with a `Signature` still returns the `Rule`,
    with a DeprecationWarning: that is `rule_for` now.
    """
    if _is_signature_form(args, kwargs):
        warnings.warn("rulebridge.lookup(function, signature, source) is rulebridge.rule_for "
                      "now; rulebridge.lookup(function, *args, **kwargs) reports on a call",
                      DeprecationWarning, stacklevel=2)
        return rule_for(function, *args, **kwargs)
    return lookup_call(function, args, kwargs)


def _is_signature_form(args: tuple, kwargs: dict) -> bool:
    """`lookup(f, signature[, source])`: a tuple of specs, then at most a source name."""
    if not args or not isinstance(args[0], tuple) or set(kwargs) - {"source"}:
        return False
    if len(args) > 2 or (len(args) == 2 and not isinstance(args[1], (str, type(None)))):
        return False
    return all(isinstance(spec, type) or (isinstance(spec, tuple) and spec
                                          and isinstance(spec[0], (type, np.dtype)))
               for spec in args[0])


# The shipped check results choose among sources (read when the first rule is looked up), and
# a key they do not cover is checked at its first inputs (rulebridge.trust() turns that off).
REGISTRY.add_status_loader(_status.install)
_firstuse.install(REGISTRY)
_phase_refusal.install(REGISTRY)  # NumPy's complex eigenvectors' phases: no derivative
_kinks.install(REGISTRY)  # a norm at zero: the subgradient 0, not NaN
_regimes.install(REGISTRY)  # pinv and lstsq where rcond cuts: checking/regimes.py
_gradcheck.install(check_grads)  # for the pytest plugin's check_grads fixture
# the first-use checks of the other modes (rules/selection.py): a pushforward, a pullback's rule
_pushforward.install()  # checking/pushforward.py
_gradgrad.install()  # a pullback offered as a rule is checked before use: checking/gradgrad.py

__all__ = [
    "GradientCheckError", "check_grads", "elementwise_grad", "flatten", "jacobian",
    "register_container", "hessian", "hvp", "jacrev",
    "jit", "Jitted", "JitError",
    "Adapter", "AdapterError", "AdapterInfo", "AdapterWarning", "ArgumentError", "UsageError",
    "ArgumentsForward", "CallForward", "CheckResult", "PullbackCall",
    "DIFFERENTIABLE_DTYPES", "Declined", "ENTRY_POINT_GROUP", "ImportRuleError", "MutationError",
    "NestedDifferentiationError", "NoDerivativeError", "NoRuleError", "Op", "ReplayError", "Rule", "RuleCheckError",
    "RuleContractError", "RulebridgeError", "Signature", "SparseCotangent", "SpecInfo", "Tape",
    "Traced", "TracingError", "TriangleCall", "UncheckedRuleWarning", "UnverifiedRuleError",
    "adapters", "assert_rule",
    "check_on_first_use", "check_pushforward", "check_rule", "conform_cotangent", "debug",
    "debug_enabled",
    "decline_unsupported", "dispatched_functions", "dispatches", "follow_plain_buffers",
    "format_signature", "format_spec", "function_name", "grad", "hermitian_from_triangle",
    "import_rule", "is_differentiable", "jacfwd", "jvp", "key_of", "linearize", "lookup",
    "Lookup", "rule_for", "Verdict",
    "lower_triangle_cotangent", "measure_rules", "one_triangle_call", "parse_signature",
    "prefer", "primal", "reads_one_triangle", "register_adapter", "rules", "signature_of", "spec_of",
    "spelled_for", "trace", "triangle_read", "trust", "value_and_grad", "vjp",
]

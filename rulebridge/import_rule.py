"""`import_rule`: differentiate any function (`scipy.special.logsumexp`, a compiled routine, your
own NumPy code) with the pullback of a function of the same meaning from a source (JAX, autograd,
a third-party adapter), found by name or given as `equivalent`.

The forward is always the function itself, so values are its own to the bit. Before a rule is
first used at a signature and set of keyword arguments, the equivalent's outputs are compared with
the function's (count, shapes, dtypes, values) at those very inputs, and with `check=True` the
rule is checked against finite differences of the function there (`rulebridge.check_rule`).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Callable, Iterable, Sequence

import numpy as np

from .rules.adapter import Adapter
from .rules.arguments import traced_argnums, with_traced
from .checking.check import check_call
from .checking.constants import Verdicts, constant_values, declared
from .checking.outputs import outputs_mismatch
from .checking.wrapping import Policy, wrap
from .errors import AdapterError, Declined, ImportRuleError, UnverifiedRuleError
from .rules.keys import spelled_for, static_values
from .rules.levels import primals
from .rules.registry import REGISTRY
from .rules.pinned import pinned, refresh
from .rules.rule import Rule, function_name
from .rules.signature import (INEXACT_KINDS, Signature, SpecInfo, format_signature,
                              is_differentiable, parse_signature, signature_of)
from .engine.box import _contains_box, _positional
from .import_tree import (LeafCall, checked_call, container_result, inexact_positions,
                          record_leaf_call, traced_call)
from .tree import describe


def import_rule(function: Callable | str | None = None, source: str | Sequence[str] | None = None,
                *, equivalent: Callable | None = None,
                signatures: Iterable[str | tuple] | str | None = None,
                check: bool = True, continuous: Iterable[int | str] | None = None) -> Callable:
    """Make `function` differentiable by rulebridge, with a rule imported from a source.

    The pullback is the source's for `equivalent`, or for the source's function of the same name
    (``scipy.special.logsumexp`` -> ``jax.scipy.special.logsumexp``); the forward is `function`
    itself. As a decorator: ``@import_rule(source="jax", equivalent=...)``.

    Parameters
    ----------
    function : callable
        Any function of plain arrays: a SciPy function, a compiled routine, your own NumPy code.
    source : str or sequence of str, optional
        The adapter(s) to import from; None imports from every installed adapter that has a
        counterpart.
    equivalent : callable, optional
        A function of the source with the same meaning as `function`.
    signatures : str or iterable of str, optional
        Restrict the import to these signatures (``["float64[:]", "(float64[:, :],
        float64[:])"]``) and compare `equivalent` with `function` on sample inputs now.
    check : bool, optional
        Check each rule against finite differences of `function` at the first inputs it is used
        at (the default), before using it.
    continuous : iterable of int or str, optional
        Arguments (positions or names) at whose every value a rule verified at one holds. Any
        other untraced float argument (a hyperparameter, a constant array) is verified per
        value (the last 256 kept): rulebridge/checking/constants.py.

    Returns
    -------
    callable
        `function` itself on plain values; on traced values it records one op (several outputs
        if `function` returns several).

    Raises
    ------
    ImportRuleError
        When no adapter has a counterpart, or the counterpart's outputs disagree with
        `function`'s (count, shapes, dtypes or values) or fail the check.
    """
    if isinstance(function, str) and source is None:  # @import_rule("jax", ...)
        function, source = None, function
    if function is None:
        return functools.partial(import_rule, source=source, equivalent=equivalent,
                                 signatures=signatures, check=check, continuous=continuous)
    if not callable(function):
        raise TypeError(f"import_rule needs a function, got {type(function).__name__}")
    function = getattr(function, "__rulebridge_imported__", function)  # adding a source
    wanted = _parse_signatures(signatures)
    smooth = declared(function, continuous)
    imports = [_Import(function, name, adapter, counterpart, wanted, check, smooth)
               for name, adapter, counterpart in _sources(function, source, equivalent)]
    for imported in imports:
        imported.probe()  # every import-time error before anything is registered
    for imported in imports:
        REGISTRY.add_import(function, imported.source, imported, trusted=not check)
    if source is None:
        refresh(function)
        return _differentiable(function, function)
    return _differentiable(function, pinned(function, tuple(i.source for i in imports)))


_RESULT_APART: set = set()  # imported functions seen returning a container (a dict, nested)


def rule_builder(function: Callable, source: str, equivalent: Callable,
                 continuous: Iterable[int | str] | None = None) -> Callable:
    """What `import_rule(function, source, equivalent=equivalent)` registers, unregistered, for
    a layer that wraps its rules (`rulebridge.scipy`'s vectors fixed up to signs).

    Parameters
    ----------
    function, source, equivalent, continuous
        As `import_rule`'s (`source`: one adapter's name).

    Returns
    -------
    callable
        `builder(signature) -> Rule` (`Registry.add_import`), its rules verified at first use.
    """
    ((name, adapter, counterpart),) = _sources(function, source, equivalent)
    return _Import(function, name, adapter, counterpart, None, True,
                   declared(function, continuous)).build


def _differentiable(function: Callable, recorded: Callable) -> Callable:
    """The wrapper of `function`, recording `recorded` (`function` pinned to the sources the
    import named: rulebridge/rules/pinned.py)."""
    @functools.wraps(function)
    def imported(*args, **kwargs):
        tape, apart = traced_call(args, kwargs)
        if tape is None:
            return function(*args, **kwargs)
        if apart or function in _RESULT_APART:  # containers: one op of the call's leaves
            return record_leaf_call(tape, recorded, args, kwargs)
        if kwargs and any(_contains_box(v) for v in kwargs.values()):
            args, kwargs = _positional(function, args, kwargs)
        try:
            return tape.record(recorded, args, kwargs)
        except _ContainerResult:
            _RESULT_APART.add(function)
            return record_leaf_call(tape, recorded, args, kwargs)

    imported.__rulebridge_imported__ = function
    # check_rule's view of a call (rulebridge/checking/check.py): containers taken apart
    imported.__rulebridge_call__ = functools.partial(checked_call, recorded)
    return imported


class _ContainerResult(ImportRuleError):
    """The function returned a container the tape cannot take as it is (a dict, a nested
    tuple): the call is recorded again with its result taken apart (rulebridge/import_tree.py)."""


# -- finding the source's counterpart ----------------------------------------------------------


def _sources(function, source, equivalent) -> list[tuple[str, Adapter, Callable]]:
    name = function_name(function)
    if source is None and equivalent is not None:
        installed = ", ".join(repr(str(n)) for n in REGISTRY.order()) or "none installed"
        raise ImportRuleError(f"import_rule({name}, equivalent={_name(equivalent)}) needs the "
                              "source the equivalent belongs to: source=<one of "
                              f"{installed}>")
    names = ((source,) if isinstance(source, str) else tuple(source) if source is not None
             else REGISTRY.order(function))
    found, refusals = [], []
    for source_name in names:
        try:
            adapter = REGISTRY.adapter(source_name)
            if type(adapter).import_rule is Adapter.import_rule:
                raise Declined("it does not implement Adapter.import_rule")
            found.append((source_name, adapter,
                          equivalent if equivalent is not None else adapter.counterpart(function)))
        except (Declined, AdapterError) as exc:
            if source is not None:
                raise ImportRuleError(f"cannot import a rule for {name} from {source_name}: "
                                      f"{exc}") from None
            refusals.append(f"  {source_name}: {exc}")
    if not found:
        raise ImportRuleError("\n".join([f"no installed adapter can import a rule for {name}:"]
                                        + (refusals or ["  no rulebridge adapter is installed"])))
    return found


def _parse_signatures(signatures) -> tuple[Signature, ...] | None:
    if signatures is None:
        return None
    if isinstance(signatures, str):
        signatures = [signatures]
    return tuple(parse_signature(s) for s in signatures)


# -- one import: building, comparing, checking -------------------------------------------------


@dataclasses.dataclass(eq=False)
class _Import:
    function: Callable
    source: str
    adapter: Adapter
    equivalent: Callable
    signatures: tuple[Signature, ...] | None
    check: bool
    continuous: tuple = (frozenset(), frozenset())  # (positions, names): checking/constants.py
    # (signature, static values, traced arguments, untraced float values) verified at, bounded
    verified: Verdicts = dataclasses.field(default_factory=Verdicts)

    def __call__(self, signature: Signature) -> Rule:
        return self.build(signature)

    def derive(self, call: LeafCall) -> tuple[Callable[[Signature], Rule], bool]:
        """`(builder, trusted)` of the same import for `call`: this function at one layout of
        containers, with the equivalent taken apart alike."""
        if self.signatures is not None:
            listed = ", ".join(format_signature(s) for s in self.signatures)

            def declined(signature: Signature) -> Rule:
                raise Declined(f"{function_name(self.function)} was imported from {self.source} "
                               f"for {listed} only, and a call with containers "
                               f"({call.__rulebridge_name__}) is another signature; import it "
                               "without signatures= to call it with containers")
            return declined, False
        child = _Import(call, self.source, self.adapter, call.over_leaves(self.equivalent),
                        None, self.check)
        return child, not self.check

    @property
    def what(self) -> str:
        return f"{function_name(self.function)} (imported from {self.source} as " \
               f"{_name(self.equivalent)})"

    def build(self, signature: Signature) -> Rule:
        """The registry's builder for this function and source."""
        if self.signatures is not None and signature not in self.signatures:
            listed = ", ".join(format_signature(s) for s in self.signatures)
            raise Declined(f"{function_name(self.function)} was imported from {self.source} for "
                           f"{listed} only; add {format_signature(signature)} to import_rule's "
                           "signatures")
        rule = self.adapter.import_rule(self.function, signature, self.equivalent)
        if not isinstance(rule, Rule):
            raise AdapterError(f"the rulebridge adapter {self.source!r} returned "
                               f"{type(rule).__name__} from import_rule for {self.what}, not a "
                               "rulebridge.Rule")
        notes = f"imported: pullback of {_name(self.equivalent)}"
        return wrap(rule, _Verified(self, rule, signature),
                    notes=f"{notes}; {rule.notes}" if rule.notes else notes)

    def probe(self) -> None:
        """Import-time checks at each listed signature: the adapter takes it, and on sample
        inputs the equivalent returns what the function returns."""
        for signature in self.signatures or ():
            try:
                self.adapter.import_rule(self.function, signature, self.equivalent)
            except Declined as exc:
                raise ImportRuleError(f"cannot import {self.what} at "
                                      f"{format_signature(signature)}: {exc}") from None
            args = sample_arguments(signature)
            if args is None:
                continue  # no sample for this signature: compared at first use instead
            try:
                with np.errstate(all="ignore"):
                    self.function(*args)
            except Exception:
                continue  # the samples are outside the function's domain: compared at first use
            try:
                self.compare(args, {})
            except _ContainerResult:
                continue  # compared at first use, with the result taken apart

    def verify(self, rule: Rule, args: tuple, kwargs: dict,
               argnums: tuple[int, ...] | None = None, per_value: bool = False) -> None:
        """At the first use of a signature, keyword arguments and traced arguments (`argnums`,
        None: every differentiable one): compare outputs, then check the rule against finite
        differences of the function itself in those arguments, the others held constant
        (`per_value`: at values of them its verdict is kept for, checking/constants.py)."""
        self.compare(args, kwargs)
        if not self.check:
            return
        full = argnums is None
        if full and isinstance(self.function, LeafCall):
            argnums = inexact_positions(args)  # a call's leaves: its float scalars too
        result = check_call(rule, args, kwargs,  # kwargs are the call's, never the check's
                            argnums=argnums)
        if result.settled and full and not per_value:
            # a verdict in some arguments says nothing of the key as a whole, nor one at inputs
            # where the check could not decide or the rule raised
            REGISTRY.set_status(self.function, self.source, result.signature, result.status)
        if result.status == "fail":
            where = "" if full else with_traced(" at these inputs", argnums)
            raise ImportRuleError(
                f"the rule imported for {self.what} disagrees with "
                f"{function_name(self.function)} itself{where}.",
                fix=self.another_source(self.unchecked), details=f"{result.describe()}{self.legend}")
        if result.status == "error":
            raise ImportRuleError(
                f"the rule imported for {self.what} broke in its check against "
                f"{function_name(self.function)} itself, before its first use.",
                fix=self.another_source(self.unchecked if self.dropin else ""),
                details=f"{result.describe()}{self.legend}")
        if result.status == "inconclusive":  # refused here; the next call is checked again
            raise UnverifiedRuleError(
                f"the rule imported for {self.what} could not be checked at these inputs, so it "
                "is not used for this call; nothing is decided: the next call's inputs are "
                "checked again.", [result],
                fix=self.another_source("rulebridge.grad(f)(x)  # at an x inside the function's "
                                        f"smooth domain; or {self.unchecked}"),
                details=f"{result.reason}{self.legend}")

    @property
    def dropin(self) -> bool:  # rulebridge.scipy's own import, whose user passes no check=
        return getattr(self.function, "__rulebridge_dropin__", False)

    @property
    def unchecked(self) -> str:
        """How to use the rule unverified, said to whoever made the import."""
        if self.dropin:
            return "with rulebridge.trust(): ...  # the rule unverified, at your own risk"
        return ("import_rule(f, source, equivalent=..., check=False)  # if the equivalent means "
                "the same: unverified")

    def another_source(self, otherwise: str) -> str:
        """The fix naming the other sources this function's rule was imported from, if any."""
        others = [s for s in REGISTRY.imported_sources(self.function) if s != self.source]
        if not others:
            return otherwise
        return (f"source={others[0]!r}  # {function_name(self.function)} also has a rule from "
                f"{', '.join(others)}: rulebridge.grad(f, source={others[0]!r})")

    @property
    def legend(self) -> str:
        return f" ({self.function.legend()})" if isinstance(self.function, LeafCall) else ""

    def compare(self, args: tuple, kwargs: dict) -> None:
        where = f"{format_signature(signature_of(args))}" + (
            f" with {', '.join(f'{k}={v!r}' for k, v in kwargs.items())}" if kwargs else "")
        with np.errstate(all="ignore"):
            expected = self.function(*args, **kwargs)
            if container_result(expected):
                raise _ContainerResult(f"{function_name(self.function)} returned "
                                       f"{describe(expected)}")
            labels = self.function.output_paths() if isinstance(self.function, LeafCall) else None
            try:
                got = self.adapter.evaluate(
                    self.equivalent, *spelled_for(self.equivalent, self.function, args, kwargs))
            except Exception as exc:
                raise ImportRuleError(f"{_name(self.equivalent)}, the {self.source} equivalent "
                                      f"of {function_name(self.function)}, raised at {where}: "
                                      f"{type(exc).__name__}: {exc}{self.legend}") from None
        # a function of float32 inputs may compute partly in float32 (scipy.stats does): its
        # values are then as precise as float32's, whatever their dtype
        lowest = max((np.finfo(a.dtype).eps for a in args
                      if isinstance(a, np.ndarray) and is_differentiable(a)), default=0.0)
        mismatch = outputs_mismatch(expected, got, eps=float(lowest), labels=labels)
        if mismatch:
            raise ImportRuleError(
                f"{_name(self.equivalent)} from {self.source} is not an equivalent of "
                f"{function_name(self.function)} at {where}: {mismatch}.",
                fix=self.another_source(
                    "import_rule(f, source, equivalent=g)  # g returns the same outputs as f "
                    "(count, shapes, dtypes and values)"), details=self.legend.strip())


class _Verified(Policy):
    """An imported rule's policy: before its first use at a signature and static keywords, its
    equivalent is compared with the function and the rule checked (`_Import.verify`); the rule's
    residuals and pullback are its own."""

    passes_through = True

    def __init__(self, imported: _Import, rule: Rule, signature: Signature) -> None:
        self.imported, self.rule, self.signature = imported, rule, signature

    def select(self, wrapped, args, kwargs, traced=None) -> Rule:
        argnums = traced_argnums(args, traced)
        continuous = self.imported.continuous
        static = kwargs if not continuous[1] or not kwargs else {
            k: v for k, v in kwargs.items() if k not in continuous[1]}
        plain = primals(args)  # (nested: checked at the plain values, levels.py)
        constants = constant_values(plain, kwargs, traced, continuous)
        key = (self.signature, static_values(args, static), argnums, constants)
        if key not in self.imported.verified:
            self.imported.verify(self.rule, plain, kwargs, argnums, per_value=bool(constants))
            self.imported.verified.add(key)
        return self.rule


def sample_arguments(signature: Signature, seed: int = 0) -> tuple | None:
    """Sample inputs for a signature, inside most functions' domains: entries in [0.5, 1.5],
    square matrices made diagonally dominant (invertible, with an SPD lower triangle). None when
    a spec has no meaningful sample (integer arrays, static arguments)."""
    rng = np.random.default_rng(seed)
    args = [_sample(SpecInfo.of(spec), rng) for spec in signature]
    return None if any(a is None for a in args) else tuple(args)


def _sample(info: SpecInfo, rng: np.random.Generator):
    if info.kind == "array" and info.dtype.kind in INEXACT_KINDS:
        shape = (3,) * info.ndim
        values = rng.uniform(0.5, 1.5, shape)
        if info.dtype.kind == "c":
            values = values + 1j * rng.uniform(-0.5, 0.5, shape)
        if info.ndim >= 2:
            values = values + 3 * np.eye(3)
        return np.asarray(values).astype(info.dtype)
    if info.kind == "sequence":
        items = [_sample(item, rng) for item in info.items]
        return None if any(i is None for i in items) else info.type(items)
    if info.kind == "other" and info.type in (float, complex):
        return info.type(0.75)
    return None


def _name(function: Callable) -> str:
    module = getattr(function, "__module__", None) or ""
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    return f"{module}.{name}" if module and name else repr(function)

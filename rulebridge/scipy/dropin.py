"""`DropIn`: one SciPy function under its public name, SciPy's own on plain values and one recorded
op with an imported rule on traced values; and `mirror`, which builds a module of them.

A `DropIn` is also the function the tape records and the matrix checks: its rule's forward calls
it on plain arrays, so the values are SciPy's to the bit, and the finite differences that check
the rule run SciPy's function. Rules are imported with `import_rule` from every installed adapter
whose `counterpart` finds a function of the same name (`jax.scipy.stats.norm.logpdf`), wrapped
where SciPy reads only one triangle of a matrix (conventions.py).

Nothing is imported from a source until a call needs a rule: importing a mirrored module makes
every SciPy function NumPy's protocols do not reach a drop-in without asking any adapter (asking
would import JAX, seconds), a call on plain values is SciPy's function, and the first call on a
traced value asks the adapters and imports the rules (`DropIn.sources`). A drop-in no source has
a counterpart for passes traced values to SciPy's function as it is, which is what the SciPy
name would do: NumPy's protocols, or the error naming the fix.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import threading
from typing import Any, Callable

import numpy as np

from ..engine.box import Traced
from ..errors import AdapterError, Declined, ImportRuleError, TracingError
from ..import_rule import import_rule, rule_builder
from ..rules.phases import PHASES
from ..rules.registry import REGISTRY
from ..rules.scipy_names import is_candidate, is_distribution, sources_with_counterpart
from ..tree import tree_flatten
from .conventions import CONVENTIONS, POSITIONAL_UP_TO, SPREAD, in_float64, with_convention
from .gauge import VECTORS, AlignedImport

_P = inspect.Parameter


class DropIn:
    """SciPy's `name` (`scipy.stats.norm.logpdf`): SciPy's own function on plain values, and on
    traced values one op whose rule comes from each installed source's function of that name."""

    __rulebridge_dropin__ = True  # its imports' errors say what a drop-in user can do

    def __init__(self, name: str, function: Callable, signature: inspect.Signature) -> None:
        self.__rulebridge_name__ = name
        self.scipy_function = function
        module, _, self.__name__ = name.rpartition(".")
        self.__qualname__ = self.__name__
        self.__module__ = "rulebridge." + module
        self.__doc__ = getattr(function, "__doc__", None)
        self.__signature__ = signature
        self._sources: tuple[str, ...] | None = None  # None: no adapter asked yet
        names = [p.name for p in signature.parameters.values()
                 if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)]
        self._names = (*names, *[None] * 16)  # positional parameters (None: *args)
        if name in VECTORS:  # outputs fixed up to phases, which the checks align (gauge.py)
            setattr(self, PHASES, VECTORS[name].phases)

    @property
    def sources(self) -> tuple[str, ...]:
        """The sources whose rules this drop-in uses (asking the adapters, and importing the
        rules, the first time)."""
        if self._sources is None:
            with _RESOLVING:
                if self._sources is None:
                    self._sources = self._register()
        return self._sources

    def __rulebridge_prepare__(self) -> tuple[str, ...]:
        """Import the rules now, as the first traced call would (`rulebridge.lookup` asks so
        that it answers with this drop-in's real sources)."""
        return self.sources

    def __repr__(self) -> str:
        sources = ("rules not imported yet" if self._sources is None else
                   f"rules from {', '.join(self._sources) or 'no installed source'}")
        return f"<rulebridge drop-in {self.__rulebridge_name__} ({sources})>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        box = _first_box(args)
        if box is None and kwargs:
            box = _first_box(kwargs.values())
        if box is None or not self.sources:
            return self.scipy_function(*args, **kwargs)
        args = tuple(_as_array(a, p) for a, p in zip(args, self._names))
        if kwargs:
            kwargs = {k: _as_array(v, k) for k, v in kwargs.items()}
        if self.__rulebridge_name__ in SPREAD:
            args, kwargs = self._spread_flat(args, kwargs)
        if kwargs or self.__rulebridge_name__ in POSITIONAL_UP_TO:
            args, kwargs = self._positional(args, kwargs)
        return box._tape.record(self, args, kwargs)

    def _spread_flat(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """`args` and `kwargs` with the parameter SPREAD names, when it nests containers, as
        the flat tuple of its leaves, and the callable given the same call with the container
        put back: `func(y, t, *leaves)` calls `func(y, t, *unflatten(leaves))`, so it computes
        what SciPy's function computes with the nested one, and the op records one flat tuple."""
        positional, rest = list(args), dict(kwargs)

        def slot(name: str) -> tuple[Any, Any] | None:  # where parameter `name` was given
            i = self._names.index(name)
            if i < len(positional):
                return positional, i
            return (rest, name) if name in rest else None

        spread, callee = (slot(name) for name in SPREAD[self.__rulebridge_name__])
        if spread is None or callee is None or type(spread[0][spread[1]]) is not tuple:
            return args, kwargs
        leaves, structure = tree_flatten(spread[0][spread[1]])
        n = len(leaves)
        if n == 0 or all(child.is_leaf for child in structure.children):
            return args, kwargs  # already flat
        function = callee[0][callee[1]]

        @functools.wraps(function)
        def flat(*values: Any) -> Any:
            return function(*values[:-n], *structure.unflatten(values[-n:]))

        spread[0][spread[1]], callee[0][callee[1]] = tuple(leaves), flat
        return tuple(positional), rest

    def _positional(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Traced keyword arguments moved to their positional slots (the tape records positional
        arguments only), with the defaults of the parameters skipped on the way."""
        traced = [k for k, v in kwargs.items() if _first_box((v,)) is not None]
        up_to = POSITIONAL_UP_TO.get(self.__rulebridge_name__)
        if up_to is not None and up_to not in traced and up_to not in self._given(len(args)):
            traced.append(up_to)
        if not traced:
            return args, kwargs
        positional, rest = list(args), dict(kwargs)
        for parameter in list(self.__signature__.parameters.values())[len(args):]:
            if not traced or parameter.kind not in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                break
            if parameter.name in rest:
                positional.append(rest.pop(parameter.name))
            elif parameter.default is not _P.empty:
                positional.append(parameter.default)
            else:
                break
            if parameter.name in traced:
                traced.remove(parameter.name)
        if traced:
            raise TracingError(
                f"{self.__rulebridge_name__}{self.__signature__} got a traced value as keyword "
                f"argument {traced[0]!r}, which has no positional slot; pass it positionally.")
        return tuple(positional), rest

    def _given(self, n: int) -> list[str]:
        """The names of the parameters `n` positional arguments fill."""
        return list(self.__signature__.parameters)[:n]

    def _register(self) -> tuple[str, ...]:
        """Import this function's rule from every installed source with a counterpart; the
        sources that gave one."""
        found = []
        for source in sources_with_counterpart(self.__rulebridge_name__):
            try:
                adapter = REGISTRY.adapter(source)
                counterpart = adapter.counterpart(self)
                convention = CONVENTIONS.get(self.__rulebridge_name__)
                equivalent = (counterpart if convention is None else
                              with_convention(convention, counterpart, adapter,
                                              self.__signature__))
                if self.__rulebridge_name__.startswith("scipy.stats."):
                    equivalent = in_float64(equivalent, adapter)
                vectors = VECTORS.get(self.__rulebridge_name__)
                if vectors is None:
                    import_rule(self, source, equivalent=equivalent)
                else:  # SciPy's vectors, each fixed up to a sign: gauge.py
                    REGISTRY.add_import(self, source, AlignedImport(
                        self, self.__signature__, vectors, adapter, equivalent,
                        rule_builder(self, source, equivalent)))
            except (Declined, AdapterError, ImportRuleError):
                continue  # this source cannot give one; the others may
            found.append(source)
            # import_rule forgets the results of earlier rules; the committed matrix's were
            # made by this very import, so its shipped results apply (where they are bound to
            # the installed adapter, as for NumPy's functions).
            REGISTRY.use_shipped_for_import(self.__rulebridge_name__, source)
        return tuple(found)


# One import of rules at a time: two threads' first traced calls of a drop-in import it once.
_RESOLVING = threading.RLock()


# Parameters a list or tuple is passed to as itself, not as an array_like: SciPy's static
# settings (`axis=(0, 1)`) and odeint's extra arguments.
_NOT_ARRAYS = frozenset({"axis", "axes", "args", "shape", "s", "dims", "mode", "method"})


def _as_array(value: Any, parameter: str | None) -> Any:
    """A list (or tuple) of numbers and traced values as the array SciPy's `np.asarray` would
    make of it, so that a source's function (which takes arrays only) sees what SciPy sees:
    `solve(a, [1., 2., 3.])`, `logsumexp([a, b])`. Traced items are stacked as a recorded op."""
    if type(value) not in (list, tuple) or not value or parameter in _NOT_ARRAYS:
        return value
    items = [_as_array(v, None) for v in value]
    if not all(type(v) is Traced or isinstance(v, (int, float, complex, np.number, np.ndarray))
               and not isinstance(v, bool) for v in items):
        return value  # not an array_like of numbers: SciPy's function says what it makes of it
    if type(value) is tuple and not any(type(v) is Traced or isinstance(v, (float, complex))
                                        for v in items):
        return value  # a tuple of ints is a setting more often than an array
    if _first_box(items) is None:
        return np.asarray(items)
    return np.stack([v if type(v) is Traced else np.asarray(v) for v in items])


def _first_box(values) -> Traced | None:
    for value in values:
        if type(value) is Traced:
            return value
        if type(value) in (list, tuple, dict):
            inner = _first_box(value.values() if type(value) is dict else value)
            if inner is not None:
                return inner
    return None


def signature_of_method(distribution: Any, method: str, function: Callable) -> inspect.Signature:
    """The signature SciPy documents for a distribution's method: `norm.logpdf(x, loc=0,
    scale=1)`, `t.logpdf(x, df, loc=0, scale=1)`, `poisson.logpmf(k, mu, loc=0)`; for the others
    (`multivariate_normal.logpdf`), the method's own."""
    from scipy.stats import rv_continuous, rv_discrete

    if not isinstance(distribution, (rv_continuous, rv_discrete)):
        try:
            return inspect.signature(function)
        except (TypeError, ValueError):
            return inspect.Signature([_P("args", _P.VAR_POSITIONAL), _P("kwds", _P.VAR_KEYWORD)])
    first = {"ppf": "q", "isf": "q", "pmf": "k", "logpmf": "k"}.get(method, "x")
    shapes = [s.strip() for s in (distribution.shapes or "").split(",") if s.strip()]
    parameters = [_P(first, _P.POSITIONAL_OR_KEYWORD)]
    parameters += [_P(s, _P.POSITIONAL_OR_KEYWORD) for s in shapes]
    parameters.append(_P("loc", _P.POSITIONAL_OR_KEYWORD, default=0))
    if isinstance(distribution, rv_continuous):
        parameters.append(_P("scale", _P.POSITIONAL_OR_KEYWORD, default=1))
    return inspect.Signature(parameters)


def drop_in(name: str, function: Callable, signature: inspect.Signature | None = None
            ) -> DropIn | None:
    """The drop-in for SciPy's `name`, asking no adapter; None when its signature is unknown
    (SciPy's function is then used as it is)."""
    if signature is None:
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            return None
    return DropIn(name, function, signature)


def mirror(module_name: str) -> tuple[dict[str, Any], dict[str, DropIn]]:
    """A mirrored module's namespace: SciPy's public names, every function NumPy's protocols
    do not reach (scipy_names.candidates, distributions aside) as a drop-in; and the drop-ins,
    by short name. No adapter is asked (see the module's docstring)."""
    names = public_names(module_name)
    found = {}
    for attr, value in names.items():
        if is_distribution(value) or not is_candidate(value):
            continue
        made = drop_in(f"{module_name}.{attr}", value)
        if made is not None:
            found[attr] = made
    names.update(found)
    return names, found


def public_names(module_name: str) -> dict[str, Any]:
    """Everything public in a SciPy module, as SciPy has it (what a drop-in module re-exports)."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
    return {n: getattr(module, n) for n in names if hasattr(module, n)}

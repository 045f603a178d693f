"""The key a rule is trusted at: the function, the specs of its positional arguments, and the
call's static **configuration**.

A rule verified for `np.sum(float64[:])` says nothing about `np.sum(x, where=m)`, nor one
verified for `norm(x)` about `norm(x, ord=np.inf)`. So a call's key also records which keyword
arguments it gives and, for each static argument, its value (`ord=inf`, `axis=None`,
`mode='reflect'`, einsum's subscripts) or, for an array or an operand-like number, its spec
(`where=<bool[:]>`, `initial=<float>`).

Spellings are normalised: `normalise` moves keyword arguments to their positions where they
continue the positional ones (`norm(x, ord=np.inf)` becomes `norm(x, np.inf)`, `var(x, axis=1)`
becomes `var(x, 1)`; NumPy's second parameter of `var` is `axis`, so `var(x, 1)` is not
`var(x, ddof=1)`), and orders the other keywords as the function declares them. A setting is
named in the key whichever way it was given. The engine hands rules the normalised call, so a key
always stands for one behaviour of the rule: the one its check saw. A number that is an operand
(clip's bounds, a ufunc's inputs, an index) counts by its type only.

`normalise` binds through `inspect.signature` once per function and caches that plan; the
engine calls it only for calls with keywords or static positional arguments, on the path that
also computes the full signature, so `ufunc(x)` never gets here. It then keeps the result per
*call shape* (`call_shape`: the flat signature, the static values, the keywords' names in the
order given and their descriptors) as a `Spelling`, so the next call of that shape is one tuple
lookup. Measured under valgrind (`python -m benchmarks.instructions`, its "keywords" chain of
alternating `sin(x)` and `cumsum(x, axis=0)`): 61.1k instructions per op before, 53.6k after, so
about 92k to 77k per keyword call (autograd's rules alone: 28.2k per op); the sin/tanh chain
stayed at 30.2k.
"""

from __future__ import annotations

import inspect
from types import MappingProxyType
from typing import Any, Callable

import numpy as np

from .signature import Signature, format_spec, signature_of, spec_of

# ((position, name or None, descriptor) for a setting given by position, then (name, descriptor)
# for each keyword, in the declared order); () for none
Configuration = tuple
NO_CONFIGURATION: Configuration = ()

# Parameters whose float value changes the meaning (`ord=inf` vs `ord=2.0`). Any other float or
# complex static argument is an operand (clip's bounds, `initial`, `q`): its type is in the key,
# its value is not, so a loop over values checks once.
_ndarray = np.ndarray
FLOAT_VALUED = frozenset({"ord"})
_ARRAY = "<>"  # a descriptor (_ARRAY, spec): the argument counts by its spec, not its value
_DTYPE = "dtype"
_SMALL = 32  # longest tuple or list of static values described by value
_P = inspect.Parameter
_NO_KEYWORDS = MappingProxyType({})  # a call whose keywords all moved to positions


class _Plan:
    """How a function's positional parameters bind: the name of each (None past them, for
    `*args`), whether it may also be given by keyword, every parameter's declared rank, and the
    defaults a keyword argument may equal (None, bools, ints, strings: `_DEFAULT_TYPES`)."""

    __slots__ = ("names", "by_keyword", "rank", "defaults")

    def __init__(self, function: Callable) -> None:
        params = _parameters(function)
        names: list = []
        by_keyword: list = []
        for param in params:
            if param.kind not in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD):
                break
            names.append(param.name)
            by_keyword.append(param.kind is _P.POSITIONAL_OR_KEYWORD)
        self.names = tuple(names)
        self.by_keyword = tuple(by_keyword)
        self.rank = {param.name: k for k, param in enumerate(params)}
        self.defaults = {param.name: param.default for param in params
                         if type(param.default) in _DEFAULT_TYPES
                         and param.kind is not _P.POSITIONAL_ONLY}


# A keyword argument equal to its parameter's default, and of the same type, is the call
# without it (`np.vstack(xs, dtype=None, casting='same_kind')` is `np.vstack(xs)`): one key.
# Only values whose equality is identity of meaning; not floats (-0.0 == 0.0), not a bool for
# an int default (True == 1), not NumPy's `_NoValue` sentinels (never equal to a value).
_DEFAULT_TYPES = frozenset({type(None), bool, int, str})


def _parameters(function: Callable) -> list:
    if isinstance(function, np.ufunc):
        return []  # positional inputs are operands; keywords are keyword-only
    try:
        return list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a text signature: nothing to move
        return []


_PLANS: dict = {}


def plan_for(function: Callable) -> _Plan:
    try:
        plan = _PLANS.get(function)
    except TypeError:  # an unhashable callable
        return _Plan(function)
    if plan is None:
        plan = _PLANS.setdefault(function, _Plan(function))
    return plan


def normalise(function: Callable, args: tuple, kwargs) -> tuple[tuple, Any, Configuration]:
    """`(args, kwargs, configuration)`: the call in its one spelling, and its configuration.

    Keyword arguments for the positional parameters that follow the given positional arguments
    move to their positions, as long as they continue them without a gap (`norm(x, ord=inf)`
    becomes `norm(x, inf)`; `var(x, ddof=1)` stays, since `axis`, `dtype` and `out` come
    between); the other keywords are ordered as the function declares them. `args` must be
    unboxed values (a traced value never arrives by keyword: the box moves it first)."""
    plan = plan_for(function)
    names, by_keyword = plan.names, plan.by_keyword
    if kwargs and plan.defaults:
        kwargs = _without_defaults(kwargs, plan.defaults)
    at = len(args)
    if kwargs and at < len(names) and by_keyword[at] and names[at] in kwargs:
        args, kwargs = list(args), dict(kwargs)
        while at < len(names) and by_keyword[at] and names[at] in kwargs:
            args.append(kwargs.pop(names[at]))
            at += 1
        args = tuple(args)
    config = []
    for i, a in enumerate(args):
        if type(a) is _ndarray:
            continue
        if i >= len(names):
            if type(a) is str:  # *args: einsum's subscripts
                config.append((i, None, (str, a)))
        elif by_keyword[i] and _is_setting(a, names[i]):
            config.append((i, names[i], describe(names[i], a)))
    if kwargs:
        rank = plan.rank
        items = sorted(kwargs.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0]))
        if list(kwargs) != [name for name, _ in items]:
            kwargs = dict(items)
        config += [(name, describe(name, value)) for name, value in items]
    return args, kwargs, tuple(config)


def _without_defaults(kwargs, defaults: dict):
    """`kwargs` without the arguments equal to their defaults (the same mapping if none is)."""
    for name, value in kwargs.items():
        default = defaults.get(name, _P.empty)
        if type(value) is type(default) and value == default:
            return {k: v for k, v in kwargs.items()
                    if not (type(v) is type(defaults.get(k, _P.empty)) and v == defaults[k])}
    return kwargs


class Spelling:
    """What `normalise` made of one call shape, and the rule found at its key: the keywords it
    moved to positions (in order) and the order of the others (None: as given). Applying it to
    another call of that shape gives what `normalise` would, without binding the call again."""

    __slots__ = ("rule", "moved", "order")

    def __init__(self, rule: Any, moved: tuple, order: tuple | None) -> None:
        self.rule, self.moved, self.order = rule, moved, order

    def apply(self, args: tuple, kwargs) -> tuple[tuple, Any]:
        moved, order = self.moved, self.order
        if moved:
            args = (args + (kwargs[moved[0]],) if len(moved) == 1
                    else args + tuple([kwargs[name] for name in moved]))
        if order is not None:
            kwargs = {name: kwargs[name] for name in order} if order else _NO_KEYWORDS
        return args, kwargs


def spelling(function: Callable, args: tuple, kwargs, normalised: tuple, normalised_kwargs,
             rule: Any) -> Spelling:
    """The `Spelling` of a call that `normalise` turned into `(normalised, normalised_kwargs)`."""
    moved = plan_for(function).names[len(args):len(normalised)]
    order = None if normalised_kwargs is kwargs else tuple(normalised_kwargs)
    return Spelling(rule, moved, order)


def call_shape(function: Callable, flat_key: tuple, args: tuple, kwargs) -> tuple:
    """A hashable stand-in for everything `normalise` and the key depend on: `flat_key` (the
    function and each positional argument's dtype and ndim, or type), the descriptor of each
    static positional argument and each keyword's name (in the order given) and descriptor."""
    shape = (flat_key,)
    for a in args:
        if type(a) is not _ndarray:  # rare: most static settings come by keyword
            names = plan_for(function).names
            shape += tuple([describe(names[i] if i < len(names) else None, a)
                            for i, a in enumerate(args) if type(a) is not _ndarray])
            break
    for name, value in kwargs.items():
        shape += (name, describe(name, value))
    return shape


def _is_setting(value: Any, name: str | None) -> bool:
    """Is this static positional value a configuration (moved to its keyword) rather than an
    operand (kept in place)?"""
    cls = type(value)
    if value is None or cls is bool or cls is int or cls is str:
        return True
    if isinstance(value, (np.integer, np.bool_)):
        return True
    if isinstance(value, (float, np.floating)):
        return name in FLOAT_VALUED
    if cls is tuple or cls is list:
        return len(value) <= _SMALL and all(_is_setting(item, None) for item in value)
    return _is_dtype_like(value, name)


def _is_dtype_like(value: Any, name: str | int | None) -> bool:
    if type(value) is np.dtype or isinstance(value, type) and issubclass(value, np.generic):
        return True
    return name == _DTYPE and value in (float, int, complex, bool)


def describe(name: str | int | None, value: Any) -> Any:
    """The hashable descriptor of one static argument: its value, or `(_ARRAY, spec)`."""
    cls = type(value)
    if value is None:
        return None
    if cls is int:  # the commonest two first: an axis, an index's bound
        return (int, value)
    if cls is slice:
        return (slice, (value.start, value.stop, value.step))
    if cls is bool or isinstance(value, np.bool_):
        return (bool, bool(value))
    if isinstance(value, np.integer):  # (a Python int returned above)
        return (int, int(value))
    if cls is str:
        if name == _DTYPE:
            try:
                return (_DTYPE, np.dtype(value).name)
            except TypeError:
                pass
        return (str, value)
    if _is_dtype_like(value, name):
        return (_DTYPE, np.dtype(value).name)
    if isinstance(value, (float, np.floating)):
        return (float, float(value)) if name in FLOAT_VALUED else (_ARRAY, cls)
    if (cls is tuple or cls is list) and len(value) <= _SMALL and not any(
            isinstance(item, (np.ndarray, float, complex, np.inexact)) for item in value):
        return (cls, tuple(describe(None, item) for item in value))
    if isinstance(value, (np.ndarray, complex, np.generic, list, tuple)):
        return (_ARRAY, spec_of(value))
    try:
        hash(value)
    except TypeError:
        return (_ARRAY, cls)
    return ("object", value)  # a callable, an enum: itself


def configuration(function: Callable, args: tuple, kwargs) -> Configuration:
    """The configuration of a call (see `normalise`)."""
    return normalise(function, args, kwargs)[2]


def format_descriptor(descriptor: Any) -> str:
    if descriptor is None:
        return "None"
    kind, payload = descriptor
    if kind == _ARRAY:
        return f"<{format_spec(payload)}>"
    if kind == _DTYPE:
        return payload
    if kind is tuple or kind is list:
        items = [format_descriptor(d) for d in payload]
        if kind is tuple:
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    if kind is slice:
        return repr(slice(*payload))
    if kind == "object":
        return getattr(payload, "__name__", None) or repr(payload)
    return repr(payload)


def format_key(signature: Signature, config: Configuration = NO_CONFIGURATION) -> str:
    """A key as text, read like a call: `(float64[:], ord=inf)`,
    `('ii,i->', float64[:, :], float64[:])`, `(float64[:, :], axis=0, where=<bool[:, :]>)`.
    A setting given by position is shown by its name, so both spellings read alike. With no
    configuration it is the signature's text."""
    positional = {item[0]: item for item in config if len(item) == 3}
    parts = []
    for i, spec in enumerate(signature):
        item = positional.get(i)
        if item is None:
            parts.append(format_spec(spec))
        elif item[1] is None:
            parts.append(format_descriptor(item[2]))
    parts += [_setting_text(item) for item in config if item[-2] is not None]
    return "(" + ", ".join(parts) + ")"


def _setting_text(item: tuple) -> str:
    return f"{item[-2]}={format_descriptor(item[-1])}"


def format_settings(config: Configuration) -> str:
    """The named settings of a configuration as text: `ord=inf, keepdims=True`."""
    return ", ".join(_setting_text(item) for item in config if item[-2] is not None)


def spelled_for(target: Callable, function: Callable, args: tuple, kwargs) -> tuple[tuple, Any]:
    """A call of `function` in rulebridge's one spelling, spelled for `target`, a source's
    function that stands for it.

    The call key moves keywords to positions as `function` declares them (`softmax(x, axis=0)`
    becomes `softmax(x, 0)`), and rules receive that spelling; a source's function may take
    the same parameter only by keyword (JAX's ``softmax(x, /, *, axis=None)``). Positional
    arguments past those `target` takes by position are passed by their names in `function`.

    Parameters
    ----------
    target : callable
        The source's function about to be called.
    function : callable
        The NumPy or SciPy function the arguments were spelled for.
    args : tuple
        Positional arguments.
    kwargs : mapping
        Keyword arguments.

    Returns
    -------
    tuple
        ``(args, kwargs)`` for `target`; the same objects when nothing needs to move.
    """
    keep = _positional_room(target, function, len(args))
    if keep == len(args):
        return args, kwargs
    names = plan_for(function).names
    return args[:keep], {**{names[i]: args[i] for i in range(keep, len(args))}, **kwargs}


_ROOM: dict = {}


def _positional_room(target: Callable, function: Callable, n: int) -> int:
    """How many of `n` positional arguments spelled for `function` `target` takes by position."""
    try:
        room = _ROOM.get((target, function, n))
    except TypeError:  # an unhashable callable: work it out each time
        room = None
    if room is None:
        params = _parameters(target)
        room = n
        if params and not any(p.kind is _P.VAR_POSITIONAL for p in params):
            plan = plan_for(function)
            fits = min(n, len(plan_for(target).names))
            # Only arguments `function` names can move; otherwise the call says what is wrong.
            if all(i < len(plan.names) and plan.by_keyword[i] for i in range(fits, n)):
                room = fits
        try:
            _ROOM[(target, function, n)] = room
        except TypeError:
            pass
    return room


def keyed(function: Callable, values: tuple, kwargs) -> tuple:
    """`(args, kwargs, signature, config, cache key)` of a call: `normalise`, and the key the
    registry's rule caches use."""
    args, kwargs, config = normalise(function, values, kwargs)
    signature = signature_of(args)
    return args, kwargs, signature, config, (
        (function, signature, config) if config else (function, signature))


def key_of(function: Callable, *args: Any, **kwargs: Any) -> str:
    """The key rulebridge trusts a rule at for a call, as text.

    Parameters
    ----------
    function : callable
        A NumPy or SciPy function.
    *args, **kwargs
        The call's arguments, plain arrays and static values.

    Returns
    -------
    str
        The specs of the positional arguments and the call's settings, read like a call:
        ``rulebridge.key_of(np.linalg.norm, x, np.inf)`` is ``'(float64[:], ord=inf)'``, as is
        ``key_of(np.linalg.norm, x, ord=np.inf)``.
    """
    args, kwargs, config = normalise(function, args, kwargs)
    return format_key(signature_of(args), config)


def static_values(args: tuple, kwargs) -> tuple:
    """The hashable key of a call's static values for a check's cache: each static positional
    argument's value (ints, bools, strings, None, tuples and lists of them; a container's int
    leaf is one, which a signature spells by type only) and each keyword's; arrays by dtype and
    shape."""
    positional = tuple((i, _hashable(a)) for i, a in enumerate(args) if _is_static(a))
    if not kwargs:
        return positional
    return positional, tuple(sorted((k, _hashable(v)) for k, v in kwargs.items()))


def _is_static(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, str, np.integer, np.bool_)):
        return True
    return (type(value) is tuple or type(value) is list) and all(_is_static(v) for v in value)


def _hashable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape)
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)

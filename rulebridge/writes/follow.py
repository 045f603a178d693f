"""Plain buffers and lists of traced values: allocations the tape follows while a trace runs.

NumPy gives no hook when a traced value is written into an array it knows nothing of
(`out = np.zeros(n); out[i] = f(x[i])`), but the allocation itself can be seen. While a trace
runs in this thread, a call `np.zeros(...)`, `np.empty`, `np.ones` or `np.full` made by the
differentiated function's own Python returns a box of the tape, recorded by the engine's own
allocation rule, so writes into it are recorded like writes into `np.zeros_like(x)`.
`np.array`/`np.asarray` of a traced value are differentiable as in autograd.numpy and jax.numpy
(the box, or a recorded copy, astype or reshape: rulebridge/writes/arrays.py); of a (nested)
list holding traced values, and `np.mean([a, b])`- or `np.append([[1., 2.]], [[a, b]])`-style
calls of the functions in `LIST_FUNCTIONS`, they record `np.stack` of the items.

Only a real ndarray may reach code that is not the differentiated function's own Python:
compiled code (numpy.random's Cython calling `np.empty` through the module, any C extension)
writes into what it gets as raw memory, and a box there is a segmentation fault. So nothing in
the numpy module is replaced. While any trace runs, the module's class is a subclass of its own
whose data descriptors (one per followed name) answer each lookup of those names: NumPy's own
function (the one in `vars(numpy)`, untouched) to every lookup but one that rulebridge/writes/
proof.py proves, from the bytecode the looking frame executes, to be `np.zeros(...)` called by
the user's code; and every frame between it and the call of the differentiated function must be
outside the standard library, the installed packages and rulebridge (a library's own buffers
stay plain ndarrays). The proven lookup gets a follower, a function no other code can see (it is
on the caller's stack only, as the callee of the call being made). Other threads, libraries,
compiled code, `pickle.dumps(np.sum)` and anyone reading `vars(numpy)` get NumPy's own objects;
what they can see is `type(numpy)`, a subclass of `types.ModuleType` during a trace, and the
cost of one Python call per lookup of a followed name. A lookup the proof cannot vouch for gets
NumPy's function: the buffer is a plain ndarray, and a traced value written into it raises.

Not followed: names bound before the trace (`from numpy import zeros`), `getattr(np, "zeros")`,
`np.zeros(*shape)` when arguments need a jump to evaluate (`np.zeros(n if a else m)`), buffers
other libraries make, integer and boolean buffers (they carry no gradient).

A followed buffer that never received a traced value and is still referenced when the function
returns (kept in a dict, a global, returned) is set free: its box computes as a plain array
from then on (rulebridge/engine/detached.py), on a copy of its memory when the tape wrote, so
using it after the call works instead of raising that a traced value escaped.

Switch it off with `follow_plain_buffers(False)` or RULEBRIDGE_FOLLOW_PLAIN_BUFFERS=0.
"""

from __future__ import annotations

import os
import sys
import threading
import weakref
from typing import Callable

import numpy as np

from ..engine.box import Traced
from ..engine.constants import constant_value
from ..engine.detached import set_free
from ..errors import TracingError
from .arrays import array_of
from .proof import proven
from .sites import is_user_code

ALLOCATORS = ("zeros", "empty", "ones", "full")
ARRAY_FUNCTIONS = ("array", "asarray")
# NumPy functions often called on a list of traced values (np.mean([a, b])): their dispatch looks
# at the list, not at its items, so the list reaches NumPy's conversion, which the boxes refuse.
LIST_FUNCTIONS = ("mean", "sum", "prod", "max", "min", "amax", "amin", "std", "var", "average",
                  "dot", "cumsum", "diff", "median", "append")
_NAMES = ALLOCATORS + ARRAY_FUNCTIONS + LIST_FUNCTIONS
_ORIGINAL: dict[str, Callable] = {name: getattr(np, name) for name in _NAMES}
_INEXACT = frozenset("fc")
_NUMPY = vars(np)
_MISSING = object()

_FRAMES_ARE_NUMPYS = True  # this module's frames stand for NumPy's functions (scipy_names.py)
_here = threading.local()  # .tracing: (tape, frame that called the differentiated function)
_lock = threading.RLock()
_active = 0  # traces running in any thread; the module's class follows while it is > 0
_plain_class: type | None = None  # numpy's class before the first trace swapped it
_enabled = os.environ.get("RULEBRIDGE_FOLLOW_PLAIN_BUFFERS", "1").strip().lower() \
    not in ("0", "false", "no", "off")


def follow_plain_buffers(enabled: bool | None = None) -> bool:
    """Whether allocations in differentiated code are followed (see the module's docstring).

    Parameters
    ----------
    enabled : bool, optional
        True to follow ``np.zeros(n)``, ``np.array([a, b])`` and friends in the code being
        differentiated, False to leave them plain ndarrays (a traced value written into one then
        raises). None only reads the setting. The default is on, or off when the environment
        variable RULEBRIDGE_FOLLOW_PLAIN_BUFFERS is 0, false, no or off. Traces already
        running keep the setting they started with.

    Returns
    -------
    bool
        The setting before this call.
    """
    global _enabled
    previous = _enabled
    if enabled is not None:
        _enabled = bool(enabled)
    return previous


class following:
    """`with following(tape): f(*boxes)`: allocations of f's code are followed onto `tape`."""

    __slots__ = ("tape", "previous", "on")

    def __init__(self, tape) -> None:
        self.tape = tape

    def __enter__(self):
        global _active
        self.on = _enabled
        if not self.on:
            return self
        self.previous = getattr(_here, "tracing", None)  # a trace inside a trace's code
        _here.tracing = (self.tape, sys._getframe(1))
        with _lock:
            _active += 1
            if _active == 1:
                _swap_class()
        return self

    def __exit__(self, *exc) -> None:
        global _active
        if not self.on:
            return
        _here.tracing = self.previous
        with _lock:
            _active -= 1
            if _active == 0:
                _restore_class()
        buffers = self.tape.__dict__.pop("followed", None)
        if buffers:
            set_free(self.tape, buffers)


def installed() -> bool:
    """Does the numpy module follow lookups now (only while some thread traces)?"""
    return type(np) in _CLASSES.values()


# -- the numpy module's class while a trace runs --------------------------------------------------


class _Lookup:
    """A data descriptor of numpy's class during a trace: `np.<name>` as the module's dict has
    it, or the follower for a lookup proven to be the differentiated code's own call."""

    __slots__ = ("name", "original", "follower")

    def __init__(self, name: str, follower: Callable) -> None:
        self.name, self.original, self.follower = name, _ORIGINAL[name], follower

    def __get__(self, module, owner=None):
        if module is None:
            return self
        value = _NUMPY.get(self.name, _MISSING)
        if value is self.original and module is np:
            tracing = getattr(_here, "tracing", None)
            if tracing is not None and _users_call(sys._getframe(1), tracing, self.name):
                return self.follower
        if value is _MISSING:
            raise AttributeError(f"module 'numpy' has no attribute {self.name!r}")
        return value

    def __set__(self, module, value) -> None:
        module.__dict__[self.name] = value

    def __delete__(self, module) -> None:
        del module.__dict__[self.name]


def _users_call(frame, tracing, name: str) -> bool:
    tape, entry = tracing
    if tape.finished or not is_user_code(frame.f_code) or not proven(frame, name, np):
        return False  # (a library's lookup is refused by the cheaper test first)
    while frame is not entry:
        if frame is None or not is_user_code(frame.f_code):
            return False
        frame = frame.f_back
    return True


_CLASSES: dict[type, type] = {}  # numpy's class -> the subclass that follows


def _swap_class() -> None:
    global _plain_class
    plain = type(np)
    if plain in _CLASSES.values():
        return
    following_class = _CLASSES.get(plain)
    if following_class is None:
        following_class = _CLASSES[plain] = type(plain.__name__, (plain,), {
            "__slots__": (), "__module__": plain.__module__, **_LOOKUPS})
    try:
        np.__class__ = following_class
    except TypeError:  # another library made numpy's class one that cannot be swapped
        return
    _plain_class = plain


def _restore_class() -> None:
    if _plain_class is not None and type(np) is _CLASSES.get(_plain_class):
        np.__class__ = _plain_class


# -- the wrappers ---------------------------------------------------------------------------------


def _allocator(name: str):
    original = _ORIGINAL[name]
    fill = name == "full"

    def wrapper(*args, **kwargs):
        tape = _tape_here()
        if tape is None:
            return original(*args, **kwargs)
        like = kwargs.get("like")
        if like is not None:
            # NumPy would hand __array_function__ the module attribute, this wrapper, which the
            # engine has no rule for: dispatch to the box with NumPy's own function.
            if type(like) is not Traced:
                return original(*args, **kwargs)
            rest = {k: v for k, v in kwargs.items() if k != "like"}
            return like.__array_function__(original, (Traced,), args, rest)
        if fill:
            return _full(tape, original, args, kwargs)
        dtype = kwargs["dtype"] if "dtype" in kwargs else args[1] if len(args) > 1 else None
        if not _inexact(dtype, None):
            return original(*args, **kwargs)
        return _followed(tape, tape.record(original, args, kwargs, guarded=False))

    return _named(wrapper, original)


def _full(tape, original, args, kwargs):
    fill_value = kwargs["fill_value"] if "fill_value" in kwargs else args[1] if len(args) > 1 \
        else None
    dtype = kwargs["dtype"] if "dtype" in kwargs else args[2] if len(args) > 2 else None
    if not _inexact(dtype, fill_value):
        return original(*args, **kwargs)
    shape = kwargs["shape"] if "shape" in kwargs else args[0]
    order = kwargs.get("order", args[3] if len(args) > 3 else "C")
    if not _holds_box(fill_value):  # the shape the op's one argument, as for np.zeros
        return _followed(tape, tape.record(original, (shape,), {
            "fill_value": fill_value, "dtype": dtype, "order": order}, guarded=False))
    # A traced fill value: an empty buffer, then the recorded write of the value.
    if dtype is None:
        dtype = np.result_type(_primal(fill_value))
    buffer = tape.record(_ORIGINAL["empty"], (shape,), {"dtype": dtype, "order": order},
                         guarded=False)
    buffer[...] = fill_value
    return buffer


def _inexact(dtype, fill_value) -> bool:
    """Would the buffer be float or complex (the only ones a gradient can flow into)?"""
    try:
        if dtype is None:
            return fill_value is None or np.result_type(_primal(fill_value)).kind in _INEXACT
        return np.dtype(dtype).kind in _INEXACT
    except TypeError:
        return False  # NumPy's own call will say what is wrong


def _primal(value):
    return value._value if type(value) is Traced else value


def _array_function(name: str):
    """np.array / np.asarray of a traced value or of a list holding traced values: the box, a
    recorded copy or `np.stack` of the items, as NumPy's call decides (rulebridge/writes/
    arrays.py)."""
    original = _ORIGINAL[name]

    def wrapper(obj, *args, **kwargs):
        if type(obj) is Traced:
            if _tape_here() is None or constant_value(obj) is not None:
                return original(obj, *args, **kwargs)  # no traced value: NumPy's conversion
            return array_of(original, obj, args, kwargs, _stack)
        if type(obj) is not list and type(obj) is not tuple:
            return original(obj, *args, **kwargs)
        try:
            return original(obj, *args, **kwargs)  # no box, or boxes that hold no traced value
        except TracingError:
            if _tape_here() is None or not _holds_box(obj):
                raise
        return array_of(original, obj, args, kwargs, _stack)

    return _named(wrapper, original)


def _list_function(name: str):
    original = _ORIGINAL[name]

    def wrapper(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except TracingError:
            lists = [i for i, a in enumerate(args) if type(a) in (list, tuple) and _holds_box(a)]
            if not lists or _tape_here() is None:
                raise
        args = tuple(_stack(a) if i in lists else a for i, a in enumerate(args))
        return original(*args, **kwargs)

    return _named(wrapper, original)


def _stack(obj):
    """A (nested) list as one array: `np.stack` of its items where they hold boxes, so the
    tape records how the array was built; a part without boxes is left to NumPy."""
    if type(obj) is not list and type(obj) is not tuple:
        return obj
    items = [_stack(item) for item in obj]
    if not any(type(item) is Traced for item in items):
        return _ORIGINAL["asarray"](items)
    return np.stack(items)


def _holds_box(value) -> bool:
    if type(value) is Traced:
        return True
    if type(value) is list or type(value) is tuple:
        return any(_holds_box(v) for v in value)
    return False


def _tape_here():
    """The running trace's tape: a follower is only ever called by the call its lookup proved
    to be the user's (see _Lookup), in this thread."""
    tracing = getattr(_here, "tracing", None)
    if tracing is None or tracing[0].finished:
        return None
    return tracing[0]


def _followed(tape, box):
    """Note a buffer the tape follows (see `set_free`), by weak reference: one the function
    drops is freed as NumPy would free it."""
    if type(box) is Traced:
        tape.__dict__.setdefault("followed", []).append(weakref.ref(box))
    return box


def _named(wrapper, original):
    wrapper.__name__ = original.__name__
    wrapper.__qualname__ = getattr(original, "__qualname__", original.__name__)
    wrapper.__doc__ = original.__doc__
    wrapper.__wrapped__ = wrapper.__rulebridge_original__ = original
    return wrapper


_LOOKUPS: dict[str, _Lookup] = {
    **{name: _Lookup(name, _allocator(name)) for name in ALLOCATORS},
    **{name: _Lookup(name, _array_function(name)) for name in ARRAY_FUNCTIONS},
    **{name: _Lookup(name, _list_function(name)) for name in LIST_FUNCTIONS},
}

"""Plain buffers and lists of traced values: allocations the tape follows while a trace runs.

NumPy gives no hook when a traced value is written into an array it knows nothing of
(`out = np.zeros(n); out[i] = f(x[i])`), but the allocation itself can be seen. While a trace
runs in this thread, the allocators reached as attributes of the `numpy` module (`np.zeros`,
`np.empty`, `np.ones`, `np.full`) return a box of the tape, recorded by the engine's own
allocation rule, so writes into it are recorded like writes into `np.zeros_like(x)`. A box holding
no traced value converts to a plain array (`Traced.__array__`), so a followed buffer that never
receives one still goes to any library. `np.array`/`np.asarray` of a (nested) list holding
traced values, and `np.mean([a, b])`-style calls of the functions in `LIST_FUNCTIONS`, record
`np.stack` of the items so the gradient flows.

What is followed: only a call made by the differentiated function's own code. Every frame
between the allocation and the call of the differentiated function must be outside the
standard library, the installed packages and rulebridge, so a library's (or the engine's own)
buffers stay plain ndarrays. The wrappers are installed when the first trace of the process
starts and the original functions put back when the last one ends: code that does not trace
pays nothing, and other threads calling NumPy during a trace get NumPy's own results (through
one wrapper call). Not followed: names bound before the trace (`from numpy import zeros`),
buffers other libraries make, integer and boolean buffers (they carry no gradient). A traced
value written into a buffer that is not followed raises, as before.

Switch it off with `follow_plain_buffers(False)` or RULEBRIDGE_FOLLOW_PLAIN_BUFFERS=0.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
import threading
from typing import Callable

import numpy as np

from ..engine.box import Traced
from ..errors import TracingError

ALLOCATORS = ("zeros", "empty", "ones", "full")
ARRAY_FUNCTIONS = ("array", "asarray")
# NumPy functions often called on a list of traced values (np.mean([a, b])): their dispatch looks
# at the list, not at its items, so the list reaches NumPy's conversion, which the boxes refuse.
LIST_FUNCTIONS = ("mean", "sum", "prod", "max", "min", "amax", "amin", "std", "var", "average",
                  "dot", "cumsum", "diff", "median")
_NAMES = ALLOCATORS + ARRAY_FUNCTIONS + LIST_FUNCTIONS
_ORIGINAL: dict[str, Callable] = {name: getattr(np, name) for name in _NAMES}
_INEXACT = frozenset("fc")
_NUMPY = vars(np)

_FRAMES_ARE_NUMPYS = True  # this module's frames stand for NumPy's functions (scipy_names.py)
_here = threading.local()  # .tracing: (tape, frame that called the differentiated function)
_lock = threading.RLock()  # reentrant: numpy_as_is may run inside a rule's lookup
_active = 0  # traces running in any thread; the wrappers are installed while it is > 0
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
                _NUMPY.update(_WRAPPERS)  # one call: a trace of a small program is ~50 us
        return self

    def __exit__(self, *exc) -> None:
        global _active
        if not self.on:
            return
        _here.tracing = self.previous
        with _lock:
            _active -= 1
            if _active == 0:
                for name, wrapper in _WRAPPERS.items():
                    if _NUMPY.get(name) is wrapper:  # someone else's patch stays theirs
                        _NUMPY[name] = _ORIGINAL[name]


class numpy_as_is:
    """`with numpy_as_is():` NumPy's own functions back in the numpy module while a rule is built.

    An adapter may compare by identity (`function is np.sum`) or read `np.sum` into a table
    when it builds a rule at a trace's first call of a function; with the wrappers installed it
    would see a wrapper and build another rule than the one it was verified with. The lock is
    held throughout, so no trace starts or ends meanwhile. With traces running in other threads
    too, the wrappers stay (their allocations must still be followed): such an adapter then
    declines, as rulebridge.NoRuleError says, which is a refusal, never another rule."""

    __slots__ = ("swapped",)

    def __enter__(self):
        _lock.acquire()
        # Only this thread's own trace may be the one running: another thread's allocations
        # must stay followed while a rule is built here (a tape replayed outside its trace).
        alone = _active == 1 and getattr(_here, "tracing", None) is not None
        self.swapped = [name for name, wrapper in _WRAPPERS.items()
                        if alone and _NUMPY.get(name) is wrapper]
        for name in self.swapped:
            _NUMPY[name] = _ORIGINAL[name]
        return self

    def __exit__(self, *exc) -> None:
        try:
            for name in self.swapped:
                if _NUMPY.get(name) is _ORIGINAL[name]:
                    _NUMPY[name] = _WRAPPERS[name]
        finally:
            _lock.release()


def installed() -> bool:
    """Are the wrappers in the numpy module now (only while some thread traces)?"""
    return any(getattr(np, name) is wrapper for name, wrapper in _WRAPPERS.items())


# -- whose call is it -----------------------------------------------------------------------------


def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # a virtualenv's old site module
        pass
    roots.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # rulebridge itself
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


_ROOTS = _library_roots()
# rulebridge's own modules that call the user's function on its behalf (jacobian's and
# elementwise_grad's wrappers, check_grads' `at`): the user's code beyond them is still followed.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
_CALLS_USER_CODE = frozenset(os.path.join(_PACKAGE, *path) for path in
                             (("api.py",), ("boundary.py",), ("checking", "gradcheck.py")))
_USER_FILE: dict[str, bool] = {}


def _is_user_file(filename: str) -> bool:
    user = _USER_FILE.get(filename)
    if user is None:
        if filename.startswith("<frozen"):
            user = False
        else:
            path = os.path.realpath(filename) if not filename.startswith("<") else filename
            user = path in _CALLS_USER_CODE or not path.startswith(_ROOTS)
        _USER_FILE[filename] = user
    return user


def _tape_here():
    """The tape to follow this call onto: the thread traces, and every frame between the caller
    of the wrapper and the differentiated function's caller is the user's code. Else None."""
    tracing = getattr(_here, "tracing", None)
    if tracing is None:
        return None
    tape, entry = tracing
    frame = sys._getframe(3)  # the caller of _Follows.__call__, which called the wrapper
    while frame is not entry:
        if frame is None or not _is_user_file(frame.f_code.co_filename):
            return None
        frame = frame.f_back
    return None if tape.finished else tape


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
        return tape.record(original, args, kwargs, guarded=False)

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
        return tape.record(original, (shape,), {"fill_value": fill_value, "dtype": dtype,
                                                "order": order}, guarded=False)
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
    """np.array / np.asarray: of a list holding traced values, `np.stack` of its items."""
    original = _ORIGINAL[name]

    def wrapper(obj, *args, **kwargs):
        if type(obj) is not list and type(obj) is not tuple:
            return original(obj, *args, **kwargs)
        try:
            return original(obj, *args, **kwargs)  # no box, or boxes that hold no traced value
        except TracingError:
            tape = _tape_here()
            if tape is None or args or set(kwargs) - {"dtype"} or not _holds_box(obj):
                raise
        stacked = _stack(obj)
        dtype = kwargs.get("dtype")
        if dtype is not None and np.dtype(dtype) != stacked.dtype:
            stacked = np.astype(stacked, dtype)
        return stacked

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


class _Follows:
    """A function of the numpy module while a trace runs: calls `wrapper`, and is equal to (and
    hashes as) NumPy's own function, so a table keyed by `np.sum` that a module imported during
    a trace built with this in its place still finds NumPy's function (and the reverse)."""

    # A __dict__ rather than __slots__: a class's docstring and module occupy those names.

    def __init__(self, wrapper, original) -> None:
        self._call = wrapper
        self.__wrapped__ = self.__rulebridge_original__ = original
        self.__name__ = original.__name__
        self.__qualname__ = getattr(original, "__qualname__", original.__name__)
        self.__doc__ = original.__doc__
        self.__module__ = "numpy"

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __eq__(self, other):
        return other is self or other is self.__wrapped__

    def __hash__(self) -> int:
        return hash(self.__wrapped__)

    def __getattr__(self, name):
        return getattr(self.__wrapped__, name)

    def __repr__(self) -> str:
        return repr(self.__wrapped__)


def _named(wrapper, original):
    return _Follows(wrapper, original)


_WRAPPERS: dict[str, Callable] = {
    **{name: _allocator(name) for name in ALLOCATORS},
    **{name: _array_function(name) for name in ARRAY_FUNCTIONS},
    **{name: _list_function(name) for name in LIST_FUNCTIONS},
}

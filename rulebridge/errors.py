"""Every error rulebridge raises. Each says what happened, to which function, and what to do.

`str(error)`, what a traceback shows, has three parts: a first line that says where in the
user's code it happened (the file and line of the innermost frame outside rulebridge, its
adapters, the installed libraries and the standard library) and what happened; then the most
likely fix, as code to paste (`fix=`); then the details (`details=`). Every error gets the
location from the base class, wherever it is raised. `error.message` and `f"{error}"` give the
text without the location, for one message quoting another (a NoRuleError listing each
adapter's reason, a matrix cell's reason), so that no location leaks into a second message.
"""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
import warnings


def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib",
                                                     "scripts") if k in paths}
    return tuple(sorted(f + os.sep for f in folders))


_LIBRARIES = _library_folders() + (os.path.dirname(os.path.realpath(__file__)) + os.sep,)
_USER_FILE: dict[str, bool] = {}  # co_filename -> whether it is the user's


def _is_users(frame) -> bool:
    filename = frame.f_code.co_filename
    known = _USER_FILE.get(filename)
    if known is None:
        name = frame.f_globals.get("__name__") or ""
        known = not (name == "rulebridge" or name.startswith(("rulebridge.", "rulebridge_"))
                     or filename.startswith("<frozen ")
                     or os.path.realpath(filename).startswith(_LIBRARIES))
        _USER_FILE[filename] = known
    return known


def user_frame(depth: int = 1):
    """The innermost frame of the user's code calling this one (None when there is none: a
    `rulebridge` command, a worker process)."""
    frame = sys._getframe(depth)
    while frame is not None and not _is_users(frame):
        frame = frame.f_back
    return frame


def user_line() -> str:
    """The source text of the user's line that made the call ("" when unknown)."""
    frame = user_frame(2)
    if frame is None:
        return ""
    return linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()


def user_location(depth: int = 1) -> str:
    """`path:line` of the innermost frame of the user's code calling this one ("" when none).
    The path is relative to the working folder when it lies inside it."""
    frame = user_frame(depth + 1)
    if frame is None:
        return ""
    path = frame.f_code.co_filename
    if os.path.isabs(path):
        relative = os.path.relpath(path)
        path = path if relative.startswith(os.pardir) else relative
    return f"{path}:{frame.f_lineno}"


def compose(what: str, fix: str = "", details: str = "") -> str:
    """The message without its location: what happened, then the fix, then the details."""
    parts = [what]
    if fix:
        parts.append("  Fix: " + fix.replace("\n", "\n       "))
    if details:
        parts.append("  " + details.replace("\n", "\n  ") if not details.startswith(" ")
                     else details)
    return "\n".join(parts)


class RulebridgeError(Exception):
    """Base class of rulebridge's own errors: `RulebridgeError(what, fix=..., details=...)`.

    `.where` is the user's `file:line` that made the call ("" when none), `.message` the text
    without it; `str()` starts with the location."""

    _locate = True

    def __init__(self, message: str = "", *args, fix: str = "", details: str = "") -> None:
        if fix or details:
            message = compose(message, fix, details)
        super().__init__(message, *args)
        self.where = user_location(2) if self._locate else ""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        where = getattr(self, "where", "")
        return f"{where}: {self.message}" if where else self.message

    def __format__(self, spec: str) -> str:
        return format(self.message, spec)  # quoted inside another message: no location


class NoRuleError(RulebridgeError, TypeError):
    """No adapter offers a rule for this function at this concrete signature."""


class UnverifiedRuleError(NoRuleError):
    """No source's rule passed its check at a key no status verifies: each source's rule was
    checked at the call's inputs before use and failed or raised. `.results` holds each
    source's CheckResult."""

    def __init__(self, message: str, results: list = (), **parts: str) -> None:
        super().__init__(message, **parts)
        self.results = list(results)


class Declined(RulebridgeError):
    """Raised by an adapter's `build_rule` for a function or signature it will not cover; the
    registry quotes it in a NoRuleError, which carries the location."""

    _locate = False


class TracingError(RulebridgeError, TypeError):
    """The differentiated code did something that would silently cut the gradient."""


class RuleContractError(RulebridgeError):
    """A rule broke the contract (cotangent count, shape or dtype, exception in its pullback)."""


class AdapterError(RulebridgeError):
    """An adapter could not be loaded or misbehaved as a whole."""


class NestedDifferentiationError(RulebridgeError):
    """A traced value escaped its differentiation, or a nested one (grad of grad) met a
    pullback that is not NumPy code and so cannot be differentiated again."""


class NoDerivativeError(RulebridgeError, ValueError):
    """The differentiated program has no derivative at these inputs: its value depends on a
    choice NumPy or SciPy makes as it likes (a complex eigenvector's phase)."""


class ReplayError(RulebridgeError, ValueError):
    """`tape.replay` was given inputs on which the program would decide differently (a branch, a
    length, a shape) than it did when it was traced."""


class MutationError(RulebridgeError):
    """An in-place write the tape cannot represent exactly."""


class ImportRuleError(RulebridgeError, ValueError):
    """`import_rule` could not import a rule, or the imported rule disagrees with its function."""


class UsageError(RulebridgeError, TypeError):
    """rulebridge's API was called in a way it does not take (grad of a non-scalar, argnums out
    of range, has_aux without a pair). It is also a TypeError."""


class JitError(RulebridgeError):
    """`rulebridge.jit` cannot replay a function: it draws random numbers, changes state
    outside itself, writes into an array it did not make, or its replay differs from its eager
    call. Calling the function unjitted gives its result."""


class ArgumentError(RulebridgeError, ValueError):
    """A value given to rulebridge does not fit where it goes (a cotangent of the wrong shape,
    a changed constant in a replayed tape). It is also a ValueError."""


class AdapterWarning(UserWarning):
    """An adapter misbehaved and was skipped while other adapters were asked for a rule."""


class UncheckedRuleWarning(UserWarning):
    """A rule that finite differences could not decide at the user's inputs (values that are not
    finite, steps that disagree) is used unverified for that call; nothing is recorded about the
    key, and the next call's inputs are checked again (rulebridge/checking/firstuse.py)."""


def warn_at_user(message: str, category: type[Warning]) -> None:
    """`warnings.warn(message, category)` attributed to the user's line that made the call (the
    frame `user_frame` finds), as the errors' `file:line` is, whatever the depth of the call."""
    frame, level = sys._getframe(1), 2  # the caller's frame is stacklevel 2
    while frame is not None and not _is_users(frame):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)


class GradientCheckError(RulebridgeError, AssertionError):
    """`check_grads` found a gradient that disagrees with finite differences of the function,
    or finite differences could not decide. `.max_rel_error` is the worst relative error seen
    (None when undecided), `.tolerance` the bound it was held to."""

    def __init__(self, message: str, max_rel_error: float | None, tolerance: float,
                 **parts: str) -> None:
        super().__init__(message, **parts)
        self.max_rel_error, self.tolerance = max_rel_error, tolerance

"""Why a box refused to become a plain number or array, told by cause: NumPy converting it to
write it into an element of a plain ndarray (`buf[i] = x`), or the user's code (or a library)
converting it (`float(x)`, `np.asarray(x)`). The two need different fixes, and the frame that
asked tells them apart: a write is that frame's store-subscript instruction."""

from __future__ import annotations

import dis
import sys
import types

from ..errors import TracingError
from ..rules.scipy_names import fix_for, scipy_caller

STORES = frozenset(dis.opmap[name] for name in ("STORE_SUBSCR", "STORE_SLICE")
                    if name in dis.opmap)
_FRAMES_HERE = ("rulebridge.engine.", "rulebridge.writes.")


def asking_frame() -> types.FrameType | None:
    """The first frame outside the box and the writes, from the caller's caller on: the code
    that asked (for a value, or for an in-place operator: rulebridge/writes/nested.py)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(_FRAMES_HERE):
        frame = frame.f_back
    return frame


def _writes_an_element(frame: types.FrameType | None) -> bool:
    if frame is None or frame.f_lasti < 0:
        return False
    return frame.f_code.co_code[frame.f_lasti] in STORES


def refuse(what: str, value: str, fix: str, buffer_fix: str) -> TracingError:
    """The error for `what` (`"float()"`, `".item()"`) of a traced value described by `value`:
    the plain-buffer write's when NumPy asked while storing it into an element."""
    if _writes_an_element(asking_frame()):
        return written_into_buffer(value, buffer_fix)
    return TracingError(f"{what} of a traced value would cut the gradient ({value}).", fix=fix)


def written_into_buffer(value: str, buffer_fix: str) -> TracingError:
    return TracingError(
        f"a traced value ({value}) was written into a plain ndarray (buf[i] = x): NumPy gives "
        "no hook that says which array it goes into, so the write cannot be recorded and would "
        "cut the gradient.",
        fix="buf = np.zeros_like(x)  # or np.zeros(n, like=x), or np.zeros(n) inside the "
            "differentiated function",
        details=f"Or: {buffer_fix}.")


def refuse_array(value: str, buffer_fix: str) -> TracingError:
    """The error for `Traced.__array__`: a write into a buffer, a SciPy function (named, with
    its fix), or a conversion by the user's code."""
    frame = asking_frame()
    if _writes_an_element(frame):
        return written_into_buffer(value, buffer_fix)
    caller = scipy_caller(frame)
    if caller is not None:
        return TracingError(f"{caller} converted a traced value ({value}) to a plain ndarray "
                            "(np.asarray), which would cut the gradient.", fix=fix_for(caller))
    return TracingError(
        f"np.asarray, np.array or a library that calls them converted a traced value ({value}) "
        "to a plain ndarray, which would cut the gradient.",
        fix="y = np.stack([a, b])  # or np.concatenate, np.hstack: build arrays from traced "
            "values with them",
        details="np.asarray(x) and np.array(x) spelled so in the differentiated code are "
                "differentiable; not through a name bound before the trace (`from numpy import "
                "asarray`, getattr) or a plain-array helper. Keep those out of the "
                "differentiated code; for a library function, `f = rulebridge.import_rule(f)` "
                "gives it a rule.")


def nested_box(box: object) -> TracingError:
    """The error for a traced value two containers deep in one argument of a NumPy or SciPy
    call (a list in a list, or in a dict)."""
    return TracingError(
        f"a traced value ({box!r}) is nested in a list, tuple or dict inside one argument of a "
        "call, as in np.block([[a, b], [c, d]]); rulebridge records a traced argument, or a "
        "flat list or tuple of them.",
        fix="rows = [np.concatenate([a, b], axis=-1), np.concatenate([c, d], axis=-1)]\n"
            "y = np.concatenate(rows, axis=-2)  # build each inner list into an array first",
        details="np.stack, np.concatenate, np.hstack and np.vstack take one flat list of traced "
                "values.")

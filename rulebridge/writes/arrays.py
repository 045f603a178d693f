"""`np.array(x)` / `np.asarray(x)` of a traced value in the differentiated code's own call.

autograd.numpy's and jax.numpy's `array`/`asarray` are differentiable, so a program written for
them and run with plain NumPy (issue 25: the drop-in swap) calls them on traced values. When
rulebridge/writes/follow.py proves the lookup to be the user's own call (a library's np.asarray
still gets NumPy's function, and a box refuses it), the follower answers as NumPy would for the
array the box stands for, and records how:

- NumPy's own call on the innermost plain value (`probe`) decides everything: the result's
  dtype and shape, whether it shares memory with the argument, and every error (an unknown
  keyword, a bad dtype, `copy=False` when a copy is needed raise as NumPy raises them).
- Shares memory (`np.asarray(x)`, `np.array(x, copy=False)`): the box itself, so a write into
  the result is a write into x, as in NumPy. A copy (`np.array(x)`): `np.copy(x)` recorded, so
  a later write into it leaves x alone. Another dtype: `np.astype(x, dtype)` (a copy). Another
  shape (`ndmin`): `np.reshape` recorded, with NumPy's leading 1s.
  The shape is set before the copy, so the copy is no view (nested levels refuse writes into
  views).
- A (nested) list holding boxes: `np.stack` of its items (follow.py's `_stack`), then the same
  dtype and shape as NumPy's call on the list of plain values.
- `order=` changes the memory layout only, never a value: the gradient is the same, and the
  layout of a recorded op's result is the rule's. `subok=` and `device="cpu"` change nothing for
  a box. `like=` a box picks the box's own type; `like=` another kind of array is refused.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..engine.box import Traced
from ..errors import TracingError
from ..rules.levels import primal, primals


def array_of(original: Callable, obj, args: tuple, kwargs: dict, stack: Callable):
    """`original(obj, *args, **kwargs)` for `obj` a box or a (nested) list holding boxes, as a
    box of the running tape (see the module's docstring)."""
    like = kwargs.get("like")
    if type(like) is Traced:
        kwargs = {k: v for k, v in kwargs.items() if k != "like"}
    plain = primal(obj) if type(obj) is Traced else primals((obj,))[0]
    probe = original(plain, *args, **kwargs)  # NumPy's answer, and NumPy's errors
    if type(probe) is not np.ndarray:
        raise TracingError(
            f"np.{original.__name__} of a traced value with like= {type(like).__name__} would "
            "give that library's array, which the tape cannot follow.",
            fix=f"y = np.{original.__name__}(x)  # without like=: a traced value stays one")
    # the shape first (ndmin's leading 1s), then the copy: a copy that is no view of another
    # array takes writes at every level (nested levels refuse writes into views)
    if type(obj) is Traced:
        result = obj if probe.shape == np.shape(obj) else np.reshape(obj, probe.shape)
        if probe.dtype != plain.dtype:
            result = np.astype(result, probe.dtype)  # a copy
        elif not np.may_share_memory(probe, plain):
            result = np.copy(result)  # dispatched to the box: recorded
        return result
    result = stack(obj)  # a new array
    reshaped = probe.shape != np.shape(result)
    if reshaped:
        result = np.reshape(result, probe.shape)
    if probe.dtype != primal(result).dtype:
        result = np.astype(result, probe.dtype)
    elif reshaped:
        result = np.copy(result)  # no view of the stack
    return result

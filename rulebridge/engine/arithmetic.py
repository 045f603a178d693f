"""Python's arithmetic on plain numbers, which a traced program follows: an operator on a box
is recorded with the ufunc's rule, and where every operand is a number the box then holds the
value the operator gives on them (Python's arithmetic, or NumPy's scalar math), as the program
does when it is not traced (box.py's operators call these)."""

from __future__ import annotations

import operator

import numpy as np

from ..errors import TracingError
from ..rules.levels import Box

_ndarray = np.ndarray


def as_python_raises(arithmetic, a, b) -> None:
    """Where the program's own arithmetic on plain numbers raises (`x / 0.0` on floats:
    ZeroDivisionError), raise that, as the untraced program does, rather than the rule's
    refusal at those inputs that the recorded ufunc met first."""
    a = a._value if isinstance(a, Box) else a
    b = b._value if isinstance(b, Box) else b
    if type(a) in _PYTHON_NUMBERS and type(b) in _PYTHON_NUMBERS:
        value = arithmetic(a, b)  # ZeroDivisionError, OverflowError: Python's own
        if type(value) is complex and type(a) is not complex and type(b) is not complex:
            raise _not_followed(arithmetic, (a, b), value, float)


_PYTHON_NUMBERS = frozenset((bool, int, float, complex))
_NUMBERS = (np.generic, int, float, complex)  # Python's and NumPy's scalars
ARITHMETIC = {
    np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
    np.divide: operator.truediv, np.floor_divide: operator.floordiv, np.remainder: operator.mod,
    np.power: operator.pow, np.matmul: operator.matmul, np.less: operator.lt,
    np.less_equal: operator.le, np.greater: operator.gt, np.greater_equal: operator.ge,
    np.equal: operator.eq, np.not_equal: operator.ne, np.negative: operator.neg,
    np.positive: operator.pos, np.absolute: operator.abs,
}


_UNARY = object()  # the absent second operand of `-x`, `abs(x)`


def as_plain_arithmetic_gives(out, arithmetic, a, b=_UNARY):
    """`out` (recorded by the ufunc's rule) holding the value the operator gives on the plain
    operands when all of them are numbers: Python's arithmetic or NumPy's scalar math, what the
    program computes when it is not traced. The ufunc differs from both. On Python numbers they
    give a Python number, which NumPy's promotion treats as weak (NEP 50), where the ufunc gives a
    strong np.float64 that would turn every float32 array it later meets into float64. And for
    `**` they call libm's pow where the ufunc may call a SIMD kernel of its own: on an AVX-512
    machine `2.0 ** np.float32(t)` and `np.power(2.0, np.float32(t))` differed in the last bit
    for 19% of t."""
    # (No generators here: on a loop of scalar ops they cost more than the rest of the op.)
    if isinstance(out._value, Box):
        return out  # a value of an enclosing differentiation: its level computed it
    a = a._value if isinstance(a, Box) else a
    if b is _UNARY:
        operands, value = (a,), arithmetic(a)
        python = type(a) in _PYTHON_NUMBERS
    else:
        b = b._value if isinstance(b, Box) else b
        if not isinstance(b, _NUMBERS) or type(a) is _ndarray:
            return out  # an array or a sequence: NumPy's operator is the ufunc
        operands, value = (a, b), arithmetic(a, b)
        python = type(a) in _PYTHON_NUMBERS and type(b) in _PYTHON_NUMBERS
    ufunc_value = out._value
    expected = type(ufunc_value.item()) if python else type(ufunc_value)
    if type(value) is not expected:  # Python's `(-8.0) ** 0.5` is complex; the ufunc's is nan
        raise _not_followed(arithmetic, operands, value, expected)
    out._value = value
    tape = out._tape
    if tape.keeps_decisions:  # a tape that may be replayed: its program computes it so too (jit)
        tape.arithmetic[out._var] = arithmetic  # (a gradient's tape kept one entry per op)
    return out


def _not_followed(arithmetic, operands: tuple, value, expected: type) -> TracingError:
    return TracingError(
        f"operator.{arithmetic.__name__}{operands!r} is a {type(value).__name__} in plain "
        f"Python but a {expected.__name__} from the ufunc whose rule was recorded, so the traced "
        "program cannot follow it. Pass the input as a NumPy scalar or array of the dtype you "
        "want (np.complex128(x) for a complex result): NumPy's arithmetic keeps its dtype.")

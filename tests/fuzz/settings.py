"""Statements that call catalogued functions in configurations: keyword arguments and static
arguments (`where=` with `initial=`, `ddof`/`correction`, `ord`, `mode`, `axis` None/int/tuple,
`keepdims`, `n`/`norm` of FFTs, `full_matrices`, `prepend`/`append`, einsum subscripts), spelled
by position or by keyword at random. Each is a key of its own (rulebridge/rules/keys.py): it is
verified by the shipped matrix or checked at first use, so a source that mishandles a setting
must come out as a refusal, never as a wrong number."""

from __future__ import annotations

import numpy as np


def _array(b, least: int = 1, most: int = 3):
    return b.var(lambda v: least <= np.ndim(v) <= most and np.size(v) >= 2)


def _axis(b, ndim: int) -> str:
    options = ["None"] + [str(k) for k in range(-ndim, ndim)]
    if ndim >= 2:
        options.append("(0, 1)")
    return b.choice(options)


def _top_gap(values, initial=None) -> float:
    """The gap between the largest entry (with `initial`) and the next one: a max's kink."""
    flat = np.ravel(values)
    flat = flat[~np.isnan(flat)]
    if initial is not None:
        flat = np.append(flat, initial)
    if flat.size < 2:
        return np.inf
    top = np.sort(flat)[-2:]
    return float(top[1] - top[0])


def _masked(b):
    a = _array(b)
    if a is None:
        return False
    shape = np.shape(b.value(a))
    mask = b.const(shape, "mask")
    name = b.choice(["sum", "mean", "prod", "std", "var", "max", "min"])
    if name in ("max", "min"):
        # the masked-out entries may be the largest: only `initial` and the kept ones count
        initial = round(float(np.median(b.value(a))), 3)
        sign = 1.0 if name == "max" else -1.0

        def margin(env):
            kept = np.where(env[mask], sign * env[a], np.nan)
            return _top_gap(kept, sign * initial)

        return b.emit(f"{{out}} = np.{name}({a}, where={mask}, initial={initial})", (margin,))
    axis = b.choice(["", ", axis=-1", ", axis=0"])
    keep = ", keepdims=True" if b.coin() else ""
    return b.emit(f"{{out}} = np.{name}({a}{axis}{keep}, where={mask})")


def _spread(b):
    a = _array(b)
    if a is None:
        return False
    name = b.choice(["std", "var", "nanstd", "nanvar"])
    setting = b.choice(["ddof=1", "correction=1", "ddof=0", "correction=0.5"])
    ndim = np.ndim(b.value(a))
    axis = _axis(b, ndim)
    return b.emit(f"{{out}} = np.{name}({a}, axis={axis}, {setting})",
                  (lambda env: 10 * float(np.min(np.var(env[a], axis=eval(axis)))),))


def _norm(b):
    a = _array(b, 1, 2)
    if a is None:
        return False
    order = b.choice(["1", "2", "3", "np.inf", "-np.inf", "None"])
    spelled = b.choice([f", {order}", f", ord={order}"])
    axis = b.choice([", axis=-1", ", axis=-1, keepdims=True"])

    def margin(env):
        x = np.abs(env[a])
        if order in ("np.inf", "-np.inf"):  # the largest or smallest |x| must be unique
            return min(_top_gap(x), _top_gap(-x))
        return float(np.min(x)) if order == "1" else 10 * float(np.min(np.sum(x * x, -1)))

    return b.emit(f"{{out}} = np.linalg.norm({a}{spelled}{axis})", (margin,))


def _fft(b):
    a = _array(b, 1, 2)
    if a is None:
        return False
    length = np.shape(b.value(a))[-1]
    n = b.choice(["", f", {length + 2}", f", n={max(2, length - 1)}"])
    norm = b.choice(["", ", norm='ortho'", ", norm='forward'", ", norm='backward'"])
    part = b.choice(["np.real(np.fft.fft({x}))", "np.imag(np.fft.fft({x}))",
                     "np.real(np.fft.rfft({x}))", "np.imag(np.fft.ifft({x}))"])
    return b.emit(f"{{out}} = {part.format(x=f'{a}{n}{norm}')}")


def _svd(b):
    a = b.var(lambda v: np.ndim(v) == 2 and min(np.shape(v)) >= 2)
    if a is None:
        return False
    call = b.choice([
        "np.linalg.svd({a}, compute_uv=False)",
        "np.linalg.svd({a}, full_matrices=False, compute_uv=False)",
        "np.linalg.svd({a}, False)[1]",
        "np.linalg.svd({a})[1]",  # full_matrices=True by default: only the values are used
    ])

    def margin(env):  # distinct, nonzero singular values
        s = np.linalg.svd(env[a], compute_uv=False)
        return float(min(np.min(s), np.min(-np.diff(s)) if s.size > 1 else np.inf))

    return b.emit(f"{{out}} = {call.format(a=a)}", (margin,))


def _edges(b):
    a = _array(b)
    if a is None:
        return False
    call = b.choice([
        "np.diff({a}, prepend=0.5)", "np.diff({a}, append=1.5)", "np.diff({a}, 1, 0)",
        "np.diff({a}, n=2, axis=-1, prepend=0, append=0)", "np.pad({a}, 1)",
        "np.pad({a}, (1, 2), mode='edge')", "np.pad({a}, 2, 'reflect')",
        "np.pad({a}, 1, mode='wrap')", "np.cumsum({a}, axis=-1, dtype=np.float64)",
        "np.cumsum({a}, None)", "np.concatenate([{a}, 2.0 * {a}], axis=None)",
    ])
    return b.emit(f"{{out}} = {call.format(a=a)}")


def _subscripts(b):
    """einsum's subscripts and trace's axes on a square matrix: a square value of the program,
    or one made of a value's first n * n elements (square values are rare otherwise)."""
    a = b.var(lambda v: np.ndim(v) == 2 and np.shape(v)[0] == np.shape(v)[1] >= 2)
    if a is not None:
        n = np.shape(b.value(a))[0]
    else:
        a = b.var(lambda v: np.size(v) >= 4)
        if a is None:
            return False
        n = min(int(np.sqrt(np.size(b.value(a)))), 4)
        a = f"np.reshape(np.ravel({a})[:{n * n}], ({n}, {n}))"
    v = b.partner((n,), grow=False)
    call = b.choice([
        "np.einsum('ii->', {a})", "np.einsum('ij->j', {a})", "np.einsum('ii,i->', {a}, {v})",
        "np.einsum('ij,j->i', {a}, {v})", "np.trace({a}, 1)", "np.trace({a}, axis1=1, axis2=0)",
        "np.trace({a}, offset=-1)",
    ])
    return b.emit(f"{{out}} = {call.format(a=a, v=v)}")


STEPS = {"masked": _masked, "spread": _spread, "norm": _norm, "fft": _fft, "svd": _svd,
         "edges": _edges, "subscripts": _subscripts}

"""Fuzzed statements that move, select, combine or multiply values, solve linear systems, and
branch or loop in Python on values."""

from __future__ import annotations

import numpy as np

from .generate import MAX_SIZE


def _shaped(b, min_ndim=1):
    return b.var(lambda v: np.ndim(v) >= min_ndim)


# -- shape ----------------------------------------------------------------------------------

def reshape(b):
    a = _shaped(b)
    if a is None:
        return False
    size = np.size(b.value(a))
    factors = [d for d in range(1, size + 1) if size % d == 0] or [1]  # size 0: (0,), (1, 0)
    first = b.choice(factors)
    shape = b.choice([(size,), (first, size // first), (size // first, 1, first), (-1, first)])
    form = b.choice(["np.reshape({a}, {s})", "{a}.reshape({s})"])
    return b.emit(f"{{out}} = {form.format(a=a, s=shape)}")


def transpose(b):
    a = _shaped(b, 2)
    if a is None:
        return False
    ndim = np.ndim(b.value(a))
    perm = tuple(b.permutation(ndim))
    form = b.choice(["{a}.T", f"np.transpose({{a}}, {perm})", "np.swapaxes({a}, 0, -1)",
                     "np.moveaxis({a}, 0, -1)", "{a}.transpose()"])
    return b.emit(f"{{out}} = {form.format(a=a)}")


def expand(b):
    a = b.var()
    ndim = np.ndim(b.value(a))
    if ndim >= 4:
        return False
    form = b.choice(["{a}[None]", "{a}[..., None]", f"np.expand_dims({{a}}, {b.integer(0, ndim)})",
                     "np.atleast_2d({a})"])
    return b.emit(f"{{out}} = {form.format(a=a)}")


def squeeze(b):
    a = b.var(lambda v: 1 in np.shape(v))
    if a is None:
        return False
    form = b.choice(["np.squeeze({a})", "{a}.squeeze()", "np.ravel({a})", "{a}.flatten()"])
    return b.emit(f"{{out}} = {form.format(a=a)}")


def tile(b):
    a = _shaped(b)
    if a is None or 2 * np.size(b.value(a)) > MAX_SIZE:
        return False
    ndim = np.ndim(b.value(a))
    form = b.choice(["np.tile({a}, 2)", f"np.repeat({{a}}, 2, axis={b.integer(0, ndim - 1)})",
                     f"np.roll({{a}}, {b.integer(-2, 2)}, axis={b.integer(0, ndim - 1)})",
                     "np.broadcast_to({a}, (2,) + {a}.shape)", "np.flipud({a})",
                     "np.rot90({a})" if ndim >= 2 else "np.fliplr(np.atleast_2d({a}))"])
    return b.emit(f"{{out}} = {form.format(a=a)}")


# -- indexing -------------------------------------------------------------------------------

def index(b):
    a = _shaped(b)
    if a is None:
        return False
    shape = np.shape(b.value(a))
    n = shape[0]
    # Positions only along axes that have them; slices that select nothing (a zero-length
    # value, then a zero-length write or reduction) are drawn too.
    forms = [f"{{a}}[{b.integer(0, n)}:]", "{a}[::-1]", "{a}[::2]"]
    if shape[-1]:
        forms.append("{a}[..., -1]")
    if n:
        forms += [f"{{a}}[{b.integer(-n, n - 1)}]", f"{{a}}[[{b.integer(0, n - 1)}, "
                  f"{b.integer(0, n - 1)}, {b.integer(0, n - 1)}]]"]
    if len(shape) >= 2:
        forms += ["{a}[:, 1:]", "{a}[1:, :1]"]
        if n:
            forms.append(f"{{a}}[{b.integer(0, n - 1)}, ::-1]")
    if b.coin():
        mask = b.const(shape, "mask")
        forms.append(f"{{a}}[{mask}]")
    if n and b.coin():
        idx = b.const((b.integer(1, 5), n), "index")
        forms.append(f"{{a}}[{idx}]")
    return b.emit(f"{{out}} = {b.choice(forms).format(a=a)}")


def iterate(b):
    """A Python loop over the rows of a value."""
    a = _shaped(b)
    if a is None or np.shape(b.value(a))[0] > 4:
        return False
    weight = b.const(np.shape(b.value(a))[1:])
    code = (f"{{out}} = 0.0\nfor row in {a}:\n    {{out}} = {{out}} + np.sin(row) * {weight}")
    return b.emit(code)


# -- combining ------------------------------------------------------------------------------

def concatenate(b):
    a = _shaped(b)
    if a is None:
        return False
    shape = np.shape(b.value(a))
    axis = b.integer(0, len(shape) - 1)
    other_shape = shape[:axis] + (b.integer(1, 3),) + shape[axis + 1:]
    if np.prod(shape) + np.prod(other_shape) > MAX_SIZE:
        return False
    other = b.var(lambda v: np.shape(v) == other_shape) or b.const(other_shape)
    items = ", ".join([a, other] if b.coin() else [other, a, a])
    forms = [f"np.concatenate([{items}], axis={axis})"]
    if axis == 0 and len(shape) <= 2:
        forms.append(f"np.{'hstack' if len(shape) == 1 else 'vstack'}([{items}])")
    form = b.choice(forms)
    return b.emit(f"{{out}} = {form}")


def stack(b):
    a = b.var()
    shape = np.shape(b.value(a))
    if 3 * np.prod(shape) > MAX_SIZE or len(shape) >= 4:
        return False
    other = b.var(lambda v: np.shape(v) == shape) or b.const(shape)
    axis = b.integer(0, len(shape))
    return b.emit(f"{{out}} = np.stack([{a}, {other}, np.sin({a})], axis={axis})")


def where_mask(b):
    a = b.var()
    other = b.partner(np.shape(b.value(a)))
    shape = np.broadcast_shapes(np.shape(b.value(a)), np.shape(b.value(other)))
    mask = b.const(shape, "mask")
    return b.emit(f"{{out}} = np.where({mask}, {a}, {other})")


# -- products and linear algebra ------------------------------------------------------------

def matmul(b):
    a = _shaped(b)
    if a is None:
        return False
    shape = np.shape(b.value(a))
    n = shape[-1]
    other = b.var(lambda v: np.ndim(v) in (1, 2) and np.shape(v)[0] == n)
    if other is None:
        other = b.const(b.choice([(n,), (n, b.integer(1, 3))]))
    form = b.choice(["{a} @ {o}", "np.matmul({a}, {o})", "np.dot({a}, {o})", "{a}.dot({o})"])
    return b.emit(f"{{out}} = {form.format(a=a, o=other)}")


def products(b):
    a, c = b.var(), b.var()
    forms = [f"np.outer({a}, {c})", f"np.einsum('i,j->ij', np.ravel({a}), np.ravel({c}))"]
    if np.ndim(b.value(a)) >= 1 and np.shape(b.value(a))[-1:] == np.shape(b.value(c))[-1:]:
        forms.append(f"np.inner({a}, {c})")
    if np.ndim(b.value(a)) == 2 and np.shape(b.value(a))[0] == np.shape(b.value(a))[1]:
        forms += [f"np.trace({a})", f"np.diagonal({a})", f"np.triu({a})", f"np.tril({a}, -1)"]
    if np.size(b.value(a)) * np.size(b.value(c)) > MAX_SIZE:
        return False
    return b.emit(f"{{out}} = {b.choice(forms)}")


def spd(b):
    """A symmetric positive definite matrix from a value: then solve, inv, det, slogdet,
    cholesky or eigh of it; also with other values in the triangle cholesky and eigh ignore
    (their gradient there is zero), at repeated eigenvalues, singular values (where only
    the values, not the vectors, have a derivative), and the det of a matrix that is singular
    at the program's inputs."""
    a = _shaped(b)
    if a is None:
        return False
    size = np.size(b.value(a))
    n = b.choice([k for k in (1, 2, 3, 4) if size % k == 0])
    eye = f"{n}.0 * np.eye({n}, dtype={{a}}.dtype)"
    m = f"np.reshape({a}, ({n}, -1))"
    matrix = f"{m} @ {m}.T + {eye.format(a=a)}"
    rhs = b.var(lambda v: np.ndim(v) in (1, 2) and np.shape(v)[0] == n) or b.const((n,))
    forms = {
        "solve": f"np.linalg.solve({matrix}, {rhs})", "inv": f"np.linalg.inv({matrix})",
        "det": f"np.linalg.det({matrix})", "slogdet": f"np.linalg.slogdet({matrix})[1]",
        "cholesky": f"np.linalg.cholesky({matrix})", "eigh": f"np.linalg.eigh({matrix})[0]",
        "eigvalsh_sum": f"np.sum(np.linalg.eigh({matrix}).eigenvalues)",
        # NumPy reads one triangle: the other holds a different, traced value
        "cholesky_lower": f"np.linalg.cholesky({matrix} + np.triu({m} @ {m}.T, 1))",
        "eigh_upper": f"np.linalg.eigh({matrix} + np.tril({m} @ {m}.T, -1), UPLO='U')[0]",
        "repeated_eigenvalues": f"np.linalg.eigh((1.0 + np.sum({a} * {a})) * "
                                f"{eye.format(a=a)})[0] ** 2",
        "repeated_singular_values": f"np.linalg.svd((1.0 + np.sum({a} * {a})) * "
                                    f"{eye.format(a=a)}, full_matrices=False)[1]",
        "singular_det": f"np.linalg.det({matrix} - {{singular}})",
    }
    name = b.choice(sorted(forms))
    if name == "singular_det":
        forms[name] = forms[name].format(singular=b.fixed(_singular_shift(eval(matrix, b.env))))
    margins = ()
    if name.startswith("eig"):
        margins = (lambda env: _eigen_gap(eval(matrix, env)),)
    return b.emit(f"{{out}} = {forms[name]}", margins)


def _singular_shift(matrix):
    """A constant whose subtraction leaves `matrix` singular at these inputs (its last row equal
    to its first), though not nearby: det's gradient there is the adjugate, not det * inv."""
    shift = np.zeros_like(matrix)
    shift[-1] = matrix[-1] - matrix[0] if len(matrix) > 1 else matrix[-1]
    return shift


def _eigen_gap(matrix):
    w = np.linalg.eigvalsh(matrix)
    return float(np.min(np.diff(w))) if w.size > 1 else np.inf


# -- Python control flow on values ----------------------------------------------------------

def branch(b):
    a = b.var()
    threshold = b.choice([0.0, 0.3, -0.5])
    then, other = b.choice([("np.sin({a})", "np.cos({a}) * 2.0"), ("{a} * {a}", "-{a}"),
                            ("np.tanh({a}) + 1.0", "{a} / 2.0")])
    code = (f"if np.sum({a}) > {threshold}:\n    {{out}} = {then.format(a=a)}\n"
            f"else:\n    {{out}} = {other.format(a=a)}")
    return b.emit(code, (lambda env: abs(float(np.sum(env[a])) - threshold),))


def loop(b):
    a = b.var()
    steps = b.integer(1, 4)
    code = (f"{{out}} = {a}\nfor _ in range({steps}):\n    {{out}} = 0.5 * {{out}} + "
            f"np.sin({{out}})")
    return b.emit(code)


STEPS = {
    "reshape": reshape, "transpose": transpose, "expand": expand, "squeeze": squeeze,
    "tile": tile, "index": index, "iterate": iterate, "concatenate": concatenate,
    "stack": stack, "where_mask": where_mask, "matmul": matmul, "products": products,
    "spd": spd, "branch": branch, "loop": loop,
}

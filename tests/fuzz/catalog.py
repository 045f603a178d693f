"""What a fuzzed program may do: one entry per kind of statement, each a function of the builder
that draws its operands and calls `Builder.emit`. Domains are made safe by composition
(`np.log(np.square(a) + 0.5)`), kinks are kept at a distance by margins."""

from __future__ import annotations

import numpy as np

from . import compiled, declared, settings, structure, writes


def _distance_to(*kinks):
    """The margin of a value from the points where a function has a kink."""
    return lambda a: min(float(np.min(np.abs(np.asarray(a) - k))) for k in kinks)


# Elementwise functions of one value; `{a}` is the operand. UNARY_KINKED pairs each template
# with the margin of its operand from the kinks.
UNARY = {
    "sin": "np.sin({a})", "cos": "np.cos({a})", "tan": "np.tan(0.5 * np.tanh({a}))",
    "tanh": "np.tanh({a})", "arctan": "np.arctan({a})", "arcsinh": "np.arcsinh({a})",
    "exp": "np.exp(np.tanh({a}))", "exp2": "np.exp2(np.sin({a}))", "expm1": "np.expm1(np.cos({a}))",
    "log": "np.log(np.square({a}) + 0.5)", "log1p": "np.log1p(np.square({a}))",
    "log2": "np.log2({a} * {a} + 1.0)", "log10": "np.log10(np.square({a}) + 2.0)",
    "sqrt": "np.sqrt(np.square({a}) + 0.1)", "reciprocal": "np.reciprocal(np.square({a}) + 0.5)",
    "arcsin": "np.arcsin(0.9 * np.tanh({a}))", "arccos": "np.arccos(0.8 * np.sin({a}))",
    "arctanh": "np.arctanh(0.9 * np.tanh({a}))", "arccosh": "np.arccosh(np.square({a}) + 1.5)",
    "sinh": "np.sinh(np.tanh({a}))", "cosh": "np.cosh(np.tanh({a}))",
    "square": "np.square({a})", "negative": "-{a}", "pow2": "{a} ** 2", "pow3": "{a} ** 3",
    "power": "np.power(np.square({a}) + 0.5, 1.5)", "rpow": "2.0 ** np.tanh({a})",
    "scale": "2.5 * {a}", "rsub": "1.5 - {a}", "rdiv": "2.0 / (np.square({a}) + 1.0)",
    "div_scalar": "{a} / 3.0", "deg2rad": "np.deg2rad({a})", "rad2deg": "np.rad2deg({a}) / 90.0",
    "sinc": "np.sinc({a})", "logaddexp0": "np.logaddexp({a}, 0.0)", "expit_like":
    "1.0 / (1.0 + np.exp(-{a}))",
}
UNARY_KINKED = {
    "abs": ("np.abs({a})", _distance_to(0.0)),
    "abs_builtin": ("abs({a})", _distance_to(0.0)),
    "fabs": ("np.fabs({a})", _distance_to(0.0)),
    "relu": ("np.maximum({a}, 0.0)", _distance_to(0.0)),
    "clip": ("np.clip({a}, -0.5, 0.7)", _distance_to(-0.5, 0.7)),
    "clip_method": ("{a}.clip(-0.8, 0.4)", _distance_to(-0.8, 0.4)),
    "sign_times": ("np.sign({a}) * np.sin({a})", _distance_to(0.0)),
    "where_positive": ("np.where({a} > 0, np.sin({a}), {a} ** 2)", _distance_to(0.0)),
}
# Elementwise functions of two broadcast-compatible values.
BINARY = {
    "add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}",
    "div": "{a} / (np.square({b}) + 0.5)",
    "np_add": "np.add({a}, {b})", "np_multiply": "np.multiply({a}, {b})",
    "np_subtract": "np.subtract({a}, {b})", "np_divide": "np.divide({a}, np.exp({b} * 0.3))",
    "hypot": "np.hypot({a}, np.square({b}) + 0.3)", "logaddexp": "np.logaddexp({a}, {b})",
    "logaddexp2": "np.logaddexp2({a}, {b})", "arctan2": "np.arctan2({a}, np.square({b}) + 0.5)",
    "pow": "np.power(np.square({a}) + 0.5, np.tanh({b}))",
    "pow_op": "(np.square({a}) + 0.5) ** {b}",
}
BINARY_KINKED = {
    "maximum": "np.maximum({a}, {b})", "minimum": "np.minimum({a}, {b})",
    "fmax": "np.fmax({a}, {b})", "fmin": "np.fmin({a}, {b})",
    "where_greater": "np.where({a} > {b}, {a}, 2.0 * {b})",
}


def _unary(template):
    def step(b):
        a = b.var()
        return b.emit(f"{{out}} = {UNARY[template].format(a=a)}")
    return step


def _unary_kinked(name):
    template, margin = UNARY_KINKED[name]

    def step(b):
        a = b.var()
        return b.emit(f"{{out}} = {template.format(a=a)}", (lambda env: margin(env[a]),))
    return step


def _binary(name, kinked=False):
    template = (BINARY_KINKED if kinked else BINARY)[name]

    def step(b):
        a = b.var()
        other = b.partner(np.shape(b.value(a)))
        if b.coin():
            a, other = other, a
        margins = (lambda env: np.min(np.abs(env[a] - env[other])),) if kinked else ()
        return b.emit(f"{{out}} = {template.format(a=a, b=other)}", margins)
    return step


# -- reductions ------------------------------------------------------------------------------

def _axis(b, ndim, allow_tuple=True):
    options = ["None"] + [str(k) for k in range(-ndim, ndim)]
    if allow_tuple and ndim >= 2:
        options.append("(0, -1)" if ndim > 2 else "(0, 1)")
    return b.choice(options)


def _gap(a, axis):
    """The smallest distance between the two largest or two smallest entries along `axis`."""
    a = np.asarray(a)
    if axis is None:
        flat = a.reshape(1, -1)
    else:
        axes = tuple(int(x) % a.ndim for x in np.atleast_1d(axis))
        size = int(np.prod([a.shape[x] for x in axes]))
        flat = np.moveaxis(a, axes, tuple(range(-len(axes), 0))).reshape(-1, size)
    if flat.shape[1] < 2:
        return np.inf
    top = np.sort(flat, axis=1)
    return float(min(np.min(top[:, -1] - top[:, -2]), np.min(top[:, 1] - top[:, 0])))


REDUCTIONS = {  # name: (call template with {a}, {axis}, {keep}; margin kind)
    "sum": ("np.sum({a}, axis={axis}{keep})", None),
    "sum_method": ("{a}.sum({axis}{keep})", None),
    "mean": ("np.mean({a}, axis={axis}{keep})", None),
    "prod": ("np.prod({a}, axis={axis}{keep})", None),
    "max": ("np.max({a}, axis={axis}{keep})", "gap"),
    "min": ("np.min({a}, axis={axis}{keep})", "gap"),
    "max_method": ("{a}.max(axis={axis}{keep})", "gap"),
    "amin": ("np.amin({a}, axis={axis}{keep})", "gap"),
    "std": ("np.std({a}, axis={axis}{keep})", "spread"),
    "var": ("np.var({a}, axis={axis}{keep})", "spread"),
}


def _reduction(name):
    template, kind = REDUCTIONS[name]

    def step(b):
        a = b.var(lambda v: np.ndim(v) >= 1)
        if a is None:
            return False
        ndim = np.ndim(b.value(a))
        axis = _axis(b, ndim, allow_tuple=name not in ("prod",))
        keep = ", keepdims=True" if b.coin() else ""
        axis_value = eval(axis)
        margins = ()
        if kind == "gap":
            margins = (lambda env: _gap(env[a], axis_value),)
        elif kind == "spread":
            margins = (lambda env: 10 * float(np.min(np.var(env[a], axis=axis_value))),)
        return b.emit(f"{{out}} = {template.format(a=a, axis=axis, keep=keep)}", margins)
    return step


def _cumsum(b):
    a = b.var(lambda v: np.ndim(v) >= 1)
    if a is None:
        return False
    axis = b.choice(range(np.ndim(b.value(a))))
    return b.emit(f"{{out}} = np.cumsum({a}, axis={axis})")


def _norm(b):
    a = b.var(lambda v: np.ndim(v) >= 1)
    if a is None:
        return False
    ndim = np.ndim(b.value(a))
    axis = b.choice(["", ", axis=-1"] if ndim <= 2 else [", axis=-1"])
    return b.emit(f"{{out}} = np.linalg.norm({a}{axis})",
                  (lambda env: 10 * float(np.min(np.linalg.norm(env[a], axis=-1))),))


def _sort(b):
    a = b.var(lambda v: np.ndim(v) == 1)  # autograd's sort rule is for 1-D arrays only
    if a is None:
        return False
    return b.emit(f"{{out}} = np.sort({a})",
                  (lambda env: _min_adjacent_gap(env[a]),))


def _min_adjacent_gap(a):
    s = np.sort(a, axis=-1)
    return float(np.min(np.diff(s, axis=-1))) if s.shape[-1] > 1 else np.inf


def _ties(b):
    """Exact ties, made by duplicating a value: a max, min, sort or median over both copies
    splits its cotangent between the tied entries, and the copies' shares must add up to the one
    element's (a rule that hands each tied entry the whole cotangent doubles the gradient).
    Distinct entries keep `KINK_MARGIN` apart, as everywhere."""
    a = b.var(lambda v: np.ndim(v) >= 1 and 0 < 2 * np.size(v) <= 48)
    if a is None:
        return False
    call = b.choice([
        "np.max(np.concatenate([{a}, {a}]), axis=0)", "np.min(np.stack([{a}, {a} * 1.0]), axis=0)",
        "np.maximum({a}, {a} + 0.0)", "np.fmin({a}, {a})", "np.amax(np.stack([{a}, {a}]))",
        "np.sort(np.concatenate([np.ravel({a}), np.ravel({a})]))",
        "np.median(np.concatenate([np.ravel({a}), np.ravel({a})]))",
    ])
    return b.emit(f"{{out}} = {call.format(a=a)}",
                  (lambda env: _min_adjacent_gap(np.ravel(env[a])),))


STEPS = {}
STEPS.update({f"unary.{name}": _unary(name) for name in UNARY})
STEPS.update({f"unary.{name}": _unary_kinked(name) for name in UNARY_KINKED})
STEPS.update({f"binary.{name}": _binary(name) for name in BINARY})
STEPS.update({f"binary.{name}": _binary(name, kinked=True) for name in BINARY_KINKED})
STEPS.update({f"reduce.{name}": _reduction(name) for name in REDUCTIONS})
STEPS.update({"reduce.cumsum": _cumsum, "reduce.norm": _norm, "reduce.sort": _sort,
              "reduce.ties": _ties})
STEPS.update({f"structure.{name}": step for name, step in structure.STEPS.items()})
STEPS.update({f"write.{name}": step for name, step in writes.STEPS.items()})
STEPS.update({f"config.{name}": step for name, step in settings.STEPS.items()})
STEPS.update({f"config.declared.{name}": step for name, step in declared.STEPS.items()})
STEPS.update({f"compiled.{name}": step for name, step in compiled.STEPS.items()})

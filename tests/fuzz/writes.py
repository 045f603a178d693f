"""Fuzzed in-place updates: `x[i] = v`, `x[i] += v`, `x *= y`, `out=`, `fill`, buffers made
`like` a value or plainly (np.zeros(n), followed while tracing), arrays from lists of values,
writes through views, and writes into the function's own arguments. Writes that
rulebridge cannot record exactly must raise MutationError, never give a wrong number."""

from __future__ import annotations

import numpy as np

from .generate import MAX_SIZE


def _target(b):
    """A copy of a value, by one of the ways NumPy code makes one, to write into."""
    a = b.var(lambda v: np.ndim(v) >= 1 and np.size(v) <= MAX_SIZE)
    if a is None:
        return None, None
    copy = b.choice(["np.copy({a})", "{a}.copy()", "{a} * 1.0"])
    if b.coin() and a.startswith("x"):
        copy = "{a}"  # write into the caller's own array: the caller must see NumPy's result
    return a, copy.format(a=a)


def _index(b, shape):
    """An index of a value of `shape` to write through. A zero-length axis has no position, so
    only slices are drawn for it, and slices that select nothing are drawn for every axis: a
    write through them writes nothing, and must still work."""
    n = shape[0]
    forms = ["::2", "...", "::-1", f"{b.integer(0, n)}:"]
    if n:
        positions = sorted({b.integer(0, n - 1), b.integer(0, n - 1)})  # distinct: MutationError
        forms += [f"{b.integer(0, n - 1)}", f"[{', '.join(map(str, positions))}]"]
    if len(shape) >= 2:
        forms.append(f":, {b.integer(0, shape[1])}:")
        if shape[1]:
            forms.append(f":, {b.integer(0, shape[1] - 1)}")
        if n:
            forms.append(f"{b.integer(0, n - 1)}, 1:")
        if shape[-1]:
            forms.append("..., 0")
    return b.choice(forms)


def _value(b, shape):
    """Something that broadcasts to `shape`: a number, a value of the program, or both."""
    kind = b.choice(["number", "value", "function of value"])
    if kind == "number":
        return b.choice(["0.5", "-1.25", "0.0"])
    other = b.partner(shape, grow=False)
    return other if kind == "value" else f"np.sin({other})"


def setitem(b):
    a, copy = _target(b)
    if a is None:
        return False
    shape = np.shape(b.value(a))
    index = _index(b, shape)
    written = np.shape(b.value(a)[eval(f"np.s_[{index}]")])
    operator = b.choice(["=", "=", "+=", "-=", "*="])
    value = _value(b, written)
    code = f"{{out}} = {copy}\n{{out}}[{index}] {operator} {value}"
    return b.emit(code, mutates=True)


def augmented(b):
    a, copy = _target(b)
    if a is None:
        return False
    shape = np.shape(b.value(a))
    other = b.partner(shape, grow=False)
    operator, value = b.choice([("+=", other), ("-=", other), ("*=", other),
                                ("/=", f"(np.square({other}) + 0.5)"), ("**=", "2")])
    return b.emit(f"{{out}} = {copy}\n{{out}} {operator} {value}", mutates=True)


def out_argument(b):
    a, copy = _target(b)
    if a is None:
        return False
    other = b.partner(np.shape(b.value(a)), grow=False)
    call = b.choice(["np.sin({o}, out={o})", "np.multiply({o}, 2.0, out={o})",
                     f"np.add({{o}}, {other}, out={{o}})", "np.tanh({o}, out={o})"])
    return b.emit(f"{{out}} = {copy}\n{call.format(o='{out}')}", mutates=True)


def buffer(b):
    """A buffer made like a value, filled element by element in a Python loop."""
    a = b.var(lambda v: np.ndim(v) >= 1 and np.shape(v)[0] <= 4)
    if a is None:
        return False
    make = b.choice(["np.zeros_like({a})", "np.ones_like({a})", "np.empty_like({a})",
                     "np.full_like({a}, 0.5)"])
    fill = "{out}.fill(0.25)\n" if b.coin() else ""
    code = (f"{{out}} = {make.format(a=a)}\n{fill}for k in range(len({a})):\n"
            f"    {{out}}[k] = np.sin({a}[k]) * (k + 1)")
    return b.emit(code, mutates=True)


def view_write(b):
    """Write through a view, then read the base (or the reverse): recorded exactly, or refused
    with MutationError when the tape cannot represent the alias."""
    a, copy = _target(b)
    if a is None:
        return False
    shape = np.shape(b.value(a))
    index = _index(b, shape)
    if index.startswith("["):
        return False  # an integer-array index makes a copy, not a view
    read = b.choice(["{out}", "view"])
    code = (f"{{out}} = {copy}\nview = {{out}}[{index}]\nview *= 2.0\n"
            f"{{out}} = {read.format(out='{out}')} + 0.0")
    return b.emit(code, mutates=True)


def plain_buffer(b):
    """A buffer made with np.zeros/np.empty/np.ones/np.full (followed while tracing), filled in a
    loop, by `out=`, or left without a traced value and read."""
    a = b.var(lambda v: np.ndim(v) >= 1 and np.shape(v)[0] <= 4)
    if a is None:
        return False
    make = b.choice(["np.zeros({s})", "np.ones({s})", "np.full({s}, -0.5)", "np.empty({s})",
                     "np.zeros({s}, dtype=np.result_type({a}))", "np.full({s}, {a}.sum())"])
    make = make.format(s=f"np.shape({a})", a=a)
    fill = b.choice(["loop", "out", "untouched"])
    if fill == "loop":
        code = (f"{{out}} = {make}\nfor k in range(len({a})):\n"
                f"    {{out}}[k] = np.sin({a}[k]) * (k + 1)")
    elif fill == "out":
        code = f"{{out}} = {make}\nnp.multiply({a}, np.cos({a}), out={{out}})"
    else:
        if "empty" in make or "sum" in make:
            return False  # whatever the memory held; a traced fill does not convert
        code = f"buf = {make}\n{{out}} = {a} * float(np.asarray(buf).ravel()[0] + 2.0)"
    return b.emit(code, mutates=True)


def traced_list(b):
    """np.array / np.asarray / np.mean / np.sum of a list of a value's elements."""
    a = b.var(lambda v: np.ndim(v) >= 1 and 2 <= np.shape(v)[0] <= 4)
    if a is None:
        return False
    n = len(b.value(a))
    items = [f"{a}[{k}]" if b.coin() else f"np.tanh({a}[{k}])" for k in range(n)]
    if b.coin():
        items[b.integer(0, n - 1)] = "0.75" if np.ndim(b.value(a)) == 1 else items[0]
    listing = "[" + ", ".join(items) + "]"
    call = b.choice(["np.array({l})", "np.asarray({l})", "np.array([{l}, {l}])",
                     "np.mean({l}, axis=0)", "np.sum({l}, axis=0)"])
    return b.emit(f"{{out}} = {call.format(l=listing)}")


STEPS = {"setitem": setitem, "augmented": augmented, "out_argument": out_argument,
         "buffer": buffer, "view_write": view_write, "plain_buffer": plain_buffer,
         "traced_list": traced_list}

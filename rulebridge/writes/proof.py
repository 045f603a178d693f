"""Whose lookup is it: `np.zeros` looked up by the differentiated function's own Python to call
it, proven from the bytecode it is executing, or not.

While a trace runs, a lookup of a followed name on the numpy module (rulebridge/writes/follow.py)
asks `proven(frame, name, module)`, where `frame` is the nearest Python frame. Python code that
looks the name up is that frame, stopped at the instruction doing it. Compiled code (numpy.random's
Cython calling `np.empty`, any C extension) has no frame: the nearest one is its Python caller,
stopped at the call of the compiled function. So the lookup is the user's own exactly when the
frame's current instruction (`f_lasti`) is the load of attribute `name`, from a plain name bound
to the numpy module, and the loaded value is the callee of the call that follows (`np.zeros(...)`,
not `f(np.zeros)` nor `np.zeros.__call__`). Each of these is checked; anything else is unproven and
gets NumPy's own function, so a plain ndarray. An unproven call the user did make costs a refusal
with a clear error (a traced value written into the plain buffer), never a box in compiled code.

What is static about a lookup site is computed once per (code object, offset, name) and cached:
the value's position on the stack is followed through the instructions that evaluate the call's
arguments until an instruction consumes it; only straight-line argument code is followed (a
conditional expression or a `yield` among the arguments leaves the call unproven). What is
dynamic (the name still bound to the numpy module) is read each time: one dictionary lookup.
Python 3.11 and 3.12 bytecode is understood; under other versions nothing is proven.
"""

from __future__ import annotations

import builtins
import dis
import sys

_VERSION = sys.version_info[:2]
SUPPORTED = _VERSION in ((3, 11), (3, 12))
_MISSING = object()
_SITES: dict = {}  # (code, offset, name) -> (opname of the base's load, its name) or None
_CODES: dict = {}  # code -> ({offset: index}, [instructions])
_MAX_SITES = 20_000
_LONGEST = 400  # instructions of argument code followed before giving up

# Loads of a plain name, the base of `np.zeros`: how `_resolve` reads its value.
_NAME_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_FAST_CHECK",
                         "LOAD_DEREF"})
_PUSH = frozenset({"LOAD_CONST", "LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_NAME",
                   "LOAD_CLOSURE", "LOAD_CLASSDEREF", "PUSH_NULL"})
_NOTHING = frozenset({"KW_NAMES", "NOP", "CACHE", "EXTENDED_ARG", "RESUME"})
_ONE_FOR_ONE = frozenset({"UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_NOT", "UNARY_INVERT",
                          "LIST_TO_TUPLE", "GET_ITER"})
_TWO_FOR_ONE = frozenset({"BINARY_OP", "BINARY_SUBSCR", "COMPARE_OP", "IS_OP", "CONTAINS_OP"})
_BUILD = frozenset({"BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"})
_UPDATES = frozenset({"LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "LIST_APPEND",
                      "SET_ADD"})
_CALL = object()  # the effect of an instruction that calls: see `_effect`


def proven(frame, name: str, module) -> bool:
    """Is `frame` now executing the lookup `module.<name>` whose value it calls next?"""
    code = frame.f_code
    key = (code, frame.f_lasti, name)
    site = _SITES.get(key, _MISSING)
    if site is _MISSING:
        if len(_SITES) > _MAX_SITES:  # code made by exec in a loop: keep the cache bounded
            _SITES.clear()
            _CODES.clear()
        site = _SITES[key] = _site(code, frame.f_lasti, name) if SUPPORTED else None
    return site is not None and _resolve(frame, *site) is module


def _resolve(frame, opname: str, name: str):
    if opname == "LOAD_GLOBAL":
        value = frame.f_globals.get(name, _MISSING)
        return frame.f_builtins.get(name) if value is _MISSING else value
    value = frame.f_locals.get(name, _MISSING)  # a function's locals, or a class or module body's
    if value is _MISSING and opname == "LOAD_NAME":
        value = frame.f_globals.get(name, _MISSING)
        if value is _MISSING:
            value = getattr(builtins, name, None)
    return value


def _instructions(code):
    known = _CODES.get(code)
    if known is None:
        listed = list(dis.get_instructions(code))
        known = _CODES[code] = ({ins.offset: i for i, ins in enumerate(listed)}, listed)
    return known


def _site(code, offset: int, name: str):
    """The (opname, name) of the plain-name load that is the base of a lookup of `name` at
    `offset` whose value is the callee of the next call; None when that is not so."""
    index, listed = _instructions(code)
    i = index.get(offset)
    if i is None:
        return None
    lookup = listed[i]
    if lookup.argval != name:
        return None
    j = i - 1
    while j >= 0 and listed[j].opname == "EXTENDED_ARG":  # the lookup's own prefixes
        j -= 1
    if j < 0 or any(ins.is_jump_target for ins in listed[j + 1:i + 1]):
        return None  # the stack at the lookup may come from elsewhere
    base = listed[j]
    if base.opname not in _NAME_LOADS:
        return None
    if lookup.opname == "LOAD_METHOD":  # 3.11: pushes NULL and the value
        pass
    elif lookup.opname == "LOAD_ATTR":
        if _VERSION >= (3, 12):
            if not lookup.arg & 1:  # the method form, which pushes NULL and the value
                return None
        elif not (base.opname == "LOAD_GLOBAL" and base.arg & 1) and not (
                j > 0 and listed[j - 1].opname == "PUSH_NULL"):
            return None  # 3.11: a call's NULL is pushed before the callee's expression
    else:
        return None
    return (base.opname, base.argval) if _called_next(listed, i + 1) else None


def _called_next(listed, start: int) -> bool:
    """Follow the value pushed just before `listed[start]` (depth 0, with `depth` items above
    it) until an instruction consumes it: True when that is a call whose callee it is."""
    depth = 0
    for ins in listed[start:start + _LONGEST]:
        effect = _effect(ins)
        if effect is None:
            return False
        pops, pushes, callee_depth = effect
        if pops > depth:
            return callee_depth is not None and callee_depth == depth
        if ins.opname in _UPDATES or ins.opname == "COPY":
            if ins.arg > depth:  # reads or changes the value itself
                return False
        depth += pushes - pops
    return False


def _effect(ins):
    """(items popped, items pushed, depth of the callee when it is a call) of an instruction
    that may appear among a call's arguments; None for anything else (a jump, a yield)."""
    op, arg = ins.opname, ins.arg
    if op in _PUSH:
        return 0, 1, None
    if op in _NOTHING or (op == "CALL" and _VERSION == (3, 11)):
        return 0, 0, None
    if op == "LOAD_GLOBAL":
        return 0, 1 + (arg & 1), None
    if op == "LOAD_ATTR":
        return 1, 1 + (arg & 1 if _VERSION >= (3, 12) else 0), None
    if op == "LOAD_METHOD":
        return 1, 2, None
    if op in _ONE_FOR_ONE:
        return 1, 1, None
    if op in _TWO_FOR_ONE:
        return 2, 1, None
    if op in _BUILD:
        return arg, 1, None
    if op == "BUILD_MAP":
        return 2 * arg, 1, None
    if op == "BUILD_CONST_KEY_MAP":
        return arg + 1, 1, None
    if op in _UPDATES:
        return 1, 0, None
    if op == "MAP_ADD":
        return 2, 0, None
    if op == "COPY":
        return 0, 1, None
    if op == "STORE_FAST":  # a walrus among the arguments
        return 1, 0, None
    if op == "FORMAT_VALUE":
        return 1 + bool(arg & 0x04), 1, None
    if op == "MAKE_FUNCTION":
        return 1 + bin(arg & 0x0F).count("1"), 1, None
    # Calls: the callable sits under its arguments (and under NULL or self in the method form).
    if (op == "PRECALL" and _VERSION == (3, 11)) or (op == "CALL" and _VERSION == (3, 12)):
        return arg + 2, 1, arg
    if op == "CALL_FUNCTION_EX":
        return 3 + (arg & 1), 1, 1 + (arg & 1)
    return None

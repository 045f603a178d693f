"""A recorded program: a tape compiled into straight-line Python that calls the recorded
functions and pullbacks on new values, with no boxes, no rule lookups and no recording.

`Program(tape, outputs, wanted)` reads the tape once, after its trace and before anything sheds
its values (rulebridge/engine/shedding.py), and writes one Python function (`Program.source`,
printable) of the form

    def program(inputs):
        v0, v1 = inputs
        v2 = f2(v0)                              # np.sin, the op's own function
        if bool(v2 > 0) is not True: raise ...   # a recorded decision, checked where it was taken
        v3 = f3(v2, v1)
        def backward(s):                         # one reverse sweep from the seeds `s`
            g3 = s.get(3)
            g0 = g2 = None
            c = u3(v3, v2, v1)(g3) ...           # the rule's own pullback of that op
            ...
            return {0: g0}
        return (v3,), backward

Each op calls what the eager tape called: a `CallForward` rule's function inline, any other
forward through `call_forward` (so a rule's policy, a regime check, runs as it does eagerly), a
write as the functional write (rulebridge/writes/write.py). The reverse sweep visits the ops of
rulebridge/engine/sweep.py in the same order and adds contributions in the same order, so the
numbers are the eager sweep's to the bit; only ops on a path from a wanted input to a seeded
output are emitted, and each pullback is asked for the arguments on such a path only. A
cotangent that does not conform (shape or dtype) raises `Mismatch`, and the caller runs the
eager call instead, whose sweep says what is wrong.

The decisions the tape recorded (rulebridge/engine/decisions.py) become checks at the position
they were taken: a replay whose values would decide differently raises `GuardFailed` before it
runs an op of the recorded path that the eager program would not run.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..engine.decisions import ASKED, same
from ..engine.forwards import call_forward
from ..engine.op import UNARY
from ..rules.rule import CallForward, function_name
from .compacting import compacted, compacting, large_arguments
from .runtime import GuardFailed, Mismatch, _accumulate, _decided

_ndarray = np.ndarray
__all__ = ["Program", "GuardFailed", "Mismatch"]


_ATTRIBUTES = ("shape", "ndim", "size")  # questions an ndarray answers as an attribute


class Program:
    """The tape's ops as one generated Python function (see the module's docstring).

    `run(inputs)`: `inputs` one value per tape input (in `tape.inputs` order); returns the
    values of `outputs` and `backward`, the reverse sweep: `backward(seeds)` with `seeds` a dict
    (a variable of `seeded` -> its cotangent) returns a dict of the cotangents of `wanted`
    (None where none flowed), and may run any number of times."""

    def __init__(self, tape, outputs: list[int], wanted: list[int], seeded: list[int],
                 name: str = "program") -> None:
        self.inputs = list(tape.inputs)
        self.outputs = list(outputs)  # variables whose values the program returns
        self.wanted = list(wanted)  # input variables whose cotangents a sweep returns
        self.seeded = list(seeded)  # variables a sweep may be seeded at
        # The recorded ops, for other back ends: Op's fields, without the first call's residuals.
        self.entries = [tuple(entry[:6]) + (None,) for entry in tape.entries]
        self.decisions = list(tape.decisions)
        self.arithmetic = dict(tape.arithmetic)
        self._names: dict[str, Any] = {"_acc": _accumulate, "_cf": call_forward, "_same": same,
                                       "_decided": _decided, "_Guard": GuardFailed,
                                       "_ND": _ndarray, "_cmp": compacted}
        self._constants: dict[int, str] = {}
        self._plan = self._reach()
        self._compact = compacting(tape.entries, dict(self._plan))
        self._shapes = large_arguments(tape.entries)
        lines: list[str] = [f"def {name}(inputs):"]
        body: list[str] = []
        if self.inputs:
            body.append(", ".join(f"v{v}" for v in self.inputs) + ", = inputs")
        residuals = self._forward(body)
        sweep = self._backward(residuals)
        # The forward's values the sweep reads reach it in one tuple, unpacked into its fast
        # locals, not a closure cell each: 1,000 cells a call set off the cyclic collector
        # about once per replay of the 1,000-op chain (its young generation's threshold is 700
        # objects), and its older ones every few. Measured with cachegrind on the chain over
        # 10 warm replays (instructions + 10 per L1 miss, per op): 22.9k with cells, 20.3k
        # with the tuple, against 20.3k hand-written (1.13x -> 1.00x; instructions 17.7k ->
        # 15.8k against 15.7k).
        read = "".join(f"{name}, " for name in _forward_names(sweep))
        if read:
            body += [f"_r = ({read})", "def backward(s, _r=_r):", f"    {read}= _r"]
        else:
            body.append("def backward(s):")
        body += ["    " + line for line in sweep]
        outs = "".join(f"v{v}, " for v in self.outputs)
        body.append(f"return ({outs}), backward")
        lines += ["    " + line for line in body]
        self.source = "\n".join(lines) + "\n"
        namespace = dict(self._names)
        exec(compile(self.source, f"<rulebridge program {name}>", "exec"), namespace)
        self.run = namespace[name]

    def __str__(self) -> str:
        return self.source

    # -- names for the generated code -----------------------------------------------------------

    def _name(self, prefix: str, value: Any) -> str:
        name = f"{prefix}{len(self._names)}"
        self._names[name] = value
        return name

    def _constant(self, value: Any) -> str:
        if value is None or type(value) in (bool, int, float, str) and _literal(value):
            return repr(value)
        name = self._constants.get(id(value))
        if name is None or self._names.get(name) is not value:
            name = self._constants[id(value)] = self._name("k", value)
        return name

    def _argument(self, value: Any, var: Any) -> str:
        if var is None:
            return self._constant(value)
        if type(var) is int:
            return f"v{var}"
        items = [self._argument(a, v) for a, v in zip(value, var)]
        if type(value) is list:
            return "[" + ", ".join(items) + "]"
        return "(" + "".join(item + ", " for item in items) + ")"

    def _primal(self, var: int) -> str:
        """What a cotangent of `var` is checked against: its value, or for a large array an
        array of its shape and dtype that owns one element (compacting.py), so that the sweep
        does not keep the value alive (a replay whose value differs in shape raises Mismatch)."""
        stand_in = self._shapes.get(var)
        return f"v{var}" if stand_in is None else self._constant(stand_in)

    # -- the forward pass ------------------------------------------------------------------------

    def _forward(self, body: list[str]) -> dict[int, Any]:
        """Emit every op and decision; return, per op index, how its pullback reads its
        residuals: ("unary", out, x) or ("general", name of the residuals' local)."""
        decisions, d = self.decisions, 0
        residuals: dict[int, Any] = {}
        for position, entry in enumerate(self.entries):
            while d < len(decisions) and decisions[d].position <= position:
                body += self._decision(d)
                d += 1
            residuals[position] = self._op(position, entry, body)
        while d < len(decisions):
            body += self._decision(d)
            d += 1
        return residuals

    def _call(self, rule, args: tuple, kwargs, inputs: tuple) -> str:
        """The expression that runs the op's forward as the eager tape ran it."""
        spelled = [self._argument(a, v) for a, v in zip(args, inputs)]
        forward = rule.forward
        if type(forward) is CallForward:
            function = self._name("f", forward.function)
            keywords = f", **{self._constant(dict(kwargs))}" if kwargs else ""
            return f"{function}({', '.join(spelled)}{keywords})"
        arguments = "(" + "".join(s + ", " for s in spelled) + ")"
        return (f"_cf({self._name('r', rule)}, {arguments}, "
                f"{self._constant(kwargs)}, {self._constant(inputs)})")

    def _op(self, position: int, entry: tuple, body: list[str]) -> Any:
        start = len(body)
        how = self._emit(position, entry, body)
        rule = entry[0]
        body[start] += f"  # {function_name(rule.function)} [{rule.source}]"
        return how

    def _emit(self, position: int, entry: tuple, body: list[str]) -> Any:
        rule, args, kwargs, inputs, outputs, structure, _ = entry
        if structure is UNARY:
            (var,), (x,) = outputs, inputs
            body.append(f"v{var} = {self._call(rule, args, None, inputs)}")
            if position not in self._compact:
                return ("unary", var, x)
            body.append(f"q{position} = _cmp({self._name('r', rule)}, (v{var}, (v{x}, ), None), "
                        f"{self._compact[position]!r})")
            return ("general", f"q{position}")
        q = f"q{position}"
        if type(rule.forward) is CallForward:
            spelled = [self._argument(a, v) for a, v in zip(args, inputs)]
            arguments = "(" + "".join(s + ", " for s in spelled) + ")"
            keywords = self._constant(dict(kwargs)) if kwargs else "None"
            out = f"v{outputs[0]}" if structure is None else f"t{position}"
            body.append(f"{out} = {self._call(rule, args, kwargs, inputs)}")
            body.append(f"{q} = ({out}, {arguments}, {keywords})")
            if position in self._compact:
                body.append(f"{q} = _cmp({self._name('r', rule)}, {q}, "
                            f"{self._compact[position]!r})")
        else:
            out = f"v{outputs[0]}" if structure is None else f"t{position}"
            body.append(f"{out}, {q} = {self._call(rule, args, kwargs, inputs)}")
        if structure is not None:
            for k, var in enumerate(outputs):
                if var is not None:
                    body.append(f"v{var} = {out}[{k}]")
        elif outputs[0] in self.arithmetic:  # the value the program got is plain Python's
            operands = ", ".join(self._argument(a, v) for a, v in zip(args, inputs))
            body.append(f"v{outputs[0]} = {self._name('o', self.arithmetic[outputs[0]])}"
                        f"({operands})")
        return ("general", q)

    def _decision(self, d: int) -> list[str]:
        position, var, kind, outcome, call = self.decisions[d]
        expected = self._constant(outcome)
        if call is not None:  # an op whose answer carries no gradient: NumPy's function again
            rule, args, kwargs = call
            spelled = [self._argument(a, v) for a, v in zip(args, var)]
            keywords = f", **{self._constant(dict(kwargs))}" if kwargs else ""
            answer = f"{self._name('f', rule.function)}({', '.join(spelled)}{keywords})"
            return [f"if not _decided({answer}, {expected}): raise _Guard({d})  # decided: "
                    f"{function_name(rule.function)}"]
        if kind == "bool":
            return [f"if bool(v{var}) is not {outcome!r}: raise _Guard({d})  # a branch"]
        if kind in _ATTRIBUTES and type(outcome) in (int, tuple):  # x.shape, x.ndim, x.size
            return [f"if (v{var}.{kind} if type(v{var}) is _ND else {self._name('a', ASKED[kind])}"
                    f"(v{var})) != {expected}: raise _Guard({d})  # decided: {kind}"]
        if kind in ("len", "int") and type(outcome) is int:
            return [f"if {kind}(v{var}) != {outcome!r}: raise _Guard({d})  # decided: {kind}"]
        answer = f"{self._name('a', ASKED[kind])}(v{var})"
        return [f"if not _same({answer}, {expected}): raise _Guard({d})  # decided: {kind}"]

    # -- the reverse sweep -----------------------------------------------------------------------

    def _active(self) -> set[int]:
        """The variables that depend on a wanted input."""
        active = set(self.wanted)
        for entry in self.entries:
            if any(v in active for slot in entry[3] for v in _variables(slot)):
                active.update(v for v in entry[4] if v is not None)
        return active

    def _reach(self) -> list[tuple[int, tuple]]:
        """The ops a cotangent reaches from a seeded output, walking back over the variables
        that depend on a wanted input, last first: (position, the arguments it is asked for)."""
        active = self._active()
        seeded = self._seeded = [v for v in dict.fromkeys(self.seeded) if v in active]
        reached = self._reached = set(seeded)
        ops = []
        for position in range(len(self.entries) - 1, -1, -1):
            entry = self.entries[position]
            if any(v in reached for v in entry[4] if v is not None):
                argnums = tuple(i for i, v in enumerate(entry[3])
                                if any(u in active for u in _variables(v)))
                if argnums:
                    ops.append((position, argnums))
                    reached.update(u for i in argnums for u in _variables(entry[3][i])
                                   if u in active)
        return ops

    def _backward(self, residuals: dict[int, Any]) -> list[str]:
        seeded, ops = self._seeded, self._plan
        targets = sorted(self._reached | set(self.wanted))
        chained = self._chained(residuals)
        passed = {residuals[ops[j - 1][0]][2] for j in chained}  # in the local `g` only
        lines = [f"g{v} = s.get({v})" for v in seeded]
        rest = [v for v in targets if v not in set(seeded) and v not in passed]
        if rest:
            lines.append(" = ".join(f"g{v}" for v in rest) + " = None")
        keep = set(self.wanted)
        self._contributed: set[int] = set()  # variables some emitted pullback adds into
        for j, (position, argnums) in enumerate(ops):
            if j in chained or j + 1 in chained:
                lines += self._link(position, residuals[position], j in chained,
                                    j + 1 in chained)
                continue
            lines += self._pullback(position, argnums, residuals[position])
            # A cotangent is read by its own op's pullback only: let it go, as the eager
            # sweep's pop does (live cotangents also defeat NumPy's cache of small buffers).
            done = [f"g{v}" for v in self.entries[position][4] if v is not None and v not in keep]
            if done:
                lines.append(" = ".join(done) + " = None")
        lines.append("return {" + ", ".join(f"{v}: g{v}" for v in self.wanted) + "}")
        return lines

    def _chained(self, residuals: dict[int, Any]) -> set[int]:
        """The indices j of the emitted ops (`_plan`) that take their output's cotangent
        straight from op j - 1: both `y = f(x)` ops with a `unary_vjp`, op j - 1's x is op j's
        output, and no other op, seed or result reads or adds into it. A run of them is one
        block under one `is not None` test, its cotangents passed in one local `g` (each let
        go as the next is made): per op, a test and a store fewer than `_pullback`'s form."""
        ops = self._plan
        counts: dict[int, int] = {}
        for position, argnums in ops:
            for i in argnums:
                for u in _variables(self.entries[position][3][i]):
                    counts[u] = counts.get(u, 0) + 1
        closed = set(self._seeded) | set(self.wanted)
        unary = [residuals[p][0] == "unary" and self.entries[p][0].unary_vjp is not None
                 for p, _ in ops]
        return {j for j in range(1, len(ops)) if unary[j - 1] and unary[j]
                and residuals[ops[j - 1][0]][2] == residuals[ops[j][0]][1]
                and counts[residuals[ops[j - 1][0]][2]] == 1
                and residuals[ops[j - 1][0]][2] not in closed}

    def _link(self, position: int, how: tuple, after: bool, before: bool) -> list[str]:
        """One op of a run `_chained` found: `after`, it reads the run's local `g`; `before`,
        it writes it (else its first op tests and lets go of its output's cotangent, its last
        adds into its argument's)."""
        _, var, x = how
        vjp = self._name("u", self.entries[position][0].unary_vjp)
        call = f"{vjp}(v{var}, v{x})({'g' if after else f'g{var}'})"
        lines = [] if after else [f"if g{var} is not None:"]
        if before:
            lines.append(f"    g = {call}")
        elif x not in self._contributed:
            lines += [f"    g{x} = {call}", "    g = None"]
        else:
            lines += [f"    g{x} = _acc(g{x}, {call}, {self._primal(x)})", "    g = None"]
        self._contributed.add(x)
        if not after:
            lines.append(f"    g{var} = None")
        return lines

    def _pullback(self, position: int, argnums: tuple, how: Any) -> list[str]:
        rule, args, kwargs, inputs, outputs, structure, _ = self.entries[position]
        if how[0] == "unary":
            _, var, x = how
            if rule.unary_vjp is not None:
                # The first contribution unchecked: the eager sweep checked this rule's
                # cotangent at the trace, shapes and dtypes are the key's, and the
                # gradients a replay returns are checked (variant.py). Measured with
                # valgrind on the chain (30 warm replays): 18.7k instructions per op with
                # the check here, 16.9k without, against 15.2k hand-written.
                vjp = self._name("u", rule.unary_vjp)
                first = x not in self._contributed
                self._contributed.add(x)
                if first:
                    return [f"if g{var} is not None:", f"    g{x} = {vjp}(v{var}, v{x})(g{var})"]
                return [f"if g{var} is not None:",
                        f"    g{x} = _acc(g{x}, {vjp}(v{var}, v{x})(g{var}), {self._primal(x)})"]
            residual = f"(v{var}, (v{x},), None)"
            g = f"g{var}"
            present = f"g{var} is not None"
        else:
            residual = how[1]
            if structure is None or structure is UNARY:  # (UNARY: compacted, compacting.py)
                g = f"g{outputs[0]}"
                present = f"{g} is not None"
            else:
                items = [f"g{v}" if v is not None else "None" for v in outputs]
                g = "(" + "".join(item + ", " for item in items) + ")"
                present = " or ".join(f"g{v} is not None" for v in outputs if v is not None)
        pullback = self._name("p", rule.sparse_pullback or rule.pullback)
        lines = [f"if {present}:", f"    c = {pullback}({residual}, {g}, {argnums!r})"]
        for k, i in enumerate(argnums):
            var = inputs[i]
            if type(var) is int:
                self._contributed.add(var)
                lines.append(f"    g{var} = _acc(g{var}, c[{k}], {self._primal(var)})")
            else:  # a list or tuple argument: one cotangent per item
                lines.append(f"    s{position} = c[{k}]")
                lines.append(f"    if s{position} is not None:")
                for j, item in enumerate(var):
                    if item is not None:
                        self._contributed.add(item)
                        lines.append(f"        g{item} = _acc(g{item}, s{position}[{j}], "
                                     f"{self._primal(item)})")
        return lines


def _variables(var: Any):
    """The variables in an op's input slot: an int, None, or a tuple of those."""
    if type(var) is int:
        yield var
    elif type(var) is tuple:
        for item in var:
            if type(item) is int:
                yield item


def _forward_names(lines: list[str]) -> list[str]:
    """The forward's locals (values `v`, residuals `q`) the sweep's lines read, in order."""
    return list(dict.fromkeys(_FORWARD_NAME.findall("\n".join(lines))))


_FORWARD_NAME = re.compile(r"\b[vq][0-9]+\b")


def _literal(value: Any) -> bool:
    """A value whose repr reads back as itself (so the generated code can spell it)."""
    if type(value) is float:
        return value == value and value not in (float("inf"), float("-inf"))
    return True

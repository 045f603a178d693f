"""Where SciPy returns vectors fixed only up to a sign (a phase, for complex ones), and how an
imported rule is made the derivative at SciPy's own vectors.

`scipy.linalg.eigh` returns each eigenvector as LAPACK's driver leaves it: any sign (phase) is
as good, and a source's `eigh` (JAX's calls another LAPACK driver) picks others for most inputs,
so its pullback, taken at its own vectors, is the derivative of another function wherever the
program uses a vector's sign (`sum(V * w)`). The conversion is exact and uses only the source's
own functions: the source's counterpart is called with SciPy's vectors as a reference, and each
of its vectors is multiplied by `p = <v, r> / |<v, r>|`, which turns it into SciPy's
(rules/phases.py; `p = ±1` for real vectors). The source differentiates that product too, so
its pullback is the derivative of the vectors that continue SciPy's own from the inputs, which
for distinct eigenvalues is the one derivative a function of them has. (LAPACK's own choice of
sign is not continuous: a step of 1e-8 can flip it, so the checks difference SciPy's vectors
aligned to those at the point, `phase_fixed` in checking/fd.py.) Where the vectors have no derivative
(repeated eigenvalues) the source's cotangent is not finite and the rule is refused. A program
that depends on complex vectors' phases has no derivative at all: its cotangent is refused
here, and the check tests phase-invariant cotangents only.

`scipy.linalg.svd` (U's columns, Vh's rows) and `qr` (Q's columns, R's rows) are aligned the
same way for real inputs: JAX calls the same LAPACK routines and has given SciPy's signs so far,
but a check at one input says nothing of the next, and aligned, no input can make them differ
silently. Complex QR fixes its phases by a continuous convention of its own (R's real
diagonal), which an alignment would change, and complex SVD's vectors are left as they were.

The rule is one op: SciPy's function on the inputs (values SciPy's to the bit), and residuals
and pullback of the source's aligned counterpart at the inputs and SciPy's vectors. A call that
returns no vectors (`eigvals_only=True`, `compute_uv=False`, `mode="r"`) or whose vectors are
not aligned uses the rule `import_rule` builds.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from ..rules.phases import NUMPY_OPS, Phases, align_outputs, refuse_phase_dependence
from ..rules.rule import Rule
from ..rules.signature import Signature, signature_of


@dataclass(frozen=True)
class Vectors:
    """A function's outputs of vectors fixed up to factors (`phases`), unless `returned(bound
    arguments)` says the call returns none."""

    phases: Phases
    returned: Callable[[inspect.BoundArguments], bool]


def _keyword_in(name: str, default: Any, values: tuple) -> Callable[[inspect.BoundArguments],
                                                                    bool]:
    return lambda bound: bound.arguments.get(name, default) in values


VECTORS: dict[str, Vectors] = {
    "scipy.linalg.eigh": Vectors(Phases({1: -2}), _keyword_in("eigvals_only", False, (False,))),
    # LAPACK's gesdd and geqrf, which JAX calls too: the same signs as SciPy's so far, aligned
    # so that no input can make them differ silently. Complex QR fixes its phases itself (R's
    # real diagonal), continuously, and complex SVD is JAX's to fail: real vectors only.
    "scipy.linalg.svd": Vectors(Phases({0: -2, 2: -1}, complex_too=False),
                                _keyword_in("compute_uv", True, (True,))),
    "scipy.linalg.qr": Vectors(Phases({0: -2, 1: -1}, complex_too=False),
                               _keyword_in("mode", "full", ("full", "economic"))),
}


class AlignedImport:
    """The registry's builder of a drop-in's rules from one source, for a function whose
    vectors SciPy fixes up to factors (see the module's docstring). Calls whose vectors are not
    aligned (none returned; complex ones where `Phases.complex_too` is False) use `plain`'s
    rules, as `import_rule` builds them."""

    def __init__(self, drop_in: Callable, signature: inspect.Signature, vectors: Vectors,
                 adapter: Any, equivalent: Callable,
                 plain: Callable[[Signature], Rule]) -> None:
        self.drop_in, self.signature, self.vectors = drop_in, signature, vectors
        self.adapter, self.equivalent, self.plain = adapter, equivalent, plain
        source_ops = tuple(adapter.counterpart(f) for f in NUMPY_OPS)
        scipy_function, phases = drop_in.scipy_function, vectors.phases

        # SciPy's function and the source's, with their vectors aligned to the references
        # passed after the function's own arguments (one per output `phases` names)
        def reference_function(*args, **kwargs):
            args, references = _split(args, phases)
            out = tuple(scipy_function(*args, **kwargs))
            return align_outputs(out, _at(out, references, phases), phases)

        def reference_equivalent(*args, **kwargs):
            args, references = _split(args, phases)
            out = tuple(equivalent(*args, **kwargs))
            return align_outputs(out, _at(out, references, phases), phases, source_ops)

        reference_function.__rulebridge_name__ = getattr(drop_in, "__rulebridge_name__", "")
        self.reference_function, self.reference_equivalent = (reference_function,
                                                              reference_equivalent)
        self._inner: dict[Signature, Rule] = {}

    def _rule_at(self, args: tuple) -> Rule:
        signature = signature_of(args)
        rule = self._inner.get(signature)
        if rule is None:
            rule = self._inner[signature] = self.adapter.import_rule(
                self.reference_function, signature, self.reference_equivalent)
        return rule

    def __call__(self, signature: Signature) -> Rule:
        plain = self.plain(signature)  # import_rule's: outputs compared, checked at first use
        scipy_function, vectors, bind = (self.drop_in.scipy_function, self.vectors,
                                         self.signature.bind)

        def forward(args, kwargs):
            if vectors.returned(bind(*args, **kwargs)):
                out = scipy_function(*args, **kwargs)
                aligned = vectors.phases.aligned(out)
                if len(aligned) == len(vectors.phases.outputs):
                    inner_args = (*args, *(out[k] for k in sorted(aligned)))
                    inner = self._rule_at(inner_args)
                    _, residuals = inner.forward(inner_args, kwargs)
                    return out, (inner, residuals, out, aligned)
            out, residuals = plain.forward(args, kwargs)
            return out, (plain, residuals, None, None)

        def pullback(residuals, g, argnums):
            rule, inner, found, aligned = residuals
            if aligned:
                refuse_phase_dependence(self.drop_in, g, found, aligned)
            return rule.pullback(inner, g, argnums)

        return Rule(self.drop_in, signature, forward, pullback, source=plain.source,
                    source_version=plain.source_version,
                    notes=f"imported: pullback of {getattr(self.equivalent, '__name__', '?')} "
                          "at SciPy's vectors (each aligned to SciPy's sign or phase)")


def _split(args: tuple, phases: Phases) -> tuple[tuple, tuple]:
    count = len(phases.outputs)
    return args[:-count], args[-count:]


def _at(out: tuple, references: tuple, phases: Phases) -> tuple:
    # `out` with the references in the vectors' places (the other outputs are not read)
    placed = dict(zip(sorted(phases.outputs), references))
    return tuple(placed.get(k, item) for k, item in enumerate(out))

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

The rule is one op: SciPy's function on the inputs (values SciPy's to the bit), and residuals
and pullback of the source's aligned counterpart at the inputs and SciPy's vectors. A call that
returns no vectors (`eigvals_only=True`) uses the plain imported rule.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..rules.phases import NUMPY_OPS, align_outputs
from ..rules.rule import Rule
from ..rules.signature import Signature, signature_of


@dataclass(frozen=True)
class Vectors:
    """Output `output` of a function holds vectors in its columns, each fixed up to a factor of
    modulus one, unless `returned(bound arguments)` says the call returns no such output."""

    output: int
    returned: Callable[[inspect.BoundArguments], bool]


VECTORS: dict[str, Vectors] = {
    "scipy.linalg.eigh": Vectors(1, lambda bound: not bound.arguments.get("eigvals_only", False)),
}


def _phase_invariant(function: Callable, cotangent, vectors) -> None:
    """Refuse a cotangent of complex vectors that moves with their phases: the program's value
    then depends on a phase LAPACK picks as it likes, and has no derivative (PyTorch refuses
    the same). Under a phase change `v -> v e^(i t)` the program moves by `-t Im(sum(g * v))`
    (the bilinear pairing of cotangents), which must vanish for every vector."""
    if cotangent is None or not np.iscomplexobj(vectors):
        return
    moved = np.abs(np.imag(np.sum(cotangent * vectors, axis=-2)))
    scale = np.sum(np.abs(cotangent) * np.abs(vectors), axis=-2)
    if np.any(moved > np.sqrt(np.finfo(vectors.dtype).eps) * scale):
        raise ValueError(
            f"{getattr(function, '__rulebridge_name__', function)}: the program depends on the "
            "phases of complex eigenvectors, which LAPACK picks as it likes (any e^(i t) v is as "
            "good): such a function of them has no derivative. Use phase-invariant functions of "
            "the vectors (abs(v) ** 2, v @ v.conj().T, the eigenvalues).")


def _at(out: tuple, reference, positions: tuple[int, ...]) -> tuple:
    # outputs standing for `out` with `reference` in the vectors' places (the others unread)
    return tuple(reference if k in positions else item for k, item in enumerate(out))


class AlignedImport:
    """The registry's builder of a drop-in's rules from one source, for a function whose
    output `vectors` SciPy fixes up to phases (see the module's docstring)."""

    def __init__(self, drop_in: Callable, signature: inspect.Signature, vectors: Vectors,
                 adapter: Any, equivalent: Callable) -> None:
        self.drop_in, self.signature, self.vectors = drop_in, signature, vectors
        self.adapter, self.equivalent = adapter, equivalent
        source_ops = tuple(adapter.counterpart(f) for f in NUMPY_OPS)
        scipy_function, positions = drop_in.scipy_function, (vectors.output,)

        def reference_function(*args, **kwargs):  # SciPy's, aligned to its last argument
            *args, reference = args
            out = tuple(scipy_function(*args, **kwargs))
            return align_outputs(out, _at(out, reference, positions), positions)

        def reference_equivalent(*args, **kwargs):  # the source's, aligned the same way
            *args, reference = args
            out = tuple(equivalent(*args, **kwargs))
            return align_outputs(out, _at(out, reference, positions), positions, source_ops)

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
        plain = self.adapter.import_rule(self.drop_in, signature, self.equivalent)
        scipy_function, vectors, bind = (self.drop_in.scipy_function, self.vectors,
                                         self.signature.bind)

        def forward(args, kwargs):
            if not vectors.returned(bind(*args, **kwargs)):
                out, residuals = plain.forward(args, kwargs)
                return out, (plain, residuals, None)
            out = scipy_function(*args, **kwargs)
            inner_args = (*args, out[vectors.output])
            inner = self._rule_at(inner_args)
            _, residuals = inner.forward(inner_args, kwargs)
            return out, (inner, residuals, out[vectors.output])

        def pullback(residuals, g, argnums):
            rule, inner, found = residuals
            if found is not None:
                _phase_invariant(self.drop_in, g[vectors.output], found)
            return rule.pullback(inner, g, argnums)

        return Rule(self.drop_in, signature, forward, pullback, source=plain.source,
                    source_version=plain.source_version,
                    notes=f"imported: pullback of {getattr(self.equivalent, '__name__', '?')} "
                          "at SciPy's vectors (each aligned to SciPy's sign or phase)")

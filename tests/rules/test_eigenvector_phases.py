"""Complex eigenvectors are fixed only up to a phase each, which LAPACK picks as it likes: a
program whose value moves with a phase has no derivative, and `numpy.linalg.eigh`/`eig` refuse
it exactly as the `rulebridge.scipy` drop-in does (issue 22, section 6); phase-invariant programs
keep their gradients. The reference is central differences of NumPy's own function."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg

import rulebridge as rb
import rulebridge.scipy.linalg as rla

RNG = np.random.default_rng(7)
B = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
HERMITIAN = B + B.conj().T
GENERAL = B + 3 * np.eye(3)
ROTATION_LIKE = np.array([[0.0, -2.0, 0.3], [1.0, 0.1, 0.0], [0.2, 0.0, 1.5]])  # complex pair
WEIGHTS = RNG.normal(size=(3, 3))


def central(f, a, h=1e-6):
    """df/dx - i df/dy entry by entry (the convention rulebridge, JAX and autograd share)."""
    g = np.zeros(a.shape, dtype=np.result_type(a, 1j) if np.iscomplexobj(a) else float)
    for index in np.ndindex(a.shape):
        e = np.zeros(a.shape)
        e[index] = 1
        g[index] = (f(a + h * e) - f(a - h * e)) / (2 * h)
        if np.iscomplexobj(a):
            g[index] -= 1j * (f(a + 1j * h * e) - f(a - 1j * h * e)) / (2 * h)
    return g


eigh_vectors = lambda a: np.linalg.eigh(a)[1]  # noqa: E731
eig_vectors = lambda a: np.linalg.eig(a)[1]  # noqa: E731

def projector_of_first(v):
    first = v[:, :1]
    return np.real(np.sum((first @ first.conj().T) * WEIGHTS))


PHASE_DEPENDENT = {
    "eigh real(V)": (lambda a: np.sum(np.real(eigh_vectors(a)) * WEIGHTS), HERMITIAN),
    "eigh imag(V[1])": (lambda a: np.sum(np.imag(eigh_vectors(a)[1])), HERMITIAN),
    "eig real(V)": (lambda a: np.sum(np.real(eig_vectors(a)) * WEIGHTS), GENERAL),
    "eig of a real matrix": (lambda a: np.sum(np.real(eig_vectors(a)) * WEIGHTS),
                             ROTATION_LIKE),
}
PHASE_INVARIANT = {
    "eigh |V|^2": (lambda a: np.sum(np.abs(eigh_vectors(a)) ** 2 * WEIGHTS), HERMITIAN),
    "eigh projector": (lambda a: projector_of_first(eigh_vectors(a)), HERMITIAN),
    "eig |V|^2": (lambda a: np.sum(np.abs(eig_vectors(a)) ** 2 * WEIGHTS), GENERAL),
    "eig eigenvalues": (lambda a: np.sum(np.real(np.linalg.eig(a)[0]) * [1.0, 2.0, 3.0]),
                        GENERAL),
}


def sources_for(function, a):
    usable = []
    for source in (None, "autograd", "jax"):
        try:
            rb.rule_for(function, rb.signature_of((a,)), source)
        except rb.NoRuleError:
            continue
        usable.append(source)
    return usable


@pytest.mark.parametrize("name", PHASE_DEPENDENT)
def test_a_program_that_moves_with_a_phase_is_refused(name):
    f, a = PHASE_DEPENDENT[name]
    function = np.linalg.eigh if name.startswith("eigh") else np.linalg.eig
    sources = sources_for(function, a)
    assert None in sources
    for source in sources:
        with pytest.raises(rb.NoDerivativeError, match="phases of complex eigenvectors"):
            rb.grad(f, source=source)(a)


@pytest.mark.parametrize("name", PHASE_INVARIANT)
def test_phase_invariant_programs_keep_their_gradient(name):
    f, a = PHASE_INVARIANT[name]
    function = np.linalg.eigh if name.startswith("eigh") else np.linalg.eig
    for source in sources_for(function, a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = rb.grad(f, source=source)(a)
        expected = central(f, a)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7 * np.abs(expected).max())


def test_a_refusal_leaves_the_key_usable():
    dependent, a = PHASE_DEPENDENT["eigh real(V)"]
    invariant, _ = PHASE_INVARIANT["eigh |V|^2"]
    for _ in range(2):
        with pytest.raises(rb.NoDerivativeError):
            rb.grad(dependent)(a)
        np.testing.assert_allclose(rb.grad(invariant)(a), central(invariant, a), rtol=1e-6)


def test_numpy_and_the_scipy_drop_in_answer_alike():
    program = lambda eigh: (lambda a: np.sum(np.real(eigh(a)[1]) * WEIGHTS))  # noqa: E731
    for eigh in (np.linalg.eigh, rla.eigh):
        with pytest.raises(rb.NoDerivativeError, match="phases of complex eigenvectors"):
            rb.grad(program(eigh))(HERMITIAN)
    invariant = lambda eigh: (lambda a: np.sum(np.abs(eigh(a)[1]) ** 2 * WEIGHTS))  # noqa: E731
    expected = central(invariant(scipy.linalg.eigh), HERMITIAN)
    for eigh in (np.linalg.eigh, rla.eigh):
        np.testing.assert_allclose(rb.grad(invariant(eigh))(HERMITIAN), expected, rtol=1e-6)

"""`rulebridge.scipy.linalg.eigh` with eigenvectors: the derivative at SciPy's own vectors.

JAX's `eigh` (another LAPACK driver) returns other signs than SciPy's for most inputs, so its
pullback at its own vectors is the derivative of another function wherever a program uses a
vector's sign. References: float64 central differences of the same program run through SciPy's
own `eigh`, whose vectors are aligned to SciPy's at the point before differencing (LAPACK's
choice of sign can flip under a step of 1e-8, so plain differences of a sign-dependent program
measure that flip, not a derivative). The matrices hold other values in the triangle SciPy does
not read, and the differences perturb every entry, so that triangle must get zeros.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import rulebridge
import rulebridge.scipy.linalg as rla

from tests.support.numerical import central_difference

RNG = np.random.default_rng(41)


def _spd_with_junk(n: int, lower: bool, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(n, n))
    junk = rng.normal(size=(n, n))
    return s @ s.T + n * np.eye(n) + (np.triu(junk, 1) if lower else np.tril(junk, -1))


def _scipy_aligned(a: np.ndarray, lower: bool, at: np.ndarray, **kwargs):
    w, v = scipy.linalg.eigh(a, lower=lower, **kwargs)
    return w, v * np.sign(np.sum(v * at, axis=0))


PROGRAMS = {  # (w, v) -> a number; the weights make every entry count
    "sign-invariant": lambda w, v, m: np.sum(v ** 2 * m) + w @ m[0],
    "sign-dependent": lambda w, v, m: np.sum(v * m) + np.sum(np.sin(v[0]) * w),
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_eigh_vectors_have_scipy_s_derivative(program, lower, seed):
    a = _spd_with_junk(4, lower, seed)
    weights = np.random.default_rng(seed + 10).normal(size=(4, 4))
    g = PROGRAMS[program]
    at = scipy.linalg.eigh(a, lower=lower)[1]

    value, got = rulebridge.value_and_grad(
        lambda a: g(*rla.eigh(a, lower=lower), weights))(a)
    assert value == g(*scipy.linalg.eigh(a, lower=lower), weights)  # SciPy's own vectors
    want = central_difference(lambda a: g(*_scipy_aligned(a, lower, at), weights), (a,))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    ignored = np.triu_indices(4, 1) if lower else np.tril_indices(4, -1)
    assert np.all(got[ignored] == 0)
    assert np.abs(want[np.tril_indices(4, -1) if lower else np.triu_indices(4, 1)]).min() > 1e-6


def test_the_sources_signs_differ_from_scipy_s_at_these_inputs():
    # what makes the test above able to fail: the JAX vectors' signs are not SciPy's
    import jax
    import jax.scipy.linalg as jla

    differ = 0
    for seed in (0, 1, 2):
        a = _spd_with_junk(4, True, seed)
        with jax.enable_x64(True):
            theirs = np.asarray(jla.eigh(np.tril(a) + np.tril(a, -1).T)[1])
        differ += np.any(np.sum(theirs * scipy.linalg.eigh(a)[1], axis=0) < 0)
    assert differ >= 2


def test_the_values_alone_need_no_vectors():
    a = _spd_with_junk(3, True, 5)
    got = rulebridge.grad(lambda a: np.sum(rla.eigh(a, eigvals_only=True) ** 3))(a)
    want = central_difference(lambda a: np.sum(scipy.linalg.eigh(a, eigvals_only=True) ** 3),
                              (a,))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


REPEATED = np.diag([1.0, 1.0, 2.0]) + np.triu(RNG.normal(size=(3, 3)), 1)


def test_vectors_of_a_repeated_eigenvalue_are_refused():
    # check_finite=False: a key of its own, not shared with the other tests of this module
    f = lambda a: np.sum(rla.eigh(a, check_finite=False)[1] ** 2 * np.arange(9.0).reshape(3, 3))  # noqa: E731,E501
    with pytest.raises(rulebridge.RulebridgeError):
        rulebridge.grad(f)(REPEATED)
    with rulebridge.trust(), pytest.raises(rulebridge.RulebridgeError, match="not finite"):
        rulebridge.grad(f)(REPEATED)  # unchecked, as a shipped status would use it


def test_the_values_of_a_repeated_eigenvalue_keep_their_derivative():
    weights = np.array([1.0, 1.0, 3.0])  # the repeated pair's sum is smooth
    # The check before first use gives every output a cotangent (it cannot know which the
    # program uses), so at a key no status verifies these inputs are refused; the shipped
    # status verifies the default key, where the rule is used as trust() uses it here: the
    # unused vectors reach JAX as a symbolic zero.
    with rulebridge.trust():
        got = rulebridge.grad(lambda a: rla.eigh(a, overwrite_a=False)[0] @ weights)(REPEATED)
    want = central_difference(lambda a: scipy.linalg.eigh(a)[0] @ weights, (REPEATED,))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def _hermitian(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    return s @ s.conj().T + 3 * np.eye(3)


def test_complex_vectors_phase_invariant_programs_are_differentiated():
    h, weights = _hermitian(7), RNG.normal(size=(3, 3))

    def program(linalg):
        return lambda a: np.sum(np.abs(linalg.eigh(a)[1]) ** 2 * weights)

    got = rulebridge.grad(program(rla))(h)
    f = program(scipy.linalg)
    real = central_difference(lambda x: f(x + 1j * h.imag), (h.real,))
    imaginary = central_difference(lambda y: f(h.real + 1j * y), (h.imag,))
    np.testing.assert_allclose(got, real - 1j * imaginary, rtol=1e-6, atol=1e-8)  # JAX's


def test_complex_vectors_phases_have_no_derivative_and_are_refused():
    h, weights = _hermitian(8), RNG.normal(size=(3, 3))
    with pytest.raises(rulebridge.RulebridgeError, match="phases of complex eigenvectors"):
        rulebridge.grad(lambda a: np.sum(np.real(rla.eigh(a)[1]) * weights))(h)


# -- svd and qr: LAPACK's gesdd and geqrf, JAX's too; aligned all the same -------------------


def _aligned_like(out, at, axes):
    return tuple(o * np.sign(np.sum(o * r, axis=axes[k], keepdims=True)) if k in axes else o
                 for k, (o, r) in enumerate(zip(out, at)))


FACTORS = {  # name: (call, {output: axis of a vector's entries}, program of the outputs)
    "svd": (lambda linalg, a: linalg.svd(a, full_matrices=False), {0: -2, 2: -1},
            lambda u, s, vh, m: np.sum(u * m[:5, :3]) + np.sum(vh * m[:3, :3]) + s @ m[0, :3]),
    "qr": (lambda linalg, a: linalg.qr(a, mode="economic"), {0: -2, 1: -1},
           lambda q, r, m: np.sum(q * m[:5, :3]) + np.sum(np.sin(r) * m[:3, :3])),
}


@pytest.mark.parametrize("name", list(FACTORS))
def test_svd_and_qr_vectors_have_scipy_s_derivative(name):
    call, axes, program = FACTORS[name]
    a, weights = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 5))
    at = call(scipy.linalg, a)
    value, got = rulebridge.value_and_grad(lambda a: program(*call(rla, a), weights))(a)
    assert value == program(*at, weights)
    want = central_difference(
        lambda a: program(*_aligned_like(call(scipy.linalg, a), at, axes), weights), (a,))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_a_source_with_other_signs_still_gives_scipy_s_derivative():
    # what the alignment is for: a source whose SVD flips every vector pair
    import inspect

    import jax.scipy.linalg as jla

    from rulebridge.import_rule import rule_builder
    from rulebridge.scipy.dropin import DropIn
    from rulebridge.scipy.gauge import VECTORS, AlignedImport

    def flipped(a, full_matrices=True, **kwargs):
        u, s, vh = jla.svd(a, full_matrices=full_matrices, **kwargs)
        return -u, s, -vh

    drop_in = DropIn("scipy.linalg.svd", scipy.linalg.svd, inspect.signature(scipy.linalg.svd))
    drop_in._sources = ("jax",)
    adapter = rulebridge.REGISTRY.adapter("jax")
    rulebridge.REGISTRY.add_import(drop_in, "jax", AlignedImport(
        drop_in, drop_in.__signature__, VECTORS["scipy.linalg.svd"], adapter, flipped,
        rule_builder(drop_in, "jax", flipped)))
    call, axes, program = FACTORS["svd"]
    a, weights = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 5))
    at = call(scipy.linalg, a)
    got = rulebridge.grad(lambda a: program(*drop_in(a, full_matrices=False), weights))(a)
    want = central_difference(
        lambda a: program(*_aligned_like(call(scipy.linalg, a), at, axes), weights), (a,))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)

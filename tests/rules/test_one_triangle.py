"""Functions that read one triangle of a matrix (cholesky, eigh, eigvalsh, pinv and svd with
hermitian=True): their gradient is NumPy's, with a zero cotangent on the triangle NumPy ignores,
from every source; and the matrix checks them with tangents in every entry, so a convention that
is right only for symmetric inputs can never pass it.

References: float64 central differences of NumPy's own function, entry by entry."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.checking.catalogue import cases_for
from rulebridge.checking.matrix import Plan, check_function
from rulebridge.rules.registry import REGISTRY

from tests.support.numerical import (assert_right_or_raises, central_difference,
                        complex_central_difference)

N = 4
B = np.random.default_rng(15).normal(size=(N, N))
# Not symmetric: the triangle NumPy ignores holds other values than the one it reads.
LOWER_ONLY = 4 * np.eye(N) + np.tril(B, -1)
GENERAL = 4 * np.eye(N) + 0.3 * B + np.diag(np.arange(N) * 0.7)
WEIGHTS = np.random.default_rng(16).normal(size=(N, N))
VALUE_WEIGHTS = np.arange(1.0, N + 1)


def _losses():
    """(name, loss of the matrix, reads the upper triangle) for every one-triangle reader."""
    def eig_loss(uplo):
        def loss(a):
            w, v = np.linalg.eigh(a, UPLO=uplo)
            return np.sum(w * VALUE_WEIGHTS) + np.sum(np.abs(v) ** 2 * WEIGHTS) \
                + np.sum(v[0] * v[1])
        return loss

    return [
        ("cholesky", lambda a: np.sum(np.linalg.cholesky(a) * WEIGHTS), False),
        ("cholesky upper", lambda a: np.sum(np.linalg.cholesky(a, upper=True) * WEIGHTS), True),
        ("eigh L", eig_loss("L"), False),
        ("eigh U", eig_loss("U"), True),
        ("eigvalsh L", lambda a: np.sum(np.linalg.eigvalsh(a) * VALUE_WEIGHTS), False),
        ("eigvalsh U", lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="U") * VALUE_WEIGHTS), True),
        ("pinv hermitian", lambda a: np.sum(np.linalg.pinv(a, hermitian=True) * WEIGHTS), False),
        ("svd hermitian", lambda a: np.sum(np.linalg.svd(a, hermitian=True)[1] * VALUE_WEIGHTS)
         + np.sum(np.linalg.svd(a, hermitian=True)[0] ** 3 * WEIGHTS), False),
    ]


LOSSES = _losses()


@pytest.mark.parametrize("source", ["autograd", "jax"])
@pytest.mark.parametrize("name, loss, upper", LOSSES, ids=[n for n, *_ in LOSSES])
@pytest.mark.parametrize("one_sided", [True, False], ids=["one triangle", "general"])
def test_the_gradient_is_numpy_s_in_every_entry_or_the_call_raises(source, name, loss, upper,
                                                                   one_sided):
    a = LOWER_ONLY if one_sided else GENERAL
    a = a.T if upper else a
    assert_right_or_raises(loss, a, central_difference(loss, (a,)), source)


def test_the_true_gradient_is_zero_on_the_ignored_triangle():
    # The premise of every test here, on NumPy alone: a reference that is not symmetric.
    g = central_difference(LOSSES[0][1], (LOWER_ONLY,))
    assert np.all(np.triu(g, 1) == 0) and np.any(np.tril(g, -1) != 0)


class SymmetrisedAdapter(rb.Adapter):
    """Serves cholesky, eigh and eigvalsh with the symmetrised cotangent (G + G^H) / 2 of JAX's
    correct one: right for every symmetric tangent, wrong for the entries NumPy ignores."""

    name = "symmetrised"

    def version(self):
        return "1.0"

    def functions(self):
        return [np.linalg.cholesky, np.linalg.eigh, np.linalg.eigvalsh]

    def build_rule(self, function, signature):
        exact = rb.rule_for(function, signature, "jax")

        def pullback(residuals, g, argnums):
            (ct,) = exact.pullback(residuals, g, argnums)
            return ((ct + np.conj(np.swapaxes(ct, -1, -2))) / 2,)

        return rb.Rule(function, signature, exact.forward, pullback, source=self.name,
                       source_version="1.0")


@pytest.fixture
def symmetrised():
    rb.register_adapter(SymmetrisedAdapter())
    yield "symmetrised"
    REGISTRY.unregister("symmetrised")


@pytest.mark.parametrize("name", ["numpy.linalg.cholesky", "numpy.linalg.eigh",
                                  "numpy.linalg.eigvalsh"])
def test_the_matrix_fails_a_convention_right_only_for_symmetric_tangents(symmetrised, name):
    assert cases_for(name)
    cells = check_function(name, Plan((symmetrised,), ("float64", "complex128")))
    pullbacks = [c for c in cells if c["dtype"] != "jvp"]  # one-triangle readers offer no jvp
    statuses = {c["status"] for c in pullbacks}
    # never a pass; an "error" is a cell whose exact rule underneath could not be checked there
    assert pullbacks and "fail" in statuses and statuses <= {"fail", "error"}, cells
    assert {c["status"] for c in cells if c["dtype"] == "jvp"} <= {"not offered"}


C = np.random.default_rng(17).normal(size=(N, N))
# Complex: the imaginary part of the diagonal is ignored too (LAPACK reads its real part).
COMPLEX = GENERAL + 0.3j * C
WEIGHTS_IMAG = np.random.default_rng(18).normal(size=(N, N))


def _complex_losses():
    def weighted(m):
        return np.sum(np.real(m) * WEIGHTS) + np.sum(np.imag(m) * WEIGHTS_IMAG)

    def eig_loss(uplo):
        def loss(a):
            w, v = np.linalg.eigh(a, UPLO=uplo)
            return np.sum(w * VALUE_WEIGHTS) + np.sum(np.abs(v) ** 2 * WEIGHTS)  # phase-free
        return loss

    return [
        ("cholesky", lambda a: weighted(np.linalg.cholesky(a)), False),
        ("cholesky upper", lambda a: weighted(np.linalg.cholesky(a, upper=True)), True),
        ("eigh L", eig_loss("L"), False),
        ("eigh U", eig_loss("U"), True),
        ("eigvalsh U", lambda a: np.sum(np.linalg.eigvalsh(a, UPLO="U") * VALUE_WEIGHTS), True),
        ("pinv hermitian", lambda a: weighted(np.linalg.pinv(a, hermitian=True)), False),
    ]


COMPLEX_LOSSES = _complex_losses()


@pytest.mark.parametrize("source", ["autograd", "jax"])
@pytest.mark.parametrize("name, loss, upper", COMPLEX_LOSSES, ids=[n for n, *_ in COMPLEX_LOSSES])
def test_complex_matrices_too(source, name, loss, upper):
    a = COMPLEX.T if upper else COMPLEX
    assert_right_or_raises(loss, a, complex_central_difference(loss, a), source)


@pytest.mark.parametrize("lower", [True, False])
def test_the_conversion_is_the_same_for_a_symmetrised_and_for_an_exact_cotangent(lower):
    g = B + 1j * C
    converted = rb.lower_triangle_cotangent(g, lower)
    symmetrised = (g + np.conj(g.T)) / 2
    np.testing.assert_allclose(rb.lower_triangle_cotangent(symmetrised, lower), converted)
    np.testing.assert_array_equal(rb.lower_triangle_cotangent(converted, lower), converted)
    ignored = np.triu(converted, 1) if lower else np.tril(converted, -1)
    assert not np.any(ignored) and not np.any(np.imag(np.diagonal(converted)))


RNG = np.random.default_rng(31)
SPELLINGS = [  # (function, args after the matrix, kwargs, triangle NumPy reads)
    (np.linalg.eigh, (), {}, "L"), (np.linalg.eigh, ("U",), {}, "U"),
    (np.linalg.eigh, (), {"UPLO": "u"}, "U"), (np.linalg.eigvalsh, ("L",), {}, "L"),
    (np.linalg.cholesky, (), {"upper": True}, "U"), (np.linalg.cholesky, (), {}, "L"),
    (np.linalg.pinv, (1e-15, True), {}, "L"), (np.linalg.pinv, (), {"hermitian": True}, "L"),
    (np.linalg.pinv, (), {}, None), (np.linalg.svd, (True, True, True), {}, "L"),
    (np.linalg.svd, (False,), {}, None), (np.linalg.det, (), {}, None),
]


@pytest.mark.parametrize("function, rest, kwargs, expected", SPELLINGS)
def test_the_triangle_read_by_any_spelling_of_a_call(function, rest, kwargs, expected):
    a = RNG.normal(size=(3, 3))
    assert rb.triangle_read(function, (a, *rest), kwargs) == expected


@pytest.mark.parametrize("lower", [True, False])
def test_the_matrix_read_is_the_hermitian_one_the_triangle_stands_for(lower):
    a = RNG.normal(size=(2, 4, 4)) + 1j * RNG.normal(size=(2, 4, 4))
    read = np.tril(np.ones((4, 4), bool), -1) if lower else np.triu(np.ones((4, 4), bool), 1)
    want = np.where(read, a, np.conj(np.swapaxes(a, -1, -2)))
    want[..., range(4), range(4)] = np.real(a[..., range(4), range(4)])
    got = rb.hermitian_from_triangle(a, lower)
    assert got.dtype == a.dtype and np.array_equal(got, want)
    # what SciPy's cholesky of the same matrix factorises, whichever triangle holds junk
    import scipy.linalg

    np.testing.assert_allclose(scipy.linalg.cholesky(got[0] + 5 * np.eye(4), lower=lower),
                               scipy.linalg.cholesky(a[0] + 5 * np.eye(4), lower=lower),
                               rtol=1e-13)

"""Complex linear algebra in batches and with UPLO (autograd's test_svd_wide_3d_complex and its
neighbours): the keys are in the matrix's complex column, checked on their gauge-invariant
outputs, so a user's gauge-invariant program gets a verified rule, and its gradient is central
differences' of NumPy's own program."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.keys import normalise

rng = np.random.default_rng(25)


def _complex(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hermitian(n):
    a = _complex(n, n)
    return a @ a.conj().T + n * np.eye(n) + np.diag(np.arange(1.0, n + 1.0))


def _svd_abs(x):  # autograd's test_svd_wide_3d_complex, summed with weights
    u, s, v = np.linalg.svd(x, full_matrices=False)
    return np.sum(np.abs(u) * 0.3) + np.sum(s ** 2) + np.sum(np.abs(v) ** 2 * 0.7)


def _eigh_upper(x):
    w, v = np.linalg.eigh(x, UPLO="U")
    return np.sum(w * np.arange(1.0, 4.0)) + np.sum(np.abs(v[0]) ** 2 * np.arange(3.0))


def _eigh_batched(x):
    w, v = np.linalg.eigh(x)
    return np.sum(np.sin(w))


def _eig_batched(x):
    w, _ = np.linalg.eig(x)
    return np.sum(np.abs(w) ** 2)


def _spectrum(*shape):
    n = shape[-1]
    basis = np.eye(n) + 0.2 * _complex(*shape)
    return basis @ np.diag(np.arange(1.0, n + 1.0)) @ np.linalg.inv(basis)


PROGRAMS = [
    ("svd wide 3-d", _svd_abs, np.linalg.svd, _complex(4, 3, 5), {"full_matrices": False}),
    ("eigh UPLO=U", _eigh_upper, np.linalg.eigh, _hermitian(3), {"UPLO": "U"}),
    ("eigh batched", _eigh_batched, np.linalg.eigh, np.stack([_hermitian(3), _hermitian(3)]),
     {}),
    ("eig batched", _eig_batched, np.linalg.eig, _spectrum(2, 3, 3), {}),
]


@pytest.mark.parametrize("name, loss, function, x, kwargs", PROGRAMS,
                         ids=[p[0] for p in PROGRAMS])
def test_the_key_ships_verified_and_the_gradient_is_numpys(name, loss, function, x, kwargs):
    args, _, config = normalise(function, (x,), kwargs)
    shipped = {}
    for source in ("autograd", "jax"):
        try:
            rule = rb.REGISTRY.lookup(function, rb.signature_of(args), source, config)
        except rb.NoRuleError:
            continue
        shipped[source] = getattr(rule, "status", None)
    assert "pass" in shipped.values(), (rb.key_of(function, x, **kwargs), shipped)
    for source, status in shipped.items():
        if status == "pass":
            assert rb.check_grads(loss, x, source=source) < 1e-6


def test_a_zero_d_case_of_the_complex_column_is_an_array_its_check_differentiates():
    """0-d arithmetic gave a NumPy scalar, which a check does not differentiate by default:
    np.atleast_1d's complex cell was "no gradient", checked in nothing."""
    from rulebridge.checking.catalogue import cases_for
    from rulebridge.checking.check import check_call
    from rulebridge.checking.matrix import example_call

    args, kwargs = example_call(cases_for("numpy.atleast_1d")[0], "complex128", "0-d")
    assert type(args[0]) is np.ndarray and args[0].shape == () and args[0].dtype.kind == "c"
    result = check_call(np.atleast_1d, args, kwargs, source="autograd")
    assert result.status == "pass" and result.max_rel_error is not None

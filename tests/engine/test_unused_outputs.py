"""Outputs a program never uses carry no cotangent into a rule: at repeated eigenvalues and
singular values, where eigh's and svd's eigenvector terms divide by zero, a program of the
eigenvalues alone has a finite gradient, and rulebridge gives it from every source (or raises,
never NaN). References: jax.grad of the same program in jax.numpy, and central differences of
NumPy's own functions."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import central_difference

SOURCES = [s for s in ("autograd", "jax") if s in rb.adapters()]


def _symmetric(xp, a):
    # The symmetric matrix eigh reads (its lower triangle), spelled in the program itself so
    # that jnp's eigh, which symmetrises, differentiates the same function as NumPy's.
    return xp.tril(a) + xp.swapaxes(xp.tril(a, -1), -1, -2)


def eigenvalues_only(xp, a):
    w, _ = xp.linalg.eigh(_symmetric(xp, a))
    return xp.sum(w ** 2) + xp.sum(w)


def eigenvalues_via_result(xp, a):
    return xp.sum(xp.linalg.eigh(_symmetric(xp, a)).eigenvalues ** 3)


def singular_values_only(xp, a):
    _, s, _ = xp.linalg.svd(a, full_matrices=False)
    return xp.sum(s ** 2) + xp.sum(s)


def singular_values_of_a_square(xp, a):
    return xp.sum(xp.linalg.svd(a @ a, full_matrices=False)[1])


def log_determinant_only(xp, a):
    return xp.linalg.slogdet(a)[1] * 2.0


PROGRAMS = [
    (eigenvalues_only, 2 * np.eye(3)),
    (eigenvalues_only, np.diag([1.0, 1.0, 3.0])),
    (eigenvalues_via_result, 2 * np.eye(4)),
    (singular_values_only, np.eye(3)),
    (singular_values_only, np.eye(4)[:, :3] * 2.0),
    (singular_values_of_a_square, np.eye(3)),
    (log_determinant_only, 2 * np.eye(3)),
]


def jax_grad(program, a):
    with jax.enable_x64(True):
        return np.asarray(jax.grad(functools.partial(program, jnp))(jnp.asarray(a)))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("program, a", PROGRAMS,
                         ids=[f"{p.__name__}-{i}" for i, (p, _) in enumerate(PROGRAMS)])
def test_a_program_of_some_outputs_has_jax_s_gradient(source, program, a):
    expected = jax_grad(program, a)
    assert np.all(np.isfinite(expected))
    np.testing.assert_allclose(expected, central_difference(functools.partial(program, np), (a,)),
                               rtol=1e-5, atol=1e-6)
    try:
        got = rb.grad(functools.partial(program, np), source=source)(a.copy())
    except rb.RulebridgeError:
        return  # refusing is allowed; a NaN or a wrong number is not
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def _eigenvectors_only(a):
    return np.sum(np.linalg.eigh(a)[1] * np.arange(9.0).reshape(3, 3))


def _left_singular_vectors_only(a):
    return np.sum(np.linalg.svd(a, full_matrices=False)[0] * np.arange(9.0).reshape(3, 3))


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("program, name", [(_eigenvectors_only, "eigh"),
                                           (_left_singular_vectors_only, "svd")])
def test_vectors_without_a_derivative_raise_instead_of_nan(source, program, name):
    # At 2 * I and I the eigenvectors and singular vectors have no derivative (jax.grad of the
    # same program is NaN): the call raises, naming the rule, rather than return NaN.
    with pytest.raises(rb.RuleContractError, match=rf"{source}.*numpy\.linalg\.{name}.*finite"):
        rb.grad(program, source=source)(2 * np.eye(3) if name == "eigh" else np.eye(3))

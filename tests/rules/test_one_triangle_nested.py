"""Second derivatives of the functions that read one triangle of a matrix (cholesky, eigh),
whose cotangent conversion (rules/triangles.py: the matrix read from the triangle, and
`lower_triangle_cotangent`) converted or wrote into the enclosing level's boxes: under nesting
it is built functionally and recorded. NumPy's semantics hold at every order: the Hessian is
the one of the function of the triangle alone, tangents in every entry. Reference: jax.hessian
of the same program on the Hermitian matrix built from that triangle in jax.numpy.
Found by autograd's order-2 check_grads (its test_linalg eigh and cholesky tests) under the
drop-in swap. With source="jax", JAX's pullback at the matrix NumPy reads is one op of the
rule the JAX adapter offers for it, between the conversions (NumPy code, recorded)."""

from __future__ import annotations

import numpy as np
import pytest

import rulebridge as rb

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(3)
N = 3
_M = RNG.standard_normal((N, N))
# not symmetric: the triangle NumPy ignores carries other values
A = _M @ _M.T + N * np.eye(N) + 0.3 * RNG.standard_normal((N, N))
_C = RNG.standard_normal((N, N)) + 1j * RNG.standard_normal((N, N))
C = _C @ np.conj(_C.T) + N * np.eye(N) + 0.2 * (RNG.standard_normal((N, N)) + 1j)


def _read(n, m, lower):
    strict = n.tril(m, -1) if lower else n.triu(m, 1)
    return strict + n.conj(n.swapaxes(strict, -1, -2)) + n.real(n.tril(n.triu(m)))


PROGRAMS = {
    "cholesky": (lambda n, m: n.sum(n.linalg.cholesky(m) ** 3), True, {}),
    "eigh values": (lambda n, m: n.sum(n.linalg.eigh(m)[0] ** 3), True, {}),
    "eigvalsh": (lambda n, m: n.sum(n.linalg.eigvalsh(m) ** 3), True, {}),
    "eigh values, UPLO='U'": (lambda n, m: n.sum(n.linalg.eigh(m, UPLO="U")[0] ** 3), False,
                              {"UPLO": "U"}),
}


def _reference(name, m):
    program, lower, _ = PROGRAMS[name]
    with jax.enable_x64(True):
        # JAX's eigh reads the lower triangle: hand it the matrix NumPy reads
        return np.asarray(jax.hessian(lambda m: program(jnp, _read(jnp, m, lower)))(
            jnp.asarray(m)))


@pytest.mark.parametrize("name, source", [
    (name, source) for name in PROGRAMS for source in ("autograd", "jax", None)
    if not (name == "eigvalsh" and source == "autograd")])  # autograd has no eigvalsh rule
def test_hessian_of_a_one_triangle_reader(name, source):
    program = PROGRAMS[name][0]
    got = rb.hessian(lambda m: program(np, m), source=source)(A)
    np.testing.assert_allclose(got, _reference(name, A), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("source", ["autograd", "jax", None])
def test_hessian_of_eigenvalues_of_a_complex_hermitian_matrix(source):
    """A real function of a complex matrix: the Hessian in the real and imaginary parts, read
    as rulebridge's complex convention, against JAX's of the same real function."""
    def f(m):
        return np.sum(np.linalg.eigh(m)[0] ** 3)

    got_grad = rb.grad(lambda m: np.sum(np.real(rb.grad(f, source=source)(m) * np.conj(C))),
                       source=source)(C)
    with jax.enable_x64(True):
        def jf(m):
            return jnp.sum(jnp.linalg.eigh(_read(jnp, m, True))[0] ** 3)

        want = jax.grad(lambda m: jnp.sum(jnp.real(jax.grad(jf)(m) * jnp.conj(C))))(
            jnp.asarray(C))
    np.testing.assert_allclose(got_grad, np.asarray(want), rtol=1e-9, atol=1e-10)


def test_lower_triangle_cotangent_of_a_box_equals_the_plain_one():
    """The functional form (for boxes) gives the plain form's numbers."""
    g = RNG.standard_normal((2, N, N)) + 1j * RNG.standard_normal((2, N, N))
    for lower in (True, False):
        plain = rb.lower_triangle_cotangent(g, lower)
        traced = rb.vjp(lambda x: rb.lower_triangle_cotangent(x, lower), g)[0]
        np.testing.assert_array_equal(traced, plain)


@pytest.mark.parametrize("source", ["autograd", None])
def test_second_order_of_phase_invariant_complex_eigenvectors(source):
    """`|V|^2` of a complex Hermitian matrix's eigenvectors under nesting: the phase refusal's
    test of the cotangent (rules/phases.py) read the enclosing level's box as an array and
    raised TracingError (autograd's test_eigvalh_lower_complex, order 2). Reference: JAX's
    grad of grad of the same program on the matrix NumPy reads."""
    weights = RNG.standard_normal((N, N))

    def f(m):
        return np.sum(np.abs(np.linalg.eigh(m)[1]) ** 2 * weights)

    got = rb.grad(lambda m: np.sum(np.real(rb.grad(f, source=source)(m) * np.conj(C))),
                  source=source)(C)
    with jax.enable_x64(True):
        def jf(m):
            return jnp.sum(jnp.abs(jnp.linalg.eigh(_read(jnp, m, True))[1]) ** 2 * weights)

        want = jax.grad(lambda m: jnp.sum(jnp.real(jax.grad(jf)(m) * jnp.conj(C))))(
            jnp.asarray(C))
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-7, atol=1e-9)


def test_second_order_of_complex_eigenvectors_with_jax_is_refused_not_wrong():
    """JAX's pullback of complex eigenvectors, as a function of the matrix and a cotangent in
    every direction, depends on LAPACK's phases, which JAX's own derivative of it does not
    follow: its check against central differences fails, so the JAX rule for the pullback is
    not used, and with the source named that is a clear refusal (source=None uses autograd's)."""
    weights = RNG.standard_normal((N, N))

    def f(m):
        return np.sum(np.abs(np.linalg.eigh(m)[1]) ** 2 * weights)

    with pytest.raises(rb.NestedDifferentiationError) as info:
        rb.grad(lambda m: np.sum(np.real(rb.grad(f, source="jax")(m) * np.conj(C))),
                source="jax")(C)
    message = str(info.value)
    assert "numpy.linalg.eigh(complex128[:, :]) cannot be differentiated twice" in message
    assert "not verified here: fail" in message and "source='autograd'" in message

"""Catalogue table: products, linear algebra and FFTs.

Decompositions are checked where they are smooth: SPD matrices with distinct eigenvalues for
`eigh` and `cholesky` (with tangents in every entry: they read one triangle, named by `UPLO`,
`upper` or `hermitian`, and a rule must give zero on the other), matrices with distinct real
eigenvalues for `eig`, well-conditioned ones for `solve`, `inv`, `det`. Eigenvectors and singular vectors are defined only up to a sign or a
phase NumPy picks freely: in the complex column only the gauge-invariant outputs (eigenvalues,
singular values) receive a cotangent (`complex_outputs`), and every case that names them is
checked there too (batched, `UPLO`), not only the first.
"""

from __future__ import annotations

from .cases import MATRIX, SCALAR, VECTOR, case, of
from .domains import DISTINCT, NONZERO, REAL, SPD, SPECTRUM, WELL_CONDITIONED, Arr, Seq

M, V = Arr(REAL, MATRIX), Arr(REAL, VECTOR)
TALL = Arr(REAL, (5, 3))
SQUARE = Arr(WELL_CONDITIONED, (4, 4))
POSDEF = Arr(SPD, (4, 4))
BATCH = Arr(WELL_CONDITIONED, (2, 3, 3))


def _products():
    return of(case(Arr(REAL, (3, 4)), Arr(REAL, (4, 2))), case(V, V),
              case(Arr(REAL, (3, 5)), V), case(Arr(REAL, (2, 3, 4)), Arr(REAL, (2, 4, 2))))


def _fft():
    return of(case(V), case(M), case(M, axis=0), case(M, n=6), case(M, norm="ortho"))


def _fft2():
    return of(case(M), case(Arr(REAL, (2, 3, 4))), case(M, norm="ortho"))


def _shift():
    return of(case(V), case(M), case(M, axes=0))


CASES = {
    "numpy.matmul": _products(),
    "numpy.dot": _products()[:3] + of(case(Arr(REAL, SCALAR), M)),
    "numpy.vdot": of(case(V, V), case(M, M)),
    "numpy.inner": of(case(V, V), case(M, Arr(REAL, (2, 4)))),
    "numpy.outer": of(case(V, Arr(REAL, (3,))), case(M, V)),
    "numpy.kron": of(case(Arr(REAL, (2, 3)), Arr(REAL, (2, 2))), case(V, Arr(REAL, (3,)))),
    "numpy.cross": of(case(Arr(REAL, (3,)), Arr(REAL, (3,))),
                      case(Arr(REAL, (4, 3)), Arr(REAL, (4, 3)))),
    "numpy.tensordot": of(case(Arr(REAL, (3, 4)), Arr(REAL, (4, 2)), 1),
                          case(Arr(REAL, (2, 3, 4)), Arr(REAL, (3, 4, 2)), 2),
                          case(M, Arr(REAL, (4, 3)), ([0, 1], [1, 0]))),
    "numpy.einsum": of(case("ij,jk->ik", Arr(REAL, (3, 4)), Arr(REAL, (4, 2))),
                       case("ii->", Arr(REAL, (4, 4))), case("ij->j", M),
                       case("bij,bjk->bik", Arr(REAL, (2, 3, 4)), Arr(REAL, (2, 4, 2))),
                       case("ii,i->", Arr(REAL, (4, 4)), Arr(REAL, (4,)))),
    "numpy.trace": of(case(Arr(REAL, (4, 4))), case(M, 1)),
    "numpy.vecdot": of(case(M, M), case(V, V)),
    "numpy.matvec": of(case(Arr(REAL, (3, 4)), Arr(REAL, (4,)))),
    "numpy.vecmat": of(case(Arr(REAL, (3,)), Arr(REAL, (3, 4)))),
    "numpy.convolve": of(case(V, Arr(REAL, (3,))), case(V, Arr(REAL, (3,)), "same")),
    "numpy.correlate": of(case(V, Arr(REAL, (3,))), case(V, Arr(REAL, (3,)), "full")),
    "numpy.polyval": of(case(Arr(REAL, (4,)), V)),
    "numpy.poly": of(case(V)),
    "numpy.polyadd": of(case(V, Arr(REAL, (3,)))),
    "numpy.polysub": of(case(V, Arr(REAL, (3,)))),
    "numpy.polymul": of(case(V, Arr(REAL, (3,)))),
    "numpy.polydiv": of(case(V, Arr(NONZERO, (3,)))),
    "numpy.polyder": of(case(V), case(V, 2)),
    "numpy.polyint": of(case(V), case(V, 2)),
    "numpy.polyfit": of(case(Arr(DISTINCT, (6,)), Arr(REAL, (6,)), 2)),
    "numpy.vander": of(case(V), case(V, 3)),
    "numpy.cov": of(case(M)),
    "numpy.corrcoef": of(case(M)),
    "numpy.linalg.matmul": of(case(Arr(REAL, (3, 4)), Arr(REAL, (4, 2)))),
    "numpy.linalg.outer": of(case(V, Arr(REAL, (3,)))),
    "numpy.linalg.tensordot": of(case(Arr(REAL, (3, 4)), Arr(REAL, (4, 2)), 1)),
    "numpy.linalg.vecdot": of(case(M, M)),
    "numpy.linalg.cross": of(case(Arr(REAL, (4, 3)), Arr(REAL, (4, 3)))),
    "numpy.linalg.matrix_transpose": of(case(M)),
    "numpy.linalg.diagonal": of(case(Arr(REAL, (4, 4)))),
    "numpy.linalg.trace": of(case(Arr(REAL, (4, 4)))),
    "numpy.linalg.multi_dot": of(case(Seq((Arr(REAL, (3, 4)), Arr(REAL, (4, 2)))))),
    "numpy.linalg.inv": of(case(SQUARE), case(BATCH)),
    "numpy.linalg.pinv": of(case(TALL), case(Arr(REAL, (3, 5))), case(POSDEF, hermitian=True)),
    "numpy.linalg.det": of(case(SQUARE), case(BATCH)),
    "numpy.linalg.slogdet": of(case(SQUARE), case(BATCH)),
    "numpy.linalg.solve": of(case(SQUARE, Arr(REAL, (4,))), case(SQUARE, Arr(REAL, (4, 2))),
                             case(BATCH, Arr(REAL, (2, 3, 2))), case(BATCH, Arr(REAL, (3,)))),
    "numpy.linalg.lstsq": of(case(TALL, Arr(REAL, (5,)), rcond=None, outputs=(0,))),
    "numpy.linalg.cholesky": of(case(POSDEF), case(Arr(SPD, (2, 3, 3))),
                                case(POSDEF, upper=True)),
    "numpy.linalg.qr": of(case(TALL), case(Arr(WELL_CONDITIONED, (4, 4)))),
    "numpy.linalg.eigh": of(case(POSDEF, complex_outputs=(0,)),
                            case(Arr(SPD, (2, 3, 3)), complex_outputs=(0,)),
                            case(Arr(SPD, (3, 3)), UPLO="U", complex_outputs=(0,))),
    "numpy.linalg.eigvalsh": of(case(POSDEF), case(POSDEF, UPLO="U")),
    "numpy.linalg.eig": of(case(Arr(SPECTRUM, (4, 4)), complex_outputs=(0,)),
                           case(Arr(SPECTRUM, (2, 3, 3)), complex_outputs=(0,))),
    "numpy.linalg.eigvals": of(case(Arr(SPECTRUM, (4, 4)))),
    "numpy.linalg.svd": of(case(TALL, full_matrices=False, complex_outputs=(1,)),
                           case(SQUARE, complex_outputs=(1,)), case(TALL, outputs=(1,)),
                           case(TALL, compute_uv=False),
                           case(Arr(REAL, (3, 5)), full_matrices=False, complex_outputs=(1,)),
                           case(Arr(REAL, (2, 3, 5)), full_matrices=False, complex_outputs=(1,))),
    "numpy.linalg.svdvals": of(case(TALL)),
    "numpy.linalg.norm": of(case(V), case(M), case(M, axis=1), case(V, 1), case(Arr(DISTINCT,
                            VECTOR), float("inf")), case(M, "fro"), case(TALL, "nuc"),
                            case(TALL, 2), case(Arr(NONZERO, MATRIX), 1, axis=0)),
    "numpy.linalg.vector_norm": of(case(V), case(M, axis=1), case(Arr(NONZERO, VECTOR), ord=1)),
    "numpy.linalg.matrix_norm": of(case(M), case(TALL, ord="nuc")),
    "numpy.linalg.matrix_power": of(case(SQUARE, 3), case(SQUARE, -2)),
    "numpy.linalg.tensorsolve": of(case(Arr(WELL_CONDITIONED, (4, 4)), Arr(REAL, (4,)))),
    "numpy.linalg.tensorinv": of(case(Arr(WELL_CONDITIONED, (4, 4)), 1)),
    "numpy.linalg.cond": of(case(SQUARE)),
    "numpy.linalg.matrix_rank": of(case(SQUARE)),
    "numpy.fft.fft": _fft(), "numpy.fft.ifft": _fft(), "numpy.fft.rfft": _fft(),
    "numpy.fft.irfft": _fft(), "numpy.fft.hfft": _fft(), "numpy.fft.ihfft": _fft(),
    "numpy.fft.fft2": _fft2(), "numpy.fft.ifft2": _fft2(), "numpy.fft.rfft2": _fft2(),
    "numpy.fft.irfft2": _fft2(), "numpy.fft.fftn": _fft2(), "numpy.fft.ifftn": _fft2(),
    "numpy.fft.rfftn": _fft2(), "numpy.fft.irfftn": _fft2(),
    "numpy.fft.fftshift": _shift(), "numpy.fft.ifftshift": _shift(),
}

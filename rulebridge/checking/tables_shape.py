"""Catalogue table: shape, indexing and joining functions (linear in their array arguments, so
any real inputs will do; what is checked is that the rule moves cotangents where NumPy moves
values)."""

from __future__ import annotations

import numpy as np

from .cases import MATRIX, SCALAR, VECTOR, case, of
from .domains import REAL, Arr, Bools, Const, Seq

M, V = Arr(REAL, MATRIX), Arr(REAL, VECTOR)
CUBE = Arr(REAL, (2, 3, 4))
SQUARE = Arr(REAL, (4, 4))


def _stacked():
    return of(case(Seq((M, M))), case(Seq((V, V, V))))


def _split(*extra):
    return of(case(Arr(REAL, (4, 6)), *extra), case(Arr(REAL, (4, 6)), *extra, axis=1))


CASES = {
    "numpy.reshape": of(case(M, (4, 3)), case(M, (-1,)), case(V, (5, 1))),
    "numpy.ravel": of(case(M), case(CUBE)),
    "numpy.squeeze": of(case(Arr(REAL, (3, 1, 4))), case(Arr(REAL, (3, 1, 4)), axis=1)),
    "numpy.expand_dims": of(case(M, 1), case(V, 0)),
    "numpy.transpose": of(case(M), case(CUBE, (1, 2, 0))),
    "numpy.permute_dims": of(case(M), case(CUBE, (1, 2, 0))),
    "numpy.matrix_transpose": of(case(M), case(CUBE)),
    "numpy.swapaxes": of(case(M, 0, 1), case(CUBE, 0, 2)),
    "numpy.moveaxis": of(case(CUBE, 0, -1), case(M, 1, 0)),
    "numpy.rollaxis": of(case(CUBE, 2), case(M, 1)),
    "numpy.atleast_1d": of(case(Arr(REAL, SCALAR)), case(V)),
    "numpy.atleast_2d": of(case(V), case(M)),
    "numpy.atleast_3d": of(case(V), case(M)),
    "numpy.broadcast_to": of(case(V, (3, 5)), case(Arr(REAL, (3, 1)), (3, 4))),
    "numpy.tile": of(case(M, (2, 1)), case(V, 3)),
    "numpy.repeat": of(case(M, 2, axis=0), case(V, 2)),
    "numpy.roll": of(case(M, 1, axis=0), case(V, 2), case(M, 3)),
    "numpy.rot90": of(case(M), case(M, 3)),
    "numpy.flip": of(case(M), case(M, axis=1)),
    "numpy.fliplr": of(case(M)),
    "numpy.flipud": of(case(M)),
    "numpy.diag": of(case(V), case(Arr(REAL, (4, 4))), case(V, 1)),
    "numpy.diagflat": of(case(V)),
    "numpy.diagonal": of(case(SQUARE), case(M, 1), case(CUBE, 0, 1, 2)),
    "numpy.tril": of(case(SQUARE), case(M, -1)),
    "numpy.triu": of(case(SQUARE), case(M, 1)),
    "numpy.pad": of(case(M, 1), case(V, (2, 1)), case(M, 1, mode="reflect")),
    "numpy.concatenate": of(case(Seq((M, Arr(REAL, (2, 4))))), case(Seq((M, M)), axis=1),
                            case(Seq((V, V)))),
    "numpy.concat": of(case(Seq((M, Arr(REAL, (2, 4))))), case(Seq((M, M)), axis=1)),
    "numpy.stack": of(case(Seq((M, M))), case(Seq((V, V, V)), axis=1)),
    "numpy.hstack": _stacked(),
    "numpy.vstack": _stacked(),
    # linear in start and stop (autograd's test_linspace); num=0 has no output to check
    "numpy.linspace": of(case(Arr(REAL, SCALAR), Arr(REAL, SCALAR), 5),
                         case(Arr(REAL, SCALAR), Arr(REAL, SCALAR), 1), case(V, V, 4),
                         case(Arr(REAL, SCALAR), Arr(REAL, SCALAR), 5, endpoint=False)),
    "numpy.dstack": _stacked(),
    "numpy.column_stack": of(case(Seq((V, V))), case(Seq((M, M)))),
    "numpy.row_stack": _stacked(),
    "numpy.block": of(case(Seq((M, M)))),
    "numpy.append": of(case(M, M), case(M, M, axis=0), case(V, V)),
    "numpy.split": _split(2),
    "numpy.array_split": _split(3),
    "numpy.hsplit": of(case(Arr(REAL, (4, 6)), 2)),
    "numpy.vsplit": of(case(Arr(REAL, (4, 6)), 2)),
    "numpy.dsplit": of(case(Arr(REAL, (2, 3, 4)), 2)),
    "numpy.take": of(case(M, Const([0, 2, 5])), case(M, Const([2, 0]), axis=1)),
    "numpy.take_along_axis": of(case(M, Const([[0, 2], [1, 1], [3, 0]]), axis=1),
                                case(V, Const([4, 0, 0]), axis=0)),
    "numpy.compress": of(case(Const([True, False, True]), M, axis=0)),
    "numpy.extract": of(case(Bools(MATRIX), M)),
    "numpy.select": of(case(Seq((Bools(MATRIX), Bools(MATRIX))), Seq((M, M)))),
    "numpy.choose": of(case(Const([0, 1, 1, 0]), Seq((Arr(REAL, (4,)), Arr(REAL, (4,)))))),
    "numpy.trim_zeros": of(case(V)),
    "numpy.broadcast_arrays": of(case(Arr(REAL, (3, 1)), Arr(REAL, (4,)))),
    "numpy.unstack": of(case(M), case(M, axis=1)),
    "numpy.delete": of(case(M, 1, axis=0), case(V, Const([0, 3]))),
    "numpy.insert": of(case(V, 2, Arr(REAL, SCALAR)), case(M, 1, Arr(REAL, (4,)), axis=0)),
    "numpy.resize": of(case(M, (2, 6))),
    "numpy.astype": of(case(M, "float64"), case(V, "complex128")),
    "numpy.ndim": of(case(M)),
    "numpy.shape": of(case(M)),
    "numpy.size": of(case(M)),
    "numpy.result_type": of(case(M)),
    "numpy.isin": of(case(M, Const([0.0, 1.0]))),
    "numpy.unique": of(case(Const([1.0, 2.0, 1.0]))),
    "operator.getitem": of(case(M, (1, slice(None))), case(M, (slice(0, 2), slice(1, None))),
                           case(M, Const([2, 0, 0])), case(V, 3),
                           case(M, (np.array([0, 2]), np.array([1, 3])))),
}

"""Which allocations a trace follows (rulebridge/writes/proof.py): only a lookup the bytecode
proves to be the differentiated code's own `np.zeros(...)` call gets a box. A lookup made by
C code while the user's frame is calling it (operator.methodcaller stands in for numpy.random's
Cython here), a lookup whose value is passed on or kept, and `getattr` all get NumPy's own
function, so a plain ndarray; a traced value written into one is refused, never lost. (Compiled
callers themselves, which killed the process before, are tested in a subprocess:
tests/engine/test_compiled_callers.py.)"""

import operator
import pickle

import numpy as np
import pytest

import rulebridge as rb
from rulebridge import TracingError

from tests.support.numerical import central_difference

NUMPY_ZEROS, NUMPY_SUM = np.zeros, np.sum
X = np.array([0.3, 1.2, -0.7])


def _plain_and_refused(allocate):
    seen = {}

    def f(x):
        buf = allocate(x)
        seen["type"] = type(buf)
        buf[0] = x[0]
        return np.sum(buf)

    with pytest.raises((TracingError, ValueError)) as raised:
        rb.grad(f)(X.copy())
    # NumPy reports "setting an array element with a sequence" when the box refuses float()
    assert isinstance(raised.value, TracingError) or "sequence" in str(raised.value)
    assert seen["type"] is np.ndarray


@pytest.mark.parametrize("allocate", [
    lambda x: operator.methodcaller("zeros", 3)(np),  # the lookup is made by C code
    lambda x: operator.attrgetter("zeros")(np)(3),
    lambda x: getattr(np, "zeros")(3),
    lambda x: (lambda z: z(3))(np.zeros),  # the function passed on, then called
    lambda x: [np.zeros][0](3),
    lambda x: np.zeros(3 if len(x) else 4),  # argument code with a jump: not followed
], ids=["methodcaller", "attrgetter", "getattr", "passed_on", "subscripted", "conditional"])
def test_unproven_lookups_get_plain_arrays(allocate):
    _plain_and_refused(allocate)


def test_what_the_differentiated_code_sees_of_numpy_is_numpys():
    seen = {}

    def f(x):
        seen["zeros"], seen["sum"] = np.zeros, np.sum
        seen["pickled"] = pickle.loads(pickle.dumps(np.sum))
        seen["vars"] = vars(np)["zeros"]
        return np.sum(x * x)

    np.testing.assert_allclose(rb.grad(f)(X.copy()), 2 * X)
    assert seen["zeros"] is NUMPY_ZEROS and seen["sum"] is NUMPY_SUM
    assert seen["pickled"] is NUMPY_SUM and seen["vars"] is NUMPY_ZEROS


@pytest.mark.parametrize("allocate", [
    lambda x: np.zeros(*np.shape(x)),
    lambda x: np.zeros(**{"shape": len(x)}),
    lambda x: np.zeros((len(x),), dtype=np.result_type(x)),
    lambda x: __import__("numpy").zeros(len(x)),
], ids=["star_args", "star_kwargs", "keywords", "other_base"])
def test_calls_spelled_otherwise_are_followed_or_refused(allocate):
    def f(x):
        buf = allocate(x)
        buf[:] = np.sin(x)
        return np.sum(buf * x)

    try:
        got = rb.grad(f)(X.copy())
    except (TracingError, ValueError) as error:  # unproven: a plain buffer, refused
        assert isinstance(error, TracingError) or "sequence" in str(error)
        return
    np.testing.assert_allclose(got, central_difference(f, (X,), 0, 1e-6), rtol=1e-6)


def test_a_local_alias_of_numpy_is_followed():
    def f(x):
        import numpy as onp
        buf = onp.zeros(len(x))
        buf[:] = onp.sin(x)
        return onp.sum(buf * x)

    np.testing.assert_allclose(rb.grad(f)(X.copy()), np.sin(X) + X * np.cos(X), rtol=1e-12)

"""The benchmarks' "autograd rules alone" floor runs the rules a gradient needs: its steps, swept
once with accumulated cotangents, give autograd's own gradient. (Its timing is in
benchmarks/suite.py and benchmarks/overhead.py, not here.)"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

from benchmarks.rules_floor import RulesFloor, available

pytestmark = pytest.mark.skipif(not available(), reason="the autograd adapter is not installed")


def index_loop(xp, x):
    s = 0.0
    for n in range(x.shape[0]):
        s = s + xp.sin(x[n]) * x[n]
    return s


def broadcast_binary(xp, a, b):
    return xp.sum(xp.tanh(a * b) / (b + 2.0))  # (3, 4) with (4,)


def log_determinant(xp, a):
    sign, logdet = xp.linalg.slogdet(a @ a.T + xp.eye(3))
    return sign * logdet


def composite_and_argnums(xp, x, y):
    """np.where runs through autograd's tracer (a composite); concatenate and einsum have
    makers registered without `defvjp`."""
    joined = xp.concatenate([x, y])
    return xp.sum(xp.where(x > 0, xp.sin(x), y)) + xp.sum(joined) + xp.einsum("i,i->", x, y)


def random_args(rng):
    return {
        index_loop: (rng.standard_normal(6),),
        broadcast_binary: (rng.standard_normal((3, 4)), rng.standard_normal(4)),
        log_determinant: (rng.standard_normal((3, 3)),),
        composite_and_argnums: (rng.standard_normal(5), rng.standard_normal(5)),
    }


@pytest.mark.parametrize("program", [index_loop, broadcast_binary, log_determinant,
                                     composite_and_argnums],
                         ids=lambda p: p.__name__)
def test_floor_sweep_is_autograds_gradient(program):
    args = random_args(np.random.default_rng(7))[program]
    floor = RulesFloor(lambda *a: program(np, *a), *args)
    assert floor.left_out == []
    floor.run()  # the timed path runs on these steps without error
    expected = autograd.grad(lambda a: program(anp, *a))(args)
    got = floor.gradient()
    assert len(got) == len(args)
    for g, e, a in zip(got, expected, args):
        assert g.shape == np.shape(a)
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


def test_index_reads_are_made_sparse_and_stay_sparse():
    from autograd.core import SparseObject

    floor = RulesFloor(lambda x: index_loop(np, x), np.linspace(0.1, 0.6, 6))
    reads = [s for s in floor.steps if s.name == "operator.getitem"]
    assert len(reads) == 12  # x[n] twice per iteration
    make, many = reads[0].vjps[0]
    assert not many
    assert type(make()(reads[0].cotangent)) is SparseObject


def test_a_mutating_program_lists_the_engine_ops_it_leaves_out():
    def fill(x):
        out = np.zeros_like(x)
        for i in range(x.shape[0]):
            out[i] = np.sin(x[i])
        return np.sum(out)

    floor = RulesFloor(fill, np.linspace(0.1, 0.4, 4))
    assert any("setitem" in name for name in floor.left_out)
    assert "lower bound" in floor.describe()
    with pytest.raises(ValueError, match="leaves out"):
        floor.gradient()

"""rulebridge.tree against jax.tree_util's conventions, and rulebridge.flatten against
autograd.misc.flatten."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest
from autograd.misc import flatten as autograd_flatten
from jax import tree_util

import rulebridge as rb
from rulebridge.tree import tree_flatten, tree_map

Layer = namedtuple("Layer", "W b")

TREES = [
    {"b": [1.0, (2.0, None)], "a": Layer(3.0, 4.0), "c": {"y": 5.0, "x": 6.0}},
    [(1.0, 2.0), [3.0, [4.0, {"k": 5.0}]], ()],
    OrderedDict([("z", 1.0), ("a", 2.0)]),
    (None, [None, 7.0]),
    8.0,
]


@pytest.mark.parametrize("tree", TREES)
def test_leaves_in_jax_order_and_round_trip(tree):
    leaves, structure = tree_flatten(tree)
    assert leaves == tree_util.tree_leaves(tree)
    rebuilt = structure.unflatten(leaves)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert tree_map(lambda v: v * 2, tree) == tree_util.tree_map(lambda v: v * 2, tree)


def test_paths_index_the_way_python_does():
    params = {"layers": [{"W": 1.0, "n": 3}, Layer(2.0, 5.0)], "scale": 4.0}
    leaves, structure = tree_flatten(params)
    paths = structure.paths("params")
    assert paths == ["params['layers'][0]['W']", "params['layers'][0]['n']",
                     "params['layers'][1].W", "params['layers'][1].b", "params['scale']"]
    for path, leaf in zip(paths, leaves):
        assert eval(path, {"params": params}) == leaf


def test_registered_container_round_trips_and_is_differentiated():
    class Affine:
        def __init__(self, W, b, name):
            self.W, self.b, self.name = W, b, name

    rb.register_container(Affine, lambda a: ((a.W, a.b), a.name),
                          lambda name, children: Affine(*children, name))
    model = Affine(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -0.5]), "first")
    x = np.array([0.3, -0.2])
    g = rb.grad(lambda m: np.sum(np.tanh(m.W @ x + m.b)))(model)
    assert type(g) is Affine and g.name == "first"
    s = 1 - np.tanh(model.W @ x + model.b) ** 2
    np.testing.assert_allclose(g.W, np.outer(s, x), rtol=1e-12)
    np.testing.assert_allclose(g.b, s, rtol=1e-12)


def test_flatten_matches_autograd_and_unflatten_restores_types():
    tree = {"W": np.arange(6.0).reshape(2, 3), "b": [np.float32(1.5), 2.5],
            "s": np.ones((2,), np.float32), "z": np.array(3.0)}
    vector, unflatten = rb.flatten(tree)
    reference, _ = autograd_flatten(tree)
    assert vector.dtype == np.float64 and vector.ndim == 1
    np.testing.assert_array_equal(vector, reference)
    assert not np.shares_memory(vector, tree["W"])
    back = unflatten(vector + 1.0)
    np.testing.assert_array_equal(back["W"], tree["W"] + 1.0)
    assert type(back["b"][0]) is np.float32 and back["b"][0] == np.float32(2.5)
    assert type(back["b"][1]) is float and back["b"][1] == 3.5
    assert back["s"].dtype == np.float32 and back["z"].shape == ()
    v = vector.copy()
    back = unflatten(v)
    v[:] = 0  # the leaves are new arrays, not views of the vector
    assert back["W"][1, 2] == 5.0


def test_flatten_refuses_integer_leaves_by_path():
    with pytest.raises(TypeError, match=r"tree\['layers'\]\[1\]\['n'\] is an int"):
        rb.flatten({"layers": [{"W": np.ones(2)}, {"n": 3}]})
    with pytest.raises(ValueError, match="1-D vector of 2 entries"):
        rb.flatten([np.ones(2)])[1](np.ones(3))


def test_flatten_complex_leaves_give_a_complex_vector():
    vector, unflatten = rb.flatten([np.array([1 + 2j]), 3.0])
    assert vector.dtype == np.complex128
    back = unflatten(vector)
    assert back[0].dtype == np.complex128 and type(back[1]) is float


def test_unflatten_of_a_traced_vector_is_differentiable():
    tree = {"W": np.array([[1.0, 2.0], [3.0, 0.5]]), "b": np.float32(0.25)}
    vector, unflatten = rb.flatten(tree)

    def loss(p):
        return np.sum(np.sin(p["W"]) * p["b"])

    g = rb.grad(lambda v: loss(unflatten(v)))(vector)
    expected = rb.flatten({"W": np.cos(tree["W"]) * 0.25, "b": np.sum(np.sin(tree["W"]))})[0]
    np.testing.assert_allclose(g, expected, rtol=1e-6)


# -- flatten inside the differentiated function (autograd's examples: l2_norm(params)) ---------


def _l2_norm(flatten):
    def l2_norm(params):
        vector, _ = flatten(params)
        return vector @ vector
    return l2_norm


def test_flatten_inside_the_loss_is_differentiable_like_autograds():
    import autograd
    import autograd.numpy as anp

    params = [(np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([0.25, -1.5])),
              (np.arange(3.0) - 1.0, 2.0), {"s": np.float32(1.5), "z": np.array(-0.75)}]

    def loss(flatten, np_):
        def f(p):
            return _l2_norm(flatten)(p) + np_.sum(np_.sin(p[0][0]))
        return f

    g = rb.grad(loss(rb.flatten, np))(params)
    reference = autograd.grad(loss(autograd_flatten, anp))(params)
    for mine, theirs in zip(tree_flatten(g)[0], tree_flatten(reference)[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    assert type(g[1][1]) is float and g[2]["s"].dtype == np.float32  # each leaf's type
    assert tree_flatten(g)[1] == tree_flatten(params)[1]


def test_flatten_inside_the_loss_with_constant_and_repeated_leaves():
    W = np.array([[0.5, -1.0], [2.0, 0.25]])
    constant = np.array([3.0, -4.0])

    def loss(w):
        vector, unflatten = rb.flatten({"a": w, "c": constant, "again": w})
        back = unflatten(vector * 2.0)  # a traced vector back into the tree's shapes
        return np.sum(vector ** 3) + np.sum(back["again"] * back["c"][0])

    g = rb.grad(loss)(W)
    # by hand: w appears twice in the vector (3 w^2 each) and once in back["again"] (2 * 2 * 3)
    np.testing.assert_allclose(g, 6 * W ** 2 + 12.0, rtol=1e-12)
    assert constant.tolist() == [3.0, -4.0]


def test_flatten_inside_the_loss_with_a_complex_leaf():
    params = [np.array([1.0 + 2.0j, -0.5j]), np.array([0.5, -1.5])]
    c = np.array([1.0, 2.0, 3.0, -1.0])

    def loss(p):
        vector, _ = rb.flatten(p)
        return np.sum(np.abs(vector * c) ** 2)

    g = rb.grad(loss)(params)
    # JAX's and autograd's convention for real f of complex z: df/dx - i df/dy = 2 c^2 conj(z)
    assert g[0].dtype == np.complex128 and g[1].dtype == np.float64
    np.testing.assert_allclose(g[0], 2 * c[:2] ** 2 * np.conj(params[0]), rtol=1e-12)
    np.testing.assert_allclose(g[1], 2 * c[2:] ** 2 * params[1], rtol=1e-12)


def test_the_unflatten_of_a_traced_tree_gives_back_the_leaves_own_types():
    def loss(p):
        vector, unflatten = rb.flatten(p)
        plain = unflatten(np.arange(4.0))  # a plain vector: the types of p's values
        assert type(plain[0]) is np.ndarray and plain[0].shape == (3,)
        assert type(plain[1]) is float and plain[1] == 3.0
        return np.sum(vector)

    np.testing.assert_array_equal(rb.grad(loss)([np.ones(3), 1.0])[0], np.ones(3))

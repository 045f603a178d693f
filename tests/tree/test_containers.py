"""Containers everywhere a value goes in or out of grad, value_and_grad and vjp: gradients in
the argument's structure, leaf by leaf with each leaf's shape and dtype, checked against
jax.grad / jax.vjp and autograd.grad of the same program."""

from __future__ import annotations

import functools
from collections import namedtuple

import autograd
import autograd.numpy as anp
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.optimize

import rulebridge as rb

SOURCES = ["autograd", "jax"]
Layer = namedtuple("Layer", "W b")


def as_numpy(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


def jax_grad(program, *args, argnums=0):
    with jax.enable_x64(True):
        g = jax.grad(functools.partial(program, jnp), argnums=argnums)(
            *jax.tree_util.tree_map(jnp.asarray, args))
    return as_numpy(g)


def assert_tree_close(actual, expected, rtol=1e-9):
    a_leaves, a_def = jax.tree_util.tree_flatten(actual)
    e_leaves, e_def = jax.tree_util.tree_flatten(expected)
    assert a_def == e_def, (a_def, e_def)
    for a, e in zip(a_leaves, e_leaves):
        assert np.shape(a) == np.shape(e)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * max(1.0, np.max(np.abs(e))))


def mlp_loss(xp, params, x, y):
    h = x
    for W, b in params[:-1]:
        h = xp.tanh(h @ W + b)
    W, b = params[-1]
    return xp.mean((h @ W + b - y) ** 2)


def mlp_params(rng, sizes=(3, 5, 4, 1)):
    return [(rng.normal(size=(m, n)) / np.sqrt(m), rng.normal(size=n) * 0.1)
            for m, n in zip(sizes[:-1], sizes[1:])]


@pytest.mark.parametrize("source", SOURCES)
def test_mlp_with_list_of_tuples_trained_with_grad(source):
    rng = np.random.default_rng(0)
    params = mlp_params(rng)
    x, y = rng.normal(size=(16, 3)), rng.normal(size=(16, 1))
    g = rb.grad(functools.partial(mlp_loss, np), source=source)(params, x, y)
    assert type(g) is list and all(type(layer) is tuple for layer in g)
    assert_tree_close(g, jax_grad(mlp_loss, params, x, y))
    assert_tree_close(g, autograd.grad(functools.partial(mlp_loss, anp))(params, x, y))
    # Training: rulebridge's steps follow autograd's step for step.
    step = rb.grad(functools.partial(mlp_loss, np), source=source)
    reference_step = autograd.grad(functools.partial(mlp_loss, anp))
    ours, theirs = params, params
    for _ in range(20):
        ours = [(W - 0.1 * gW, b - 0.1 * gb) for (W, b), (gW, gb) in zip(ours, step(ours, x, y))]
        theirs = [(W - 0.1 * gW, b - 0.1 * gb)
                  for (W, b), (gW, gb) in zip(theirs, reference_step(theirs, x, y))]
    assert_tree_close(ours, theirs, rtol=1e-9)
    assert mlp_loss(np, ours, x, y) < 0.9 * mlp_loss(np, params, x, y)


@pytest.mark.parametrize("source", SOURCES)
def test_dict_parameters_with_scipy_minimize_through_flatten(source):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 4)), rng.normal(size=30)
    lam = 0.3

    def loss(p):
        r = X @ p["w"] + p["b"]["offset"] - y
        return 0.5 * np.sum(r ** 2) + 0.5 * lam * np.sum(p["w"] ** 2)

    x0, unflatten = rb.flatten({"w": np.zeros(4), "b": {"offset": 0.0}})
    value_and_grad = rb.value_and_grad(loss, source=source)

    def fun(v):
        value, g = value_and_grad(unflatten(v))
        return value, rb.flatten(g)[0]

    result = scipy.optimize.minimize(fun, x0, jac=True, method="BFGS", options={"gtol": 1e-10})
    p = unflatten(result.x)
    assert type(p["b"]["offset"]) is float
    # The ridge solution in closed form, with an unpenalised offset.
    A = np.hstack([X, np.ones((30, 1))])
    P = np.diag([lam] * 4 + [0.0])
    expected = np.linalg.solve(A.T @ A + P, A.T @ y)
    np.testing.assert_allclose(np.append(p["w"], p["b"]["offset"]), expected, rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("source", SOURCES)
def test_namedtuples_dicts_and_tuple_argnums(source):
    def program(xp, layer, extra, scale):
        return xp.sum(xp.sin(layer.W) @ layer.b) * extra["k"][0] + scale * xp.sum(layer.b ** 2)

    rng = np.random.default_rng(2)
    layer = Layer(rng.normal(size=(3, 2)), rng.normal(size=2))
    extra = {"k": [np.array(1.5), np.float64(2.0)]}
    g = rb.grad(functools.partial(program, np), argnums=(0, 1, 2), source=source)(
        layer, extra, 0.7)
    assert type(g[0]) is Layer and type(g[2]) is float
    assert type(g[1]["k"][1]) is np.float64 and g[1]["k"][0].shape == ()
    assert_tree_close(g, jax_grad(program, layer, extra, 0.7, argnums=(0, 1, 2)))


@pytest.mark.parametrize("source", SOURCES)
def test_leaf_dtypes_and_types_are_kept(source):
    params = {"a": np.ones(3, np.float32), "b": 2.0, "c": np.float32(0.5)}
    g = rb.grad(lambda p: np.sum(p["a"] * p["c"]) * p["b"], source=source)(params)
    assert g["a"].dtype == np.float32 and type(g["b"]) is float and type(g["c"]) is np.float32
    np.testing.assert_allclose(g["a"], np.full(3, 1.0, np.float32))
    assert g["b"] == pytest.approx(1.5) and g["c"] == pytest.approx(6.0)


def test_non_differentiable_leaf_is_refused_by_its_path():
    params = {"layers": [{"W": np.ones(2)}, {"W": np.ones(2), "n": 3}]}
    with pytest.raises(TypeError, match=r"params\['layers'\]\[1\]\['n'\] of argument 0: it is "
                                        r"an int"):
        rb.grad(lambda params: np.sum(params["layers"][0]["W"]))(params)
    with pytest.raises(TypeError, match=r"args\[1\]\[0\] of argument 1: it is an array of "
                                        r"dtype int64"):
        rb.grad(lambda *a: np.sum(a[0]), argnums=(0, 1))(np.ones(2), [np.arange(2)])
    with pytest.raises(TypeError, match=r"it is a str"):
        rb.grad(lambda p: np.sum(p[0]))((np.ones(2), "name"))


def test_none_is_an_empty_node_as_in_jax():
    params = {"W": np.array([1.0, 2.0]), "mask": None}
    g = rb.grad(lambda p: np.sum(p["W"] ** 2))(params)
    expected = jax_grad(lambda xp, p: xp.sum(p["W"] ** 2), params)
    assert g["mask"] is None and expected["mask"] is None
    np.testing.assert_array_equal(g["W"], expected["W"])


@pytest.mark.parametrize("source", SOURCES)
def test_vjp_of_a_dict_output_takes_a_dict_cotangent(source):
    def program(xp, p, idx):
        return {"y": xp.tanh(p[0] * p[1]), "z": (xp.sum(p[0] ** 3), idx)}

    p = (np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.2, -0.3]))
    idx = np.array([2, 0])
    y, pullback = rb.vjp(functools.partial(program, np), p, idx, source=source)
    assert set(y) == {"y", "z"} and y["z"][1] is idx
    ybar = {"y": np.array([1.0, -2.0, 0.5]), "z": (np.float64(3.0), None)}
    gp, gidx = pullback(ybar)
    assert gidx is None and type(gp) is tuple
    with jax.enable_x64(True):
        _, jax_pullback = jax.vjp(lambda q: {"y": program(jnp, q, idx)["y"],
                                             "z": program(jnp, q, idx)["z"][0]},
                                  jax.tree_util.tree_map(jnp.asarray, p))
        (expected,) = jax_pullback({"y": jnp.asarray(ybar["y"]), "z": jnp.asarray(3.0)})
    assert_tree_close(gp, as_numpy(expected))
    # A list for a tuple, None for a whole part: accepted; a missing key: refused by path.
    gp2, _ = pullback({"y": ybar["y"], "z": [np.float64(3.0), None]})
    assert_tree_close(gp2, gp)
    gp3, _ = pullback({"y": None, "z": None})
    assert_tree_close(gp3, (np.zeros(3), np.zeros(3)))
    with pytest.raises(ValueError, match=r"ybar should be a dict with the keys 'y', 'z'"):
        pullback({"y": ybar["y"]})
    with pytest.raises(ValueError, match=r"ybar\['y'\] given to the pullback .* has shape \(2,\)"):
        pullback({"y": np.ones(2), "z": None})


@pytest.mark.parametrize("source", SOURCES)
def test_vjp_passes_integer_leaves_through_with_none(source):
    data = {"x": np.array([1.0, 2.0]), "i": np.array([1, 0]), "k": 3}
    y, pullback = rb.vjp(lambda d: d["x"][d["i"]] * d["k"], data, source=source)
    np.testing.assert_array_equal(y, [6.0, 3.0])
    (g,) = pullback(np.array([1.0, 10.0]))
    assert g["i"] is None and g["k"] is None
    np.testing.assert_array_equal(g["x"], [30.0, 3.0])


@pytest.mark.parametrize("source", SOURCES)
def test_has_aux_with_a_container_aux(source):
    def program(xp, p):
        pred = xp.sin(p["w"]) * p["s"]
        return xp.sum(pred ** 2), {"pred": pred, "n": 2}

    p = {"w": np.array([0.1, 0.9]), "s": 1.5}
    (value, aux), g = rb.value_and_grad(functools.partial(program, np), has_aux=True,
                                        source=source)(p)
    g2, aux2 = rb.grad(functools.partial(program, np), has_aux=True, source=source)(p)
    with jax.enable_x64(True):
        expected, expected_aux = jax.grad(functools.partial(program, jnp), has_aux=True)(
            jax.tree_util.tree_map(jnp.asarray, p))
    assert type(aux["pred"]) is np.ndarray and aux["n"] == 2
    np.testing.assert_array_equal(aux["pred"], program(np, p)[1]["pred"])
    assert value == program(np, p)[0]
    assert_tree_close(g, as_numpy(expected))
    assert_tree_close(g2, as_numpy(expected))
    np.testing.assert_allclose(aux2["pred"], np.asarray(expected_aux["pred"]), rtol=1e-12)
    with pytest.raises(TypeError, match=r"has_aux=True: .* must return a pair"):
        rb.grad(lambda p: np.sum(p["w"]), has_aux=True)(p)


@pytest.mark.parametrize("source", SOURCES)
def test_vjp_with_aux_as_jax(source):
    def program(xp, p):
        h = xp.tanh(p["W"] @ p["x"])
        return {"h": h, "s": xp.sum(h)}, {"h_copy": h * 1.0, "step": 4}

    p = {"W": np.array([[0.5, -1.0], [2.0, 0.3]]), "x": np.array([0.7, -0.2])}
    y, pullback, aux = rb.vjp(functools.partial(program, np), p, has_aux=True, source=source)
    ybar = {"h": np.array([1.0, -3.0]), "s": 2.0}
    (g,) = pullback(ybar)
    with jax.enable_x64(True):
        jy, jax_pullback, jaux = jax.vjp(functools.partial(program, jnp),
                                         jax.tree_util.tree_map(jnp.asarray, p), has_aux=True)
        (expected,) = jax_pullback(jax.tree_util.tree_map(jnp.asarray, ybar))
    assert aux["step"] == 4 and type(aux["h_copy"]) is np.ndarray
    np.testing.assert_allclose(aux["h_copy"], np.asarray(jaux["h_copy"]), rtol=1e-12)
    assert_tree_close(y, as_numpy(jy), rtol=1e-12)
    assert_tree_close(g, as_numpy(expected))


@pytest.mark.parametrize("source", SOURCES)
def test_grad_of_a_size_one_result_as_autograd(source):
    f = lambda x: np.sin(x[:1]) * x[1]  # shape (1,)
    x = np.array([0.4, 2.0])
    g = rb.grad(f, source=source)(x)
    np.testing.assert_allclose(g, autograd.grad(lambda a: anp.sin(a[:1]) * a[1])(x), rtol=1e-12)
    value, _ = rb.value_and_grad(lambda x: np.sum(x).reshape(1, 1), source=source)(x)
    assert value.shape == (1, 1)
    with pytest.raises(TypeError, match="size 1"):
        rb.grad(lambda x: x * 2.0, source=source)(x)


@pytest.mark.parametrize("source", SOURCES)
def test_trace_of_container_arguments(source):
    p = {"a": np.array([0.5, 1.0]), "b": np.array([2.0, -1.0])}
    y, tape = rb.trace(lambda p: (np.sum(np.sin(p["a"]) * p["b"]), p["a"] * 2), p,
                       source=source)
    assert len(tape.inputs) == 2 and y[0] == np.sum(np.sin(p["a"]) * p["b"])
    q = {"a": np.array([0.1, 0.2]), "b": np.array([3.0, 4.0])}
    replayed = tape.replay(q["a"], q["b"])  # one value per traced leaf, in the tree's order
    assert replayed[0] == np.sum(np.sin(q["a"]) * q["b"])
    np.testing.assert_array_equal(replayed[1], q["a"] * 2)


@pytest.mark.parametrize("source", SOURCES)
def test_trace_replays_dict_and_constant_outputs(source):
    def f(p):
        return {"loss": np.sum(p["a"] ** 2), "steps": 3, "pair": Layer(np.sin(p["a"]), "tag")}

    p = {"a": np.array([0.5, 1.0])}
    y, tape = rb.trace(f, p, source=source)
    assert y["steps"] == 3 and y["pair"].b == "tag"
    assert "return {'loss': %" in str(tape) and "'steps': const" in str(tape)
    q = np.array([2.0, -1.0])
    replayed = tape.replay(q)
    assert replayed["steps"] == 3 and replayed["loss"] == 5.0 and replayed["pair"].b == "tag"
    np.testing.assert_array_equal(replayed["pair"].W, np.sin(q))
    _, tape = rb.trace(lambda x: 7, np.ones(2), source=source)
    assert tape.replay(np.zeros(2)) == 7


# -- replay over containers -----------------------------------------------------------------


@pytest.mark.parametrize("source", SOURCES)
def test_replay_takes_containers_of_the_traced_structure(source):
    def program(xp, params, x, n):
        (W, b), extra = params
        h = xp.tanh(x @ W + b) * extra["s"] + extra["t"]
        return {"loss": xp.sum(h ** 2) * n, "h": h}

    rng = np.random.default_rng(5)
    params = [(rng.normal(size=(3, 2)), rng.normal(size=2)), {"t": 0.5, "s": np.float64(2.0)}]
    x = rng.normal(size=(4, 3))
    _, tape = rb.trace(functools.partial(program, np), params, x, 3, source=source)
    new = [(rng.normal(size=(3, 2)), rng.normal(size=2)), {"s": np.float64(-1.0), "t": 1.5}]
    new_x = rng.normal(size=(4, 3))
    replayed = tape.replay(new, new_x, 3)  # a dict's keys in another order: matched by name
    expected = program(np, new, new_x, 3)
    assert replayed["loss"] == expected["loss"]
    np.testing.assert_array_equal(replayed["h"], expected["h"])
    with jax.enable_x64(True):  # and the same program in jax.numpy
        reference = program(jnp, jax.tree_util.tree_map(jnp.asarray, new), new_x, 3)
    np.testing.assert_allclose(replayed["loss"], float(reference["loss"]), rtol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_replay_with_the_same_array_twice(source):
    # Traced twice, one box per leaf: replaying on two different arrays must use each.
    x = np.array([0.5, -1.0])
    f = lambda pair: np.sum(np.sin(pair[0]) * pair[1] ** 2)
    _, tape = rb.trace(f, (x, x), source=source)
    a, b = np.array([1.0, 2.0]), np.array([-3.0, 0.25])
    assert tape.replay((a, b)) == f((a, b))
    assert tape.replay((b, a)) == f((b, a))


@pytest.mark.parametrize("changed, message", [
    (lambda p: (p["W"], p["b"]), r"args\[0\] is a tuple .*traced with \{'W': \*, 'b': \*\}"),
    (lambda p: {"W": p["W"], "c": p["b"]}, r"dict must have the same keys"),
    (lambda p: Layer(*p["a"]), r"Layer vs tuple at the top; a tuple is not a namedtuple"),
    (lambda p: {"W": p["W"], "b": [p["b"]]}, r"traced with \{'W': \*, 'b': \*\}"),
])
def test_replay_refuses_another_structure(changed, message):
    p = {"W": np.array([[1.0, 2.0]]), "b": np.array([0.5, 1.5])}
    _, tape = rb.trace(lambda p: np.sum(p["W"] @ p["b"]), p)
    with pytest.raises(TypeError, match=message):
        if "Layer" in message:  # a namedtuple where a tuple was traced
            _, tape = rb.trace(lambda p: np.sum(p[0] * p[1]), (p["W"], p["b"]))
            tape.replay(changed({"a": (p["W"], p["b"])}))
        else:
            tape.replay(changed(p))


def test_replay_refuses_a_changed_constant_instead_of_computing_with_the_old_one():
    p = {"x": np.array([1.0, 2.0]), "k": 2, "idx": np.array([1, 0])}
    f = lambda p, n: np.sum(p["x"][p["idx"]] ** p["k"]) * n
    _, tape = rb.trace(f, p, 3)
    q = {"x": np.array([3.0, -1.0]), "k": 2, "idx": np.array([1, 0])}
    assert tape.replay(q, 3) == f(q, 3)
    with pytest.raises(ValueError, match=r"args\[0\]\['k'\] is 3, but it was 2 when the tape "
                                         r"was traced"):
        tape.replay(dict(q, k=3), 3)
    with pytest.raises(ValueError, match=r"args\[0\]\['idx'\] is array\(\[0, 1\]\), but it was "
                                         r"array\(\[1, 0\]\)"):
        tape.replay(dict(q, idx=np.array([0, 1])), 3)
    with pytest.raises(ValueError, match=r"args\[1\] is 4, but it was 3"):
        tape.replay(q, 4)
    with pytest.raises(TypeError, match=r"takes the 2 positional argument\(s\) the tape was "
                                        r"traced with \(\{'idx': \*, 'k': \*, 'x': \*\}, \*\) "
                                        r"or one value per traced input \(1\), got 3"):
        tape.replay(q, 3, 4)


def test_replay_of_empty_containers_and_none():
    f = lambda p, e, x: np.sum(x * 2.0) + len(e)
    _, tape = rb.trace(f, {"a": None}, [], np.array([1.0, 2.0]))
    assert tape.replay({"a": None}, [], np.array([3.0, 4.0])) == 14.0
    with pytest.raises(TypeError, match=r"args\[1\] is a tuple .* traced with \[\]"):
        tape.replay({"a": None}, (), np.array([3.0, 4.0]))


def test_replay_on_random_trees():
    from tests.support.trees import random_tree, weighted

    program = functools.partial(weighted, np)
    rng = np.random.default_rng(8)
    for _ in range(30):
        tree = random_tree(rng)
        _, tape = rb.trace(program, tree)
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        # New values for every float leaf (a repeated array gets two), ints as traced.
        new = jax.tree_util.tree_unflatten(treedef, [
            rng.normal(size=np.shape(leaf)) if isinstance(leaf, np.ndarray) and leaf.dtype.kind
            == "f" else type(leaf)(rng.normal()) if isinstance(leaf, (float, np.float64))
            else leaf for leaf in leaves])
        assert tape.replay(new) == pytest.approx(float(program(new)), rel=1e-12, abs=1e-12)
        if leaves:
            with pytest.raises(TypeError, match="tape.replay"):
                tape.replay([new])

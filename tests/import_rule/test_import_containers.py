"""`import_rule` and `check_rule` over containers: an imported function of a dict, a namedtuple,
nested lists of `(W, b)` or a registered type, or returning one, is one recorded op with the
source's rule, checked against jax.grad of the same program and float64 central differences.

Each imported function here calls np.asarray on its inputs, as SciPy and compiled code do, so a
traced value that reached it instead of its rule would raise: a right number here is the rule's.
"""

from __future__ import annotations

import functools

import autograd.numpy as anp
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import central_difference
from tests.support.trees import Layer, Pair, random_tree, weighted

SOURCES = ["autograd", "jax"]
XP = {"autograd": anp, "jax": jnp}


def jax_grad(program, *args, argnums=0):
    with jax.enable_x64(True):
        g = jax.grad(functools.partial(program, jnp), argnums=argnums)(
            *jax.tree_util.tree_map(jnp.asarray, args))
    return jax.tree_util.tree_map(np.asarray, g)


def flat_central_difference(loss, tree):
    """d loss / d tree by central differences over rb.flatten's vector, in tree's structure."""
    v, unflatten = rb.flatten(tree)
    return rb.flatten(tree)[1](central_difference(lambda w: loss(unflatten(w)), (v,)))


def assert_tree_close(actual, expected, rtol=1e-9, atol=1e-9):
    a_leaves, a_def = jax.tree_util.tree_flatten(actual)
    e_leaves, e_def = jax.tree_util.tree_flatten(expected)
    assert a_def == e_def, (a_def, e_def)
    for a, e in zip(a_leaves, e_leaves):
        assert np.shape(a) == np.shape(e)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def energy(xp, p):
    """A function of a dict holding a namedtuple, a float and an int leaf."""
    layer = p["layer"]
    return xp.sum(xp.tanh(layer.W @ layer.b) * p["scale"]) + p["shift"] * p["n"]


def opaque(program):
    """`program` on np.asarray copies of every leaf: unreachable by NumPy's protocols."""
    def function(*args):
        return program(np, *jax.tree_util.tree_map(np.asarray, args))
    return function


def params(rng):
    return {"layer": Layer(rng.normal(size=(3, 2)), rng.normal(size=2)), "scale": 1.5,
            "shift": np.float64(-0.25), "n": 3}


@pytest.mark.parametrize("source", SOURCES)
def test_a_dict_with_a_namedtuple_float_and_int_leaves(source):
    f = rb.import_rule(opaque(energy), source, equivalent=functools.partial(energy, XP[source]))
    p = params(np.random.default_rng(0))
    g = rb.grad(lambda p: f(p) * 2.0, source=source, argnums=0)(
        {k: v for k, v in p.items() if k != "n"} | {"n": 3.0})
    expected = jax_grad(lambda xp, p: energy(xp, p) * 2.0, dict(p, n=3.0))
    assert type(g["layer"]) is Layer and type(g["scale"]) is float
    assert_tree_close(g, expected)
    # The op is the import's own, over the leaves, and says which leaf is which.
    _, tape = rb.trace(f, p, source=source)
    assert len(tape) == 1 and f"[{{'layer': Layer(W=*, b=*), 'n': *, 'scale': *, 'shift': *}}]" \
        f"(%0, %1, 3, %2, %3)  [{source}]" in str(tape)


@pytest.mark.parametrize("source", SOURCES)
def test_the_same_array_twice_and_key_order(source):
    # Two leaves that are one array are two inputs, each with its own gradient (as in jax); a
    # dict built in another key order is the same layout, its leaves matched by key.
    def program(xp, p):
        return xp.sum(xp.sin(p["a"]) * p["b"] ** 2)

    f = rb.import_rule(opaque(program), source, equivalent=functools.partial(program, XP[source]))
    x = np.array([0.3, -1.2, 2.0])
    g = rb.grad(lambda x: f({"b": x, "a": x}), source=source)(x)
    np.testing.assert_allclose(g, np.cos(x) * x ** 2 + 2 * np.sin(x) * x, rtol=1e-12)
    ga = rb.grad(f, source=source)({"b": x, "a": x})
    assert_tree_close(ga, jax_grad(program, {"a": x, "b": x}))
    assert not np.shares_memory(ga["a"], ga["b"])


@pytest.mark.parametrize("source", SOURCES)
def test_a_list_of_weight_bias_pairs_against_jax_and_differences(source):
    def mlp(xp, layers, x):
        for W, b in layers[:-1]:
            x = xp.tanh(x @ W + b)
        W, b = layers[-1]
        return xp.sum((x @ W + b) ** 2)

    f = rb.import_rule(opaque(mlp), source, equivalent=functools.partial(mlp, XP[source]))
    rng = np.random.default_rng(1)
    layers = [(rng.normal(size=(3, 4)), rng.normal(size=4)), (rng.normal(size=(4, 1)),
                                                              rng.normal(size=1))]
    x = rng.normal(size=(5, 3))
    g = rb.grad(f, source=source)(layers, x)
    assert type(g) is list and all(type(pair) is tuple for pair in g)
    assert_tree_close(g, jax_grad(mlp, layers, x))
    assert_tree_close(g, flat_central_difference(lambda t: opaque(mlp)(t, x), layers),
                      rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("source", SOURCES)
def test_a_dict_result_of_array_arguments(source):
    # Arrays in, a dict with an int and a nested tuple out: the result is taken apart.
    def moments(xp, x, w):
        m = xp.sum(w * x) / xp.sum(w)
        return {"mean": m, "spread": (xp.sum(w * (x - m) ** 2), xp.max(x)), "n": 4}

    f = rb.import_rule(opaque(moments), source,
                       equivalent=functools.partial(moments, XP[source]))
    x, w = np.array([1.0, 2.0, 4.0, 8.0]), np.array([0.5, 1.0, 1.5, 2.0])
    y, pullback = rb.vjp(f, x, w, source=source)
    assert y["n"] == 4 and y["mean"] == moments(np, x, w)["mean"]
    gx, gw = pullback({"mean": 1.0, "spread": (2.0, None), "n": None})
    loss = lambda x, w: moments(np, x, w)["mean"] + 2 * moments(np, x, w)["spread"][0]
    np.testing.assert_allclose(gx, central_difference(loss, (x, w), 0), rtol=1e-7)
    np.testing.assert_allclose(gw, central_difference(loss, (x, w), 1), rtol=1e-7)
    # A second call goes straight to the taken-apart op.
    _, tape = rb.trace(lambda x: f(x, w)["mean"], x, source=source)
    assert len(tape) == 1


@pytest.mark.parametrize("source", SOURCES)
def test_empty_containers_and_none(source):
    def program(xp, x, opts, empty):
        return {"y": xp.sum(x ** 3), "none": None, "empty": (), "count": len(empty)}

    f = rb.import_rule(opaque(lambda xp, x, o, e: program(xp, x, o, e)), source,
                       equivalent=functools.partial(program, XP[source]))
    x = np.array([0.5, -2.0])
    g = rb.grad(lambda x: f(x, {}, [])["y"], source=source)(x)
    np.testing.assert_allclose(g, 3 * x ** 2, rtol=1e-12)
    y = rb.vjp(lambda x: f(x, {"k": None}, []), x, source=source)[0]
    assert y["none"] is None and y["empty"] == () and y["count"] == 0


@pytest.mark.parametrize("source", ["jax"])
def test_a_registered_container(source):
    def program(xp, pair):
        return xp.sum(xp.exp(pair.a) * pair.b)

    f = rb.import_rule(opaque(program), source, equivalent=functools.partial(program, jnp))
    pair = Pair(np.array([0.1, 0.2]), np.array([3.0, -1.0]))
    g = rb.grad(f, source=source)(pair)
    assert type(g) is Pair
    np.testing.assert_allclose(g.a, np.exp(pair.a) * pair.b, rtol=1e-12)
    np.testing.assert_allclose(g.b, np.exp(pair.a), rtol=1e-12)


@pytest.mark.parametrize("source", SOURCES)
def test_a_wrong_gradient_on_a_float_leaf_is_caught_and_named(source):
    # Right values, but the equivalent holds the float leaf constant: the check at first use
    # must differentiate float scalars among the leaves too, and say which leaf it is.
    xp = XP[source]
    stop = jax.lax.stop_gradient if source == "jax" else (lambda v: v * 0 + anp.float64(1.5))

    def wrong(p):
        return xp.sum(xp.sin(p["x"])) * stop(p["s"])

    f = rb.import_rule(opaque(lambda np_, p: np_.sum(np_.sin(p["x"])) * p["s"]), source,
                       equivalent=wrong)
    p = {"x": np.array([0.5, 1.0]), "s": 1.5}
    with pytest.raises(rb.ImportRuleError, match=r"(?s)disagrees with .*argument 0 is args\[0\]\['s'\]"):
        rb.grad(f, source=source)(p)


@pytest.mark.parametrize("source", SOURCES)
def test_check_rule_and_assert_rule_take_what_import_rule_returns(source):
    f = rb.import_rule(opaque(energy), source, equivalent=functools.partial(energy, XP[source]))
    p = params(np.random.default_rng(2))
    result = rb.check_rule(f, p, source=source)
    assert result.status == "pass", result
    assert rb.assert_rule(f, p, source=source).passed
    import scipy.special

    logsumexp = rb.import_rule(scipy.special.logsumexp, source)
    assert rb.assert_rule(logsumexp, np.array([0.3, -1.2, 2.0]), source=source).passed
    assert rb.check_rule(logsumexp, np.ones((2, 3)), source=source, axis=1).passed


def test_check_rule_of_a_wrong_rule_over_containers():
    def program(xp, a, p):
        return xp.sum(a * p["c"] * xp.exp(p["b"]))

    # Right values; the gradient of p['b'] is missing. Imported unchecked, so only check_rule
    # can find it, and argnums (the call's own arguments) choose what is checked.
    wrong = lambda a, p: jnp.sum(a * p["c"] * jnp.exp(jax.lax.stop_gradient(p["b"])))
    f = rb.import_rule(opaque(program), "jax", equivalent=wrong, check=False)
    a, p = np.array([1.0, 2.0]), {"b": np.array([0.5, -0.5]), "c": 2.0}
    result = rb.check_rule(f, a, p, source="jax")
    assert result.status == "fail", result
    assert result.function.endswith("function[*, {'b': *, 'c': *}]")
    with pytest.raises(rb.RuleCheckError):
        rb.assert_rule(f, a, p, source="jax")
    assert rb.check_rule(f, a, p, source="jax", argnums=[0]).status == "pass"
    assert rb.check_rule(f, a, p, source="jax", argnums=[1]).status == "fail"
    # The same rule, right, passes both ways.
    right = rb.import_rule(opaque(program), "jax", equivalent=functools.partial(program, jnp))
    assert rb.check_rule(right, a, p, source="jax", argnums=[1]).status == "pass"


@pytest.mark.parametrize("source", SOURCES)
def test_replay_of_a_taken_apart_call(source):
    f = rb.import_rule(opaque(energy), source, equivalent=functools.partial(energy, XP[source]))
    rng = np.random.default_rng(3)
    p, q = params(rng), params(rng)
    _, tape = rb.trace(f, p, source=source)
    assert tape.replay(q) == pytest.approx(energy(np, q), rel=1e-14)


def test_a_leaf_the_source_cannot_take_is_named_by_its_path():
    f = rb.import_rule(opaque(lambda xp, p: xp.sum(p["a"] * p["b"])), "jax",
                       equivalent=lambda p: jnp.sum(p["a"] * p["b"]))
    p = {"a": np.ones(2), "b": np.ones(2, np.float16)}
    with pytest.raises(rb.NoRuleError, match=r"argument 1 is float16\[:\]") as info:
        rb.grad(lambda a: f({"a": a, "b": p["b"]}), source="jax")(p["a"])
    assert any("argument 1 is args[0]['b']" in note for note in info.value.__notes__)


@pytest.mark.parametrize("source", SOURCES)
def test_a_namedtuple_and_a_tuple_of_the_same_arrays(source):
    # A flat tuple is recorded as a sequence argument, a namedtuple as leaves: the same numbers.
    def program(xp, layer, x):
        W, b = layer
        return xp.sum(xp.tanh(x @ W + b) ** 2)

    f = rb.import_rule(opaque(program), source, equivalent=functools.partial(program, XP[source]))
    rng = np.random.default_rng(6)
    W, b, x = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(4, 3))
    as_tuple = rb.grad(f, source=source)((W, b), x)
    as_layer = rb.grad(f, source=source)(Layer(W, b), x)
    assert type(as_tuple) is tuple and type(as_layer) is Layer
    expected = jax_grad(program, (W, b), x)
    assert_tree_close(as_tuple, expected)
    assert_tree_close(tuple(as_layer), expected)


@pytest.mark.parametrize("source", SOURCES)
def test_a_container_of_plain_arrays_as_a_keyword(source):
    # params= is a dict of constants: it cannot reach a source as a dict argument, so the call
    # is taken apart; had it been passed through, the source would decline and the dict result
    # would have come back as constants (a zero Jacobian).
    def program(xp, x, params=None):
        return {"y": xp.sin(x) * params["a"], "s": xp.sum(params["a"] ** 2) * x[0]}

    def plain(x, params=None):  # a signature of its own: params= has a positional slot
        return program(np, np.asarray(x), {"a": np.asarray(params["a"])})

    f = rb.import_rule(plain, source, equivalent=functools.partial(program, XP[source]))
    x, a = np.array([0.3, 0.9]), np.array([1.5, -2.0])
    J = rb.jacobian(lambda x: f(x, params={"a": a}), source=source)(x)
    with jax.enable_x64(True):
        expected = jax.jacrev(lambda x: program(jnp, x, params={"a": jnp.asarray(a)}))(
            jnp.asarray(x))
    assert_tree_close(J, jax.tree_util.tree_map(np.asarray, expected))
    assert np.abs(J["y"]).max() > 0.1  # the test can fail


@pytest.mark.parametrize("source", SOURCES)
def test_a_dict_result_no_source_can_take_raises_instead_of_being_constant(source):
    f = rb.import_rule(opaque(lambda np_, x: {"y": np_.sin(x)}), source,
                       equivalent=lambda x: {"y": XP[source].sin(x)})
    x = np.array([0.5, 1.0], np.float16)  # a dtype neither source takes
    with pytest.raises(rb.NoRuleError, match="float16"):
        rb.grad(lambda x: np.sum(f(x)["y"]), source=source)(x)


@pytest.mark.parametrize("source", SOURCES)
def test_random_trees_against_jax(source):
    f = rb.import_rule(opaque(weighted), source, equivalent=functools.partial(weighted, XP[source]))
    rng = np.random.default_rng(7)
    for _ in range(30):
        tree = random_tree(rng)
        y, pullback = rb.vjp(f, tree, source=source)
        assert y == pytest.approx(float(weighted(np, tree)), rel=1e-12)
        (g,) = pullback(1.0)
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        floats = [k for k, leaf in enumerate(leaves) if np.result_type(leaf).kind == "f"]

        def of_floats(*values):
            full = list(leaves)
            for k, v in zip(floats, values):
                full[k] = v
            return weighted(jnp, jax.tree_util.tree_unflatten(treedef, full))

        with jax.enable_x64(True):
            expected = jax.grad(of_floats, argnums=tuple(range(len(floats))))(
                *[jnp.asarray(leaves[k]) for k in floats]) if floats else ()
        got = treedef.flatten_up_to(g)  # None where the tree has an int leaf
        assert [got[k] for k in range(len(leaves)) if k not in floats] == \
            [None] * (len(leaves) - len(floats))
        for k, e in zip(floats, expected):
            assert np.shape(got[k]) == np.shape(leaves[k])
            np.testing.assert_allclose(got[k], np.asarray(e), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("where", ["container", "position"])
def test_an_equivalent_is_compared_at_each_value_of_a_static_int(where):
    # g agrees with f only at n == 2: a rule verified at n=2 must not be trusted at n=3, whether
    # n is a positional argument or an int leaf of a container (the signature spells it `int`).
    if where == "container":
        def f(p):
            return np.sum(p["x"] ** p["n"])

        def g(p):
            return jnp.sum(p["x"] ** p["n"]) * (1.0 if p["n"] == 2 else 1.5)

        call = lambda F, x, n: F({"x": x, "n": n})  # noqa: E731
    else:
        def f(x, n):
            return np.sum(x ** n)

        def g(x, n):
            return jnp.sum(x ** n) * (1.0 if n == 2 else 1.5)

        call = lambda F, x, n: F(x, n)  # noqa: E731
    F = rb.import_rule(f, source="jax", equivalent=g)
    x = np.linspace(0.5, 1.5, 3)
    np.testing.assert_allclose(rb.grad(lambda x: call(F, x, 2))(x), 2 * x, rtol=1e-12)
    with pytest.raises((rb.ImportRuleError, rb.UnverifiedRuleError)):
        rb.grad(lambda x: call(F, x, 3))(x)

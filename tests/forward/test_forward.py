"""Forward mode (rulebridge.jvp, jacfwd, linearize) against jax.jvp and jax.jacfwd of the same
programs written in jax.numpy, for each choice of source, to 1e-8 relative."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

SOURCES = [None, "autograd", "jax"]
RTOL = 1e-8


def _close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(float(np.max(np.abs(b), initial=0.0)), 1e-300)
    assert float(np.max(np.abs(a - b), initial=0.0)) <= RTOL * scale, (a, b)


def _tree_close(a, b):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        _close(x, y)


rng = np.random.default_rng(0)
X = rng.standard_normal(5)
V = rng.standard_normal(5)
A = rng.standard_normal((4, 4)) + 4 * np.eye(4)
VA = rng.standard_normal((4, 4))
B = rng.standard_normal(4)


def lse(np_):
    def f(x):
        m = np_.max(x)
        return m + np_.log(np_.sum(np_.exp(x - m)))
    return f


def tanh_loss(np_):
    return lambda x: np_.sum(np_.tanh(x * 1.5 + 0.2) ** 2)


def indexing(np_):
    return lambda x: np_.sum(x[1:] * x[:-1]) + x[np_.array([0, 2])].sum() * x[3]


def branches(np_):
    return lambda x: np_.sum(np_.where(x > 0, x ** 2, np_.sin(x)) + np_.maximum(x, 0.3 * x))


def vector_out(np_):
    return lambda x: np_.concatenate([np_.exp(x[:2]), np_.cumsum(x) * x[0]])


PROGRAMS = {"logsumexp": lse, "tanh": tanh_loss, "indexing": indexing, "branches": branches,
            "vector": vector_out}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jvp_and_jacfwd_agree_with_jax(name, source):
    f_np, f_jax = PROGRAMS[name](np), PROGRAMS[name](jnp)
    y, ydot = rb.jvp(f_np, (X,), (V,), source=source)
    with jax.enable_x64(True):
        y_ref, ydot_ref = jax.jvp(f_jax, (jnp.asarray(X),), (jnp.asarray(V),))
        jac_ref = jax.jacfwd(f_jax)(jnp.asarray(X))
    _close(y, y_ref)
    _close(ydot, ydot_ref)
    _close(rb.jacfwd(f_np, source=source)(X), jac_ref)


@pytest.mark.parametrize("source", SOURCES)
def test_a_scalar_function(source):
    f = lambda t: np.sin(t) * t ** 2 + np.exp(-t)  # noqa: E731
    y, ydot = rb.jvp(f, (0.7,), (1.3,), source=source)
    with jax.enable_x64(True):
        y_ref, ydot_ref = jax.jvp(lambda t: jnp.sin(t) * t ** 2 + jnp.exp(-t), (0.7,), (1.3,))
    _close(y, y_ref)
    _close(ydot, ydot_ref)


@pytest.mark.parametrize("source", SOURCES)
def test_solve_and_slogdet(source):
    def f(a, b, np_):
        sign, logdet = np_.linalg.slogdet(a)
        return np_.sum(np_.linalg.solve(a, b) ** 2) + logdet * sign

    y, ydot = rb.jvp(lambda a, b: f(a, b, np), (A, B), (VA, V[:4]), source=source)
    with jax.enable_x64(True):
        y_ref, ydot_ref = jax.jvp(lambda a, b: f(a, b, jnp), (jnp.asarray(A), jnp.asarray(B)),
                                  (jnp.asarray(VA), jnp.asarray(V[:4])))
        jac_ref = jax.jacfwd(lambda a: f(a, jnp.asarray(B), jnp))(jnp.asarray(A))
    _close(y, y_ref)
    _close(ydot, ydot_ref)
    _close(rb.jacfwd(lambda a: f(a, B, np), source=source)(A), jac_ref)


@pytest.mark.parametrize("source", SOURCES)
def test_dict_parameters(source):
    params = {"w": rng.standard_normal((3, 5)), "b": rng.standard_normal(3)}
    dots = {"w": rng.standard_normal((3, 5)), "b": rng.standard_normal(3)}

    def loss(p, x, np_):
        return np_.sum(np_.tanh(p["w"] @ x + p["b"]) ** 2)

    y, ydot = rb.jvp(lambda p: loss(p, X, np), (params,), (dots,), source=source)
    with jax.enable_x64(True):
        jp = {k: jnp.asarray(v) for k, v in params.items()}
        y_ref, ydot_ref = jax.jvp(lambda p: loss(p, jnp.asarray(X), jnp), (jp,),
                                  ({k: jnp.asarray(v) for k, v in dots.items()},))
        jac_ref = jax.jacfwd(lambda p: loss(p, jnp.asarray(X), jnp))(jp)
    _close(y, y_ref)
    _close(ydot, ydot_ref)
    jac = rb.jacfwd(lambda p: loss(p, X, np), source=source)(params)
    assert set(jac) == {"w", "b"}
    _tree_close(jac, jac_ref)


@pytest.mark.parametrize("source", SOURCES)
def test_in_place_writes(source):
    def f(x):
        y = np.zeros(4)
        y[0] = x[0] ** 2
        y[1:] = np.sin(x[1:4])
        z = x.copy()
        z *= 2.0
        z[2] = y[1] * x[4]
        return np.sum(y * z[:4]) + np.exp(z[2])

    def f_jax(x):
        y = jnp.zeros(4).at[0].set(x[0] ** 2).at[1:].set(jnp.sin(x[1:4]))
        z = (x * 2.0).at[2].set(y[1] * x[4])
        return jnp.sum(y * z[:4]) + jnp.exp(z[2])

    x = X.copy()
    y, ydot = rb.jvp(f, (x,), (V,), source=source)
    assert np.array_equal(x, X)  # the caller's array
    with jax.enable_x64(True):
        y_ref, ydot_ref = jax.jvp(f_jax, (jnp.asarray(X),), (jnp.asarray(V),))
        jac_ref = jax.jacfwd(f_jax)(jnp.asarray(X))
    _close(y, y_ref)
    _close(ydot, ydot_ref)
    _close(rb.jacfwd(f, source=source)(X), jac_ref)


def test_a_write_into_the_argument_reads_what_each_op_saw():
    def f(x):
        s = np.sin(x)  # reads x before the write below
        x[1] = 3.0 * x[0]
        return np.sum(s * np.cos(x))

    def f_jax(x):
        s = jnp.sin(x)
        x = x.at[1].set(3.0 * x[0])
        return jnp.sum(s * jnp.cos(x))

    x = X.copy()
    y, ydot = rb.jvp(f, (x,), (V,))
    with jax.enable_x64(True):
        y_ref, ydot_ref = jax.jvp(f_jax, (jnp.asarray(X),), (jnp.asarray(V),))
    _close(ydot, ydot_ref)
    assert x[1] == 3.0 * X[0]  # NumPy's semantics: the write happened, as without rulebridge


def test_linearize_pushes_any_number_of_tangents():
    f = PROGRAMS["vector"](np)
    y, f_jvp = rb.linearize(f, X)
    with jax.enable_x64(True):
        y_ref, j_ref = jax.linearize(PROGRAMS["vector"](jnp), jnp.asarray(X))
        for v in (V, X, np.ones(5)):
            _close(f_jvp(v), j_ref(jnp.asarray(v)))
    _close(y, y_ref)


def test_argnums_has_aux_and_ownership():
    def f(a, b):
        return np.sin(a) * b, {"aux": a}

    v = V.copy()
    y, ydot, aux = rb.jvp(f, (X, B[0]), (v,), argnums=0, has_aux=True)
    _close(ydot, np.cos(X) * B[0] * V)
    assert not np.shares_memory(ydot, v) and ydot.flags.writeable
    jac, aux2 = rb.jacfwd(f, argnums=(0, 1), has_aux=True)(X, B[0])
    _close(jac[0], np.diag(np.cos(X) * B[0]))
    _close(jac[1], np.sin(X))
    assert np.array_equal(aux["aux"], X)


def test_identity_returns_a_tangent_the_caller_owns():
    v = V.copy()
    _, ydot = rb.jvp(lambda x: x, (X,), (v,))
    assert not np.shares_memory(ydot, v)
    _close(ydot, V)


def test_a_tangent_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match="shape"):
        rb.jvp(np.sin, (X,), (np.ones(3),))


@pytest.mark.parametrize("source", SOURCES)
def test_debug_mode_hands_each_pushforward_its_rule_s_own_residuals(source):
    f_np, f_jax = PROGRAMS["tanh"](np), PROGRAMS["tanh"](jnp)
    with rb.debug():
        _, ydot = rb.jvp(lambda x: f_np(x) * np.sum(x[1:] * x[0]), (X,), (V,), source=source)
    with jax.enable_x64(True):
        _, ydot_ref = jax.jvp(lambda x: f_jax(x) * jnp.sum(x[1:] * x[0]), (jnp.asarray(X),),
                              (jnp.asarray(V),))
    _close(ydot, ydot_ref)

"""Random containers for the tree and import_rule tests: every kind of node rulebridge.tree
knows, and a weighted program over their float leaves."""

from collections import namedtuple

import jax
import numpy as np

import rulebridge as rb

Layer = namedtuple("Layer", "W b")


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


rb.register_container(Pair, lambda p: ((p.a, p.b), None), lambda aux, c: Pair(*c))
jax.tree_util.register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda aux, c: Pair(*c))


def random_tree(rng, depth=0, pool=None):
    """A random nesting of dict (keys inserted in random order), list, tuple, namedtuple, Pair,
    None and empty containers over float arrays, Python and NumPy float scalars, ints, int
    arrays, and arrays that appear twice."""
    pool = [] if pool is None else pool
    kind = rng.integers(0, 10) if depth < 3 else 10
    if kind <= 2:
        keys = [str(k) for k in rng.permutation(["w", "a", "k", "b"])[:rng.integers(0, 4)]]
        return {k: random_tree(rng, depth + 1, pool) for k in keys}
    if kind <= 4:
        items = [random_tree(rng, depth + 1, pool) for _ in range(rng.integers(0, 3))]
        return items if kind == 3 else tuple(items)
    if kind == 5:
        return Layer(random_tree(rng, depth + 1, pool), random_tree(rng, depth + 1, pool))
    if kind == 6:
        return Pair(random_tree(rng, depth + 1, pool), random_tree(rng, depth + 1, pool))
    if kind == 7:
        return None
    choice = rng.integers(0, 6)
    if choice == 0 and pool:
        return pool[rng.integers(0, len(pool))]  # the same array again
    if choice == 1:
        return float(rng.normal())
    if choice == 2:
        return np.float64(rng.normal())
    if choice == 3:
        return int(rng.integers(1, 4)) if rng.random() < 0.5 else np.arange(2)
    leaf = rng.normal(size=tuple(rng.integers(1, 3, size=rng.integers(0, 3))))
    pool.append(leaf)
    return leaf


def weighted(xp, tree):
    """Each float leaf through sin, weighted by its place; int leaves scale the total."""
    leaves = jax.tree_util.tree_leaves(tree)
    floats = [leaf for leaf in leaves if np.result_type(leaf).kind == "f"]
    scale = 1 + sum(xp.sum(leaf) for leaf in leaves if np.result_type(leaf).kind == "i")
    return scale * sum((xp.sum(xp.sin(leaf) * (k + 1)) for k, leaf in enumerate(floats)),
                       xp.float64(0.0))

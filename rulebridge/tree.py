"""Containers of arrays: flatten any nesting of tuple, list, dict and namedtuple (and types
registered with `register_container`) to its leaves and back, as `jax.tree_util` does.

The conventions are JAX's: a dict's children are its values in sorted key order (insertion
order when the keys cannot be sorted, and always for an OrderedDict); a namedtuple is a node
whose children are its fields; None is a node with no children, so it comes back as None;
anything else (an array, a scalar, a string, a list subclass) is a leaf. `rulebridge.flatten`,
one vector for `scipy.optimize`, is rulebridge/flat.py.

This module is the layer above errors.py (whose errors it raises, so that a misuse names the
user's line): it knows nothing of the engine.
"""

from __future__ import annotations

from collections import OrderedDict, defaultdict
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from .errors import ArgumentError, UsageError


class _Node(NamedTuple):
    """How one container type comes apart: `split(x) -> (children, aux)`,
    `build(aux, children) -> x`, `key(aux, i)` (the path entry of child i), and its `kind`,
    which says what a cotangent laid out like it may be ("sequence": any tuple or list of the
    same length; "mapping": any dict with the same keys, `keys(aux)`; else the same type)."""

    split: Callable[[Any], tuple[Iterable[Any], Any]]
    build: Callable[[Any, list], Any]
    key: Callable[[Any, int], str]
    kind: str = "other"
    keys: Callable[[Any], tuple] = tuple


def _sorted_keys(d: dict) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError:  # keys of mixed types: insertion order, kept in the structure
        return tuple(d)


def _split_dict(d: dict) -> tuple[list, tuple]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _split_defaultdict(d: defaultdict) -> tuple[list, tuple]:
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _index_key(aux: Any, i: int) -> str:
    return f"[{i}]"


def _key_of(keys: tuple, i: int) -> str:
    return f"[{keys[i]!r}]"


_NODES: dict[type, _Node] = {
    tuple: _Node(lambda t: (t, None), lambda aux, c: tuple(c), _index_key, "sequence"),
    list: _Node(lambda t: (t, None), lambda aux, c: list(c), _index_key, "sequence"),
    dict: _Node(_split_dict, lambda keys, c: dict(zip(keys, c)), _key_of, "mapping"),
    OrderedDict: _Node(lambda d: (list(d.values()), tuple(d)),
                       lambda keys, c: OrderedDict(zip(keys, c)), _key_of, "mapping"),
    defaultdict: _Node(_split_defaultdict, lambda aux, c: defaultdict(aux[0], zip(aux[1], c)),
                       lambda aux, i: _key_of(aux[1], i), "mapping", lambda aux: aux[1]),
    type(None): _Node(lambda _: ((), None), lambda aux, c: None, _index_key, "none"),
}
_NAMEDTUPLE = _Node(lambda t: (t, type(t)), lambda cls, c: cls(*c),
                    lambda cls, i: f".{cls._fields[i]}", "sequence")


def register_container(cls: type, flatten: Callable[[Any], tuple[Iterable[Any], Any]],
                       unflatten: Callable[[Any, Iterable[Any]], Any]) -> None:
    """Make `cls` a container whose children rulebridge differentiates through, as
    `jax.tree_util.register_pytree_node` does.

    Parameters
    ----------
    cls : type
        The container type (exact type: subclasses are registered separately).
    flatten : callable
        `flatten(obj) -> (children, aux)`: the children (arrays, scalars or containers) in a
        fixed order, and any static data needed to rebuild `obj` (hashable or not).
    unflatten : callable
        `unflatten(aux, children) -> obj`: a new `cls` from `aux` and children in the same
        order. It must accept any values as children (gradients, traced values).
    """
    if not isinstance(cls, type):
        raise UsageError(f"register_container takes a type first, got {cls!r}.",
                         fix="rulebridge.register_container(type(obj), flatten, unflatten)")
    if cls in _NODES and cls not in _REGISTERED:
        raise ArgumentError(f"register_container: {cls.__name__} is a built-in container and "
                            "cannot be redefined.",
                            fix=f"class My{cls.__name__.title()}({cls.__name__}): ...  # a "
                                "subclass is a type of its own, which may be registered")
    _REGISTERED.add(cls)
    _NODES[cls] = _Node(lambda x: flatten(x), lambda aux, c: unflatten(aux, c), _index_key)


_REGISTERED: set[type] = set()


def _node_of(x: Any) -> _Node | None:
    node = _NODES.get(type(x))
    if node is None and isinstance(x, tuple) and hasattr(type(x), "_fields"):
        return _NAMEDTUPLE
    return node


class Structure:
    """The shape of a container without its leaves (JAX's PyTreeDef): `LEAF`, or a node
    with its type's rebuild data and the structures of its children."""

    __slots__ = ("node", "aux", "children", "n_leaves")

    def __init__(self, node: _Node | None, aux: Any, children: tuple[Structure, ...]) -> None:
        self.node, self.aux, self.children = node, aux, children
        self.n_leaves = 1 if node is None else sum(c.n_leaves for c in children)

    @property
    def is_leaf(self) -> bool:
        return self.node is None

    def type_name(self) -> str:
        """The container's type name ("leaf" for a leaf)."""
        if self.node is None:
            return "leaf"
        if self.node is _NAMEDTUPLE:
            return self.aux.__name__
        return next((t.__name__ for t, n in _NODES.items() if n is self.node), "container")

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """The container of this structure with `leaves` in flattening order."""
        items = iter(leaves)
        tree = self._build(items)
        if next(items, _END) is not _END:
            raise ArgumentError(f"unflatten: more leaves than the {self.n_leaves} this structure "
                                "has.", fix=_SAME_COUNT)
        return tree

    def _build(self, items: Iterator[Any]) -> Any:
        if self.node is None:
            leaf = next(items, _END)
            if leaf is _END:
                raise ArgumentError("unflatten: fewer leaves than the structure has.",
                                    fix=_SAME_COUNT)
            return leaf
        return self.node.build(self.aux, [c._build(items) for c in self.children])

    def paths(self, root: str = "") -> list[str]:
        """Each leaf's path in flattening order, as Python would index it: `params['W'][0]`."""
        if self.node is None:
            return [root]
        out: list[str] = []
        for i, child in enumerate(self.children):
            out.extend(child.paths(root + self.node.key(self.aux, i)))
        return out

    def flatten_up_to(self, tree: Any, root: str = "",
                      of: str = "the output it is the cotangent of") -> list:
        """The leaves of `tree` where this structure has leaves (a cotangent laid out like an
        output, `of` saying what it is laid out like in the error): None in place of a whole
        subtree stands for None at each of its leaves; tuples, lists and namedtuples match each
        other by length, mappings by keys."""
        out: list = []
        try:
            self._match(tree, root, out, of)
        except ArgumentError as exc:
            name, like = ("tangent", "x") if of.startswith("the argument") else (root or "ct", "y")
            raise ArgumentError(exc.message, fix=(
                f"{name} = rulebridge.tree.tree_map(np.ones_like, {like})  # laid out like "
                f"{of.split(' it is')[0]} {like}, None for a zero")) from None
        return out

    def _match(self, tree: Any, path: str, out: list, of: str) -> None:
        if self.node is None:
            out.append(tree)
            return
        if tree is None:
            out.extend([None] * self.n_leaves)
            return
        node = self.node
        if node.kind == "sequence":
            ok = isinstance(tree, (tuple, list)) and len(tree) == len(self.children)
            items = list(tree) if ok else []
            wanted = f"a tuple or list of {len(self.children)}"
        elif node.kind == "mapping":
            keys = node.keys(self.aux)
            ok = isinstance(tree, dict) and set(tree) == set(keys)
            items = [tree[k] for k in keys] if ok else []
            wanted = f"a dict with the keys {', '.join(map(repr, keys))}"
        else:  # None, or a registered type: the same type, with as many children
            ok = _node_of(tree) is node
            items = list(node.split(tree)[0]) if ok else []
            ok = ok and len(items) == len(self.children)
            wanted = "None" if node.kind == "none" else f"a {self.type_name()} like the output"
        if not ok:
            raise ArgumentError(f"{path or 'the value'} should be {wanted} (as {of}), but it "
                                f"is {describe(tree)}.")
        for i, (child, item) in enumerate(zip(self.children, items)):
            child._match(item, path + node.key(self.aux, i), out, of)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Structure):
            return NotImplemented
        return (self.node is other.node and _same_aux(self.aux, other.aux)
                and self.children == other.children)

    def __hash__(self) -> int:
        return hash((id(self.node), len(self.children), self.n_leaves))

    def __repr__(self) -> str:
        return f"Structure({self.unflatten(['*'] * self.n_leaves)!r})"


_END = object()
LEAF = Structure(None, None, ())
_SAME_COUNT = "structure.unflatten(leaves)  # with leaves = tree_flatten(tree)[0], one per leaf"


def _same_aux(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # an aux whose == is elementwise or raises: identity only
        return a is b


def describe(x: Any) -> str:
    """`a list of 3 item(s)`, `an ndarray of shape (2,)`, `an int`: for error messages."""
    name = type(x).__name__
    article = "an" if name[0] in "aeiouAEIOU" or name == "ndarray" else "a"
    if isinstance(x, (tuple, list, dict)):
        return f"{article} {name} of {len(x)} item(s)"
    shape = getattr(x, "shape", None)
    return f"{article} {name}" + (f" of shape {shape}" if shape is not None else "")


def tree_flatten(tree: Any) -> tuple[list, Structure]:
    """`(leaves, structure)`: the leaves of `tree` in JAX's order and how to put them back."""
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(x: Any, leaves: list) -> Structure:
    node = _node_of(x)
    if node is None:
        leaves.append(x)
        return LEAF
    children, aux = node.split(x)
    return Structure(node, aux, tuple(_flatten(c, leaves) for c in children))


def tree_structure(tree: Any) -> Structure:
    return tree_flatten(tree)[1]


def tree_leaves(tree: Any) -> list:
    return tree_flatten(tree)[0]


def tree_map(f: Callable[[Any], Any], tree: Any) -> Any:
    """`tree` with each leaf replaced by `f(leaf)`."""
    leaves, structure = tree_flatten(tree)
    return structure.unflatten([f(leaf) for leaf in leaves])


def is_container(x: Any) -> bool:
    """True for a value `tree_flatten` takes apart (tuple, list, dict, namedtuple, None, a
    registered type), False for a leaf."""
    return _node_of(x) is not None

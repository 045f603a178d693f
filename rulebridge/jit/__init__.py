"""Trace once, run many: `rulebridge.jit` records a function's program on its first call and
replays it with NumPy alone after (docs/jit.md).

- program.py: the tape compiled into straight-line Python, forward and reverse, with the
  recorded decisions as guards; runtime.py: what that code calls when it runs;
- variant.py: one recorded program at one key, traced as the transformation would run, and how
  a replay builds the result;
- environment.py: the state beyond the arguments a function reaches, checked unchanged before
  each replay;
- jitted.py: the cache of variants and the order a call is answered in.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar, overload

from .jitted import BACKENDS, Jitted
from .program import GuardFailed, Mismatch, Program

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["jit", "Jitted", "Program", "BACKENDS", "GuardFailed", "Mismatch"]


@overload
def jit(fun: F, *, static_argnums: int | Sequence[int] = (), max_variants: int = 32,
        backend: str = "numpy") -> F: ...


@overload
def jit(fun: None = None, *, static_argnums: int | Sequence[int] = (), max_variants: int = 32,
        backend: str = "numpy") -> Callable[[F], F]: ...


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        max_variants: int = 32, backend: str = "numpy") -> Any:
    """`fun`, recorded once per key and replayed after with NumPy alone.

    Parameters
    ----------
    fun : callable
        A function of NumPy code, or a transformation of one: `grad(f)`, `value_and_grad(f)`,
        `jacobian(f)`, `hessian(f)`. Usable as a decorator, with or without arguments.
    static_argnums : int or sequence of int
        Arguments whose values choose the program (a loop count, a mode string): hashable, and
        part of the key by value. Every other argument's float and complex leaves are the
        program's inputs; its other leaves (ints, bools, strings, integer arrays) are part of
        the key by value, as are keyword arguments.
    max_variants : int
        How many recorded programs to keep (per key, one per path the inputs took; the least
        recently used key's are dropped first).
    backend : str
        "numpy" (the replay described here) or the name of a back end an adapter installed
        ("jax": the JAX adapter stages the program into `jax.jit`).

    Returns
    -------
    Jitted
        Callable as `fun` is, returning what `fun` returns: the eager result of the first call
        at a key, then replays equal to it to the bit. A replay is guarded by every decision the
        program took on a traced value (branches, lengths, int() and index values, shapes,
        dtypes, ops whose answer carries no gradient); a guard that fails records the new
        path. The state it reaches beyond its arguments (closure variables, globals, arrays
        in them, by their bytes) is checked unchanged before each replay; a change records it
        again. A function that draws random numbers inside, changes state outside itself, or
        writes into an argument is refused with `JitError`, as is one whose first replay is
        not its own result to the bit.

    Examples
    --------
    >>> import numpy as np, rulebridge as rb
    >>> step = rb.jit(rb.value_and_grad(lambda w, x: np.sum(np.tanh(x @ w) ** 2)))
    >>> w, x = np.ones(3), np.eye(3)
    >>> loss, g = step(w, x)          # traced: the eager call
    >>> loss, g = step(w * 0.5, x)    # replayed: no boxes, no rule lookups
    """
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    static = tuple(static_argnums)
    if backend != "numpy" and backend not in BACKENDS:
        _load_backend(backend)
    if backend != "numpy" and backend not in BACKENDS:
        from ..errors import UsageError

        raise UsageError(f"rulebridge.jit: no back end {backend!r} is installed (there are: "
                         f"{', '.join(['numpy', *BACKENDS])}).",
                         fix='rulebridge.jit(f, backend="numpy")  # or install the adapter that '
                             'provides that back end')

    def wrap(f: Callable) -> Jitted:
        if not callable(f):
            from ..errors import UsageError

            raise UsageError(f"rulebridge.jit takes a function, got {type(f).__name__}.",
                             fix="rulebridge.jit(f)  # or @rulebridge.jit above def f")
        return Jitted(f, static, max_variants, backend)

    return wrap if fun is None else wrap(fun)


def _load_backend(name: str) -> None:
    """An adapter installs its back end into BACKENDS when it loads: load the installed adapter
    of that name, if there is one (the core names no source; the caller named it). An adapter
    that fails to load raises its own AdapterError."""
    from ..rules.adapter import discover

    info = discover().get(name)
    if info is not None and info.available:
        info.load()

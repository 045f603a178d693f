"""`rulebridge demo`: a two-layer network's loss, differentiated without changing a line."""

from __future__ import annotations

import numpy as np

from .api import grad, trace


def loss(W1, W2, X, y):
    h = np.tanh(X @ W1)
    logits = h @ W2
    logits = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(np.take_along_axis(log_probs, y[:, None], axis=1))


def run(dot: str | None = None) -> int:
    """Differentiate `loss` at seeded inputs; print the loss, the gradient and the tape.

    Parameters
    ----------
    dot : str, optional
        Also write the tape as Graphviz DOT text to this file; ``"-"`` prints only the DOT
        text, for a pipe: ``rulebridge demo --dot - | dot -Tsvg -o tape.svg``.

    Returns
    -------
    int
        The exit status, 0.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 4))
    y = rng.integers(0, 3, size=8)
    W1 = rng.normal(size=(4, 5)) * 0.5
    W2 = rng.normal(size=(5, 3)) * 0.5
    gW1, gW2 = grad(loss, argnums=(0, 1))(W1, W2, X, y)
    value, tape = trace(loss, W1, W2, X, y)
    if dot == "-":
        print(tape.to_dot(), end="")
        return 0
    np.set_printoptions(precision=4, suppress=True)
    print(f"loss = {value:.6f}")
    print("d loss / d W2 =")
    print(gW2)
    print(f"|d loss / d W1| = {np.linalg.norm(gW1):.6f}")
    print()
    print(tape)
    if dot is not None:
        with open(dot, "w") as file:
            file.write(tape.to_dot())
        print(f"\nwrote the tape as Graphviz DOT to {dot}: render it with "
              f"`dot -Tsvg {dot} -o tape.svg`")
    return 0

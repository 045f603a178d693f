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


def run(argv: list[str] | None = None) -> int:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 4))
    y = rng.integers(0, 3, size=8)
    W1 = rng.normal(size=(4, 5)) * 0.5
    W2 = rng.normal(size=(5, 3)) * 0.5
    gW1, gW2 = grad(loss, argnums=(0, 1))(W1, W2, X, y)
    value, tape = trace(loss, W1, W2, X, y)
    np.set_printoptions(precision=4, suppress=True)
    print(f"loss = {value:.6f}")
    print("d loss / d W2 =")
    print(gW2)
    print(f"|d loss / d W1| = {np.linalg.norm(gW1):.6f}")
    print()
    print(tape)
    return 0

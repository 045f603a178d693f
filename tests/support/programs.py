"""Realistic NumPy programs, each written once against an array namespace `xp`.

Called with `xp=numpy` they are the unmodified NumPy code rulebridge differentiates; called with
`xp=jax.numpy` they give the independent reference (jax.grad in float64).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


def logistic_l2(xp, w, X, y):
    p = 1.0 / (1.0 + xp.exp(-(X @ w)))
    return -xp.mean(y * xp.log(p) + (1.0 - y) * xp.log(1.0 - p)) + 0.1 * xp.sum(w ** 2)


def mlp_cross_entropy(xp, W1, b1, W2, X, labels):
    h = xp.tanh(X @ W1 + b1)
    logits = h @ W2
    logits = logits - xp.max(logits, axis=1, keepdims=True)
    log_probs = logits - xp.log(xp.sum(xp.exp(logits), axis=1, keepdims=True))
    return -xp.mean(xp.take_along_axis(log_probs, labels[:, None], axis=1))


def gp_log_marginal_likelihood(xp, theta, x, y):
    lengthscale, variance = xp.exp(theta[0]), xp.exp(2.0 * theta[1])
    d = x[:, None] - x[None, :]
    K = variance * xp.exp(-0.5 * d ** 2 / lengthscale ** 2) + 0.5 * xp.eye(x.shape[0])
    L = xp.linalg.cholesky(K)
    alpha = xp.linalg.solve(L.T, xp.linalg.solve(L, y))
    return (-0.5 * (y @ alpha) - xp.sum(xp.log(xp.diag(L)))
            - 0.5 * x.shape[0] * math.log(2 * math.pi))


def rk4_pendulum(xp, theta, y0):
    def field(y):
        return xp.stack([y[1], -theta[0] * xp.sin(y[0]) - theta[1] * y[1]])

    y, h = y0, 0.05
    for _ in range(40):
        k1 = field(y)
        k2 = field(y + 0.5 * h * k1)
        k3 = field(y + 0.5 * h * k2)
        k4 = field(y + h * k3)
        y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return xp.sum(y ** 2)


def kron_of_slices_triu(xp, A, B):
    return xp.sum(xp.kron(A[:3, 1:4], xp.triu(B)) ** 2) + xp.sum(xp.tril(A, -1) * A)


def where_maximum_clip(xp, x):
    return xp.sum(xp.where(x > 0, x ** 2, -x) + xp.maximum(x, 0.3) * xp.clip(x, -0.5, 0.8))


def fft_power_spectrum(xp, x):
    window = 0.5 - 0.5 * xp.cos(2 * math.pi * xp.arange(x.shape[0]) / x.shape[0])
    spectrum = xp.fft.rfft(x * window)
    power = xp.abs(spectrum) ** 2
    full = xp.fft.fft(x)
    return xp.sum(power * xp.arange(power.shape[0])) + xp.sum(xp.real(full * xp.conj(full))) / 7.0


def slogdet_eigh(xp, A):
    S = A @ A.T + 3.0 * xp.eye(A.shape[0])
    sign, logdet = xp.linalg.slogdet(S)
    w, V = xp.linalg.eigh(S)
    return sign * logdet + xp.sum(xp.sqrt(w)) + xp.sum(V[:, -1] ** 4)


@dataclass(frozen=True)
class Program:
    name: str
    function: Callable
    make_args: Callable[[np.random.Generator], tuple]
    argnums: tuple[int, ...]


def _logistic_args(rng):
    X = rng.normal(size=(20, 4))
    return rng.normal(size=4) * 0.5, X, (rng.uniform(size=20) > 0.5).astype(np.float64)


def _mlp_args(rng):
    return (rng.normal(size=(4, 6)) * 0.5, rng.normal(size=6) * 0.1, rng.normal(size=(6, 3)) * 0.5,
            rng.normal(size=(10, 4)), rng.integers(0, 3, size=10))


def _gp_args(rng):
    x = np.arange(12) * 0.4
    return np.array([0.1, -0.2]), x, np.sin(x) + 0.1 * rng.normal(size=12)


def _away_from_kinks(rng, n):
    x = rng.uniform(-1.0, 1.0, size=n)
    kinks = np.array([0.0, 0.3, -0.5, 0.8])
    near = np.abs(x[:, None] - kinks[None, :]).min(axis=1) < 0.05
    return np.where(near, x + 0.1, x)


PROGRAMS = [
    Program("logistic_l2", logistic_l2, _logistic_args, (0,)),
    Program("mlp_cross_entropy", mlp_cross_entropy, _mlp_args, (0, 1, 2)),
    Program("gp_log_marginal_likelihood", gp_log_marginal_likelihood, _gp_args, (0, 2)),
    Program("rk4_pendulum", rk4_pendulum,
            lambda rng: (np.array([1.3, 0.2]), np.array([0.9, -0.3])), (0, 1)),
    Program("kron_of_slices_triu", kron_of_slices_triu,
            lambda rng: (rng.normal(size=(4, 5)), rng.normal(size=(3, 3))), (0, 1)),
    Program("where_maximum_clip", where_maximum_clip, lambda rng: (_away_from_kinks(rng, 16),),
            (0,)),
    Program("fft_power_spectrum", fft_power_spectrum, lambda rng: (rng.normal(size=16),), (0,)),
    Program("slogdet_eigh", slogdet_eigh, lambda rng: (rng.normal(size=(4, 4)),), (0,)),
]

"""Gradients computed concurrently in 8 threads equal the serial results, bit for bit: each call
has its own tape, boxes carry their tape, and the registry's lazy caches and adapter loading are
safe to hit from many threads at once."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import rulebridge as rb
from rulebridge.rules.registry import REGISTRY, Registry

THREADS = 8
RNG = np.random.default_rng(8)
A = RNG.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)


def softmax_loss(w):
    logits = np.tanh(w[:, :3]) @ A[:3]
    logits = logits - np.max(logits, axis=1, keepdims=True)
    return -np.mean(logits[:, 0] - np.log(np.sum(np.exp(logits), axis=1)))


def linear_algebra(w):
    m = w @ w.T + SPD
    return np.linalg.slogdet(m)[1] + np.sum(np.linalg.solve(m, w[:, 0])) + np.sum(
        np.linalg.eigh(m)[0] ** 2)


def control_flow_and_writes(w):
    u = np.copy(w)
    for row in range(len(u)):
        if np.sum(u[row]) > 0:
            u[row] = np.sin(u[row])
        else:
            u[row] *= 2.0
    return np.sum(u ** 2) + np.prod(np.cos(w[0]))


def float32_indexing(w):
    w = w.astype(np.float32)
    return np.sum(np.concatenate([w[::2], w[1:2] * 3]) ** 2) + np.sum(np.stack([w[0], w[-1]]))


PROGRAMS = [softmax_loss, linear_algebra, control_flow_and_writes, float32_indexing]


def _sources():
    return [name for name in rb.adapters() if name in ("autograd", "jax") and name.available]


@pytest.mark.parametrize("source", [None] + _sources())
def test_gradients_in_eight_threads_equal_the_serial_ones(source):
    inputs = [RNG.normal(size=(4, 4)) for _ in range(6)]
    jobs = [(f, x) for f in PROGRAMS for x in inputs]
    serial = [rb.value_and_grad(f, source=source)(x) for f, x in jobs]
    rb.prefer(*REGISTRY.order())  # empties the rule caches: threads refill them
    start = threading.Barrier(THREADS)

    def run(worker):
        start.wait()
        indices = list(range(len(jobs)))
        order = indices[worker % 2::2] + indices[: worker % 3]  # overlapping, differently ordered
        return [(i, rb.value_and_grad(jobs[i][0], source=source)(jobs[i][1])) for i in order * 3]

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(run, range(THREADS)))
    for per_thread in results:
        for index, (value, gradient) in per_thread:
            assert value == serial[index][0]
            np.testing.assert_array_equal(gradient, serial[index][1])


def test_adapter_loading_and_rule_lookup_race_on_a_fresh_registry():
    registry = Registry()
    start = threading.Barrier(THREADS)
    signature = rb.signature_of((np.ones(3),))

    def lookup(_):
        start.wait()
        return registry.lookup(np.sin, signature), registry.adapter("autograd")

    with ThreadPoolExecutor(THREADS) as pool:
        found = list(pool.map(lookup, range(THREADS)))
    rules = {id(rule) for rule, _ in found}
    adapters = {id(adapter) for _, adapter in found}
    assert len(adapters) == 1  # loaded once
    assert len(rules) == 1 and found[0][0].source == "autograd" and not found[0][0].missing


def test_a_box_used_in_another_thread_is_refused_like_any_foreign_box():
    boxes = []

    def keep(x):
        boxes.append(x)
        return np.sum(x)

    rb.grad(keep)(np.ones(2))
    with ThreadPoolExecutor(1) as pool:
        outcome = pool.submit(lambda: rb.grad(lambda y: np.sum(y * boxes[0]))(np.ones(2)))
        with pytest.raises(rb.NestedDifferentiationError):
            outcome.result()

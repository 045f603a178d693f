"""Realistic programs: rulebridge's gradient equals jax.grad of the same program in jax.numpy
(float64) to 1e-6 relative, with the rules from each source; and float64 central differences
agree too, so the reference is not trusted blindly either."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import central_difference
from tests.support.programs import PROGRAMS, Program

SOURCES = ["autograd", "jax"]


def _reference_gradients(program: Program, args: tuple) -> tuple:
    with jax.enable_x64(True):
        f = functools.partial(program.function, jnp)
        jax_args = tuple(jnp.asarray(a) for a in args)
        grads = jax.grad(f, argnums=program.argnums)(*jax_args)
        return tuple(np.asarray(g) for g in grads)


def _assert_close(actual, expected, rtol):
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_gradient_matches_jax_reference(program: Program, source: str):
    args = program.make_args(np.random.default_rng(42))
    f = functools.partial(program.function, np)
    value, grads = rb.value_and_grad(f, argnums=program.argnums, source=source)(*args)
    assert value == f(*args)  # the primal is NumPy's own, to the bit
    for g, ref, i in zip(grads, _reference_gradients(program, args), program.argnums):
        assert g.shape == args[i].shape and g.dtype == args[i].dtype
        _assert_close(g, ref, rtol=1e-6)


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_jax_reference_agrees_with_central_differences(program: Program):
    args = program.make_args(np.random.default_rng(42))
    f = functools.partial(program.function, np)
    for ref, i in zip(_reference_gradients(program, args), program.argnums):
        _assert_close(ref, central_difference(f, args, i), rtol=1e-5)


def test_eigh_and_slogdet_are_single_two_output_ops():
    A = np.random.default_rng(0).normal(size=(4, 4))
    _, tape = rb.trace(functools.partial(PROGRAMS[-1].function, np), A)
    lines = str(tape).splitlines()
    for name in ("slogdet(", "eigh("):
        (line,) = [ln for ln in lines if name in ln]
        outputs = line.split("=")[0].split(",")
        assert len(outputs) == 2, line

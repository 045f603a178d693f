"""`rulebridge.CallForward`: the forward the engine runs inline. Inline or called, it must give the
same primal and residuals, and a wrapper that replaces a rule's forward must never be skipped."""

import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import central_difference


def test_called_and_inline_forwards_agree_to_the_bit():
    x = np.linspace(-1.0, 2.0, 7)
    out, residuals = rb.CallForward(np.sin)((x,), {})
    assert np.array_equal(out, np.sin(x)) and residuals[0] is out
    assert residuals[1][0] is x and residuals[2] is None

    y, tape = rb.trace(lambda v: np.sin(v), x, source="autograd")
    (op,) = tape.ops
    assert type(op.rule.forward) is rb.CallForward
    assert np.array_equal(y, np.sin(x))
    inline_out, inline_args, inline_kwargs = op.residuals
    assert np.array_equal(inline_out, out) and inline_kwargs is None
    # The caller's array itself, not a copy, seen read-only (rules must not write into it)
    assert np.shares_memory(inline_args[0], x) and not inline_args[0].flags.writeable


def test_keywords_reach_the_function_and_the_residuals():
    x = np.arange(12.0).reshape(3, 4) / 7
    out, residuals = rb.CallForward(np.sum)((x,), {"axis": 1, "keepdims": True})
    assert out.shape == (3, 1) and residuals[2] == {"axis": 1, "keepdims": True}

    def f(v):
        return np.sum(np.sum(np.tanh(v), axis=1, keepdims=True) ** 2)

    (op,) = [op for op in rb.trace(f, x, source="autograd")[1].ops if op.kwargs]
    # in the one spelling rules see (rulebridge/rules/keys.py): axis continues the positions
    assert op.residuals[1][1:] == (1,) and op.residuals[2] == {"keepdims": True}
    expected = central_difference(f, (x,))
    np.testing.assert_allclose(rb.grad(f, source="autograd")(x), expected, rtol=1e-6)


def test_a_wrapped_forward_runs_instead_of_the_inline_call():
    """Debug mode replaces every rule's forward with a checking one: the tape must run that one,
    or its checks would be skipped."""
    x = np.linspace(0.1, 1.0, 5)
    with rb.debug():
        _, tape = rb.trace(lambda v: np.sum(np.cos(v)), x, source="autograd")
    assert all(type(op.rule.forward) is not rb.CallForward for op in tape.ops)
    with rb.debug():
        g = rb.grad(lambda v: np.sum(np.cos(v)), source="autograd")(x)
    np.testing.assert_allclose(g, -np.sin(x), rtol=1e-12)


def test_a_call_forward_names_its_function():
    assert repr(rb.CallForward(np.linalg.solve)) == "CallForward(numpy.linalg.solve)"
    with pytest.raises(TypeError):
        rb.CallForward(np.sin)((np.ones(2), np.ones(2), np.ones(2), np.ones(2)), {})

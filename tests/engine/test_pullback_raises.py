"""A rule that raises inside its pullback during the sweep, at a key where it was trusted (a
status verified it there, or it passed the check at an earlier call's inputs): never a raw crash.
With `source=None` the op's gradient
comes from the next source's rule, re-run on the op's own arguments; with a named source, or
where re-running is not possible, a RuleContractError names the function, the key, the source,
the exception and the sources to say instead. A pullback that raises never returns a wrong number,
so one awkward input does not demote the source at the key: the next call uses it again where it
works (issue 22, section 4)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rulebridge as rb

from tests.support.numerical import central_difference
from tests.support.preferred import preferred
from tests.support.adapters import SignFlippedSin

RNG = np.random.default_rng(4)


class Brittle(rb.Adapter):
    """np.sin, right where the VJP works (|x| <= 1 and |g| <= 5) and raising elsewhere: a
    source whose VJP does not handle some values at a key it passes its checks at."""

    name = "brittle"
    unary = False
    compacts = False  # a CallForward.compact that keeps the residuals: the op's args are shed
    pullbacks = 0

    def version(self):
        return "0.1"

    def functions(self):
        return [np.sin]

    def build_rule(self, function, signature):
        if function is not np.sin:
            raise rb.Declined("brittle has np.sin only")

        def vjp(x, g):
            Brittle.pullbacks += 1
            if np.any(np.abs(x) > 1.0) or np.any(np.abs(g) > 5.0):
                raise FloatingPointError("brittle_sin_vjp: outside the range it handles")
            return g * np.cos(x)

        def pullback(residuals, g, argnums):
            return (vjp(residuals[1][0], g),)

        unary_vjp = (lambda out, x: lambda g: vjp(x, g)) if self.unary else None
        compact = (lambda residuals, argnums: residuals) if self.compacts else None
        return rb.Rule(np.sin, signature, rb.CallForward(np.sin, compact), pullback,
                       source=self.name,
                       source_version="0.1", unary_vjp=unary_vjp)


class BrittleUnary(Brittle):
    """The same, through the sweep's path for `y = f(x)` (autograd's VJP-maker form)."""

    name = "brittle-unary"
    unary = True


class ShedBrittle(Brittle):
    name = "brittle-shed"
    compacts = True


class ShedBrittleUnary(BrittleUnary):
    name = "brittle-unary-shed"
    compacts = True


@pytest.fixture(params=[Brittle, BrittleUnary], ids=["pullback", "unary_vjp"])
def brittle(request):
    """The adapter's name. Verdicts are kept per process and key, and a key is the dtype and
    ndim: each test below runs at ndims no other test uses (`_fresh`)."""
    with preferred(np.sin, request.param()) as name:
        yield name


@pytest.fixture(params=[ShedBrittle, ShedBrittleUnary], ids=["pullback", "unary_vjp"])
def shed_brittle(request):
    """As `brittle`, with a `compact`: the sweep's stand-ins replace the op's large arguments."""
    with preferred(np.sin, request.param()) as name:
        yield name


def _program(a):
    return np.sum(np.sin(a) * a)


def _fresh(ndim: int, brittle: str, low: float, high: float, rows: int = 2):
    shape = (rows, 3) + (1,) * (ndim - 2 + (brittle == BrittleUnary.name))
    return RNG.uniform(low, high, size=shape)


def _key(x) -> str:
    return rb.format_signature(rb.signature_of((x,)))


def _assert_names_everything(text: str, source: str, x) -> None:
    for part in ("numpy.sin", _key(x), source, "FloatingPointError",
                 "brittle_sin_vjp: outside the range it handles"):
        assert part in text, (part, text)


def test_after_a_check_passed_a_raising_pullback_falls_back_to_the_next_source(brittle):
    small = _fresh(13, brittle, -0.9, 0.9)  # a key no shipped status covers
    before = Brittle.pullbacks
    g = rb.grad(_program)(small)
    np.testing.assert_allclose(g, central_difference(_program, (small,)), rtol=1e-6, atol=1e-8)
    assert Brittle.pullbacks > before  # brittle passed its check and was used
    assert rb.REGISTRY.checked("numpy.sin", _key(small))[brittle] == "pass"

    large = 3.0 * small
    with pytest.warns(rb.AdapterWarning) as caught:
        g = rb.grad(_program)(large)
    np.testing.assert_allclose(g, central_difference(_program, (large,)), rtol=1e-6, atol=1e-8)
    text = "\n".join(str(w.message) for w in caught)
    _assert_names_everything(text, brittle, large)
    assert "autograd" in text
    assert rb.REGISTRY.checked("numpy.sin", _key(large))[brittle] == "pass"  # not demoted

    before = Brittle.pullbacks
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = rb.grad(_program)(small)  # brittle works here, and is used again
    np.testing.assert_allclose(g, np.sin(small) + small * np.cos(small))
    assert Brittle.pullbacks > before


def test_a_verified_key_whose_pullback_raises_in_the_checked_gradient_itself(brittle):
    # The first call at the key checks brittle at its inputs (it passes: the check's cotangents
    # are small), and the same gradient's sweep then hands it a cotangent it cannot handle.
    x = _fresh(15, brittle, -0.9, 0.9)

    def f(a):
        return np.sum(10.0 * np.sin(a))

    with pytest.warns(rb.AdapterWarning) as caught:
        g = rb.grad(f)(x)
    np.testing.assert_allclose(g, 10.0 * np.cos(x), rtol=1e-12)
    _assert_names_everything("\n".join(str(w.message) for w in caught), brittle, x)
    assert rb.REGISTRY.checked("numpy.sin", _key(x))[brittle] == "pass"


def test_the_source_named_is_the_candidate_the_check_chose():
    # The preferred source fails its check at first use, brittle (next) passes and is used,
    # then raises in the sweep: brittle is named, and the gradient comes from a third source,
    # never from the one that failed its check.
    x = _fresh(21, Brittle.name, -0.9, 0.9)

    def f(a):
        return np.sum(10.0 * np.sin(a))

    with preferred(np.sin, SignFlippedSin(), Brittle()):
        with pytest.warns(rb.AdapterWarning) as caught:
            g = rb.grad(f)(x)
    np.testing.assert_allclose(g, 10.0 * np.cos(x), rtol=1e-12)
    text = "\n".join(str(w.message) for w in caught)
    _assert_names_everything(text, Brittle.name, x)
    assert SignFlippedSin.name not in text, text
    verdicts = rb.REGISTRY.checked("numpy.sin", _key(x))
    assert verdicts[Brittle.name] == "pass" and verdicts[SignFlippedSin.name] == "fail"


def test_a_shipped_pass_whose_pullback_raises_with_a_named_source_says_which_to_use(brittle):
    x = _fresh(17, brittle, 1.5, 2.0)
    rb.REGISTRY.set_status("numpy.sin", brittle, _key(x), "pass")  # as the shipped matrix says
    _, pullback = rb.vjp(np.sin, x, source=brittle)
    with pytest.raises(rb.RuleContractError) as info:
        pullback(np.ones_like(x))
    text = str(info.value)
    _assert_names_everything(text, brittle, x)
    assert "source='autograd'" in text and "source='jax'" in text, text
    assert isinstance(info.value.__cause__, FloatingPointError)
    _, pullback = rb.vjp(np.sin, x / 3.0, source=brittle)  # where it works, it still serves
    np.testing.assert_allclose(pullback(np.ones_like(x))[0], np.cos(x / 3.0))


def test_an_op_whose_large_arguments_were_shed_raises_instead_of_rerunning(shed_brittle):
    # Large arguments are replaced by stand-ins before the sweep (rulebridge/engine/shedding.py):
    # another source's rule cannot be run on them, so the call raises, saying what to do.
    brittle = shed_brittle
    x = _fresh(19, brittle, 1.5, 2.0, rows=3000)  # 72 KB
    rb.REGISTRY.set_status("numpy.sin", brittle, _key(x), "pass")
    with pytest.raises(rb.RuleContractError) as info:
        rb.grad(_program)(x)
    text = str(info.value)
    _assert_names_everything(text, brittle, x)
    assert "source='autograd'" in text, text
    g = rb.grad(_program)(x)  # the next call uses another source from the start
    np.testing.assert_allclose(g, np.sin(x) + x * np.cos(x), rtol=1e-12)


def test_an_op_whose_large_arguments_stayed_is_rerun_by_another_source(brittle):
    # Without a compact the op keeps its arguments (shedding changes nothing there): they are
    # the forward's, so the next source's rule re-runs on them and the gradient is right.
    x = _fresh(20, brittle, 1.5, 2.0, rows=3000)  # 72 KB
    rb.REGISTRY.set_status("numpy.sin", brittle, _key(x), "pass")
    with pytest.warns(rb.AdapterWarning, match=brittle):
        g = rb.grad(_program)(x)
    np.testing.assert_allclose(g, np.sin(x) + x * np.cos(x), rtol=1e-12)


def test_autograd_s_det_at_a_singular_matrix_falls_back_to_jax_s():
    # autograd's det pullback is det * inv(A).T, and inv raises at a singular matrix, at a key
    # the shipped matrix verifies; det's gradient there is the adjugate, which JAX's rule gives.
    # (float32: a key the other tests leave to autograd.)
    a = np.array([[0.5, 1.25, -0.75], [0.5, -0.25, 1.0], [0.5, 1.25, -0.75]], np.float32)
    assert rb.rule_for(np.linalg.det, rb.signature_of((a,))).status == "pass"

    def f(m):
        return np.linalg.det(m) * np.float32(2.0)

    expected = central_difference(lambda m: 2.0 * np.linalg.det(m), (a.astype(np.float64),))
    with pytest.warns(rb.AdapterWarning, match=r"autograd rule for numpy\.linalg\.det\(float32"
                      r"\[:, :\]\) raised LinAlgError.*jax rule instead"):
        g = rb.grad(f)(a)
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-5)
    assert g.dtype == np.float32


def test_forward_mode_falls_back_when_the_pullback_it_transposes_raises(brittle):
    # Brittle has no pushforward: forward mode transposes its pullback, which raises here; the
    # next source's rule gives the tangent, as the reverse sweep's fallback gives the cotangent.
    x = _fresh(14, brittle, 1.5, 2.0)
    t = RNG.normal(size=x.shape)
    rb.REGISTRY.set_status("numpy.sin", brittle, _key(x), "pass")
    with pytest.warns(rb.AdapterWarning, match=brittle):
        _, tangent = rb.jvp(_program, (x,), (t,))
    np.testing.assert_allclose(tangent, np.sum((np.sin(x) + x * np.cos(x)) * t), rtol=1e-12)


def test_forward_mode_at_repeated_eigenvalues_raises_a_clear_error_not_the_sources():
    # The slow forward fuzz's program: eigh of a multiple of the identity. Forward mode pushes
    # every output forward, the eigenvectors too, which have no derivative there: both sources'
    # pullbacks raise FloatingPointError; the call raises rulebridge's error naming them.
    c0 = np.array([0.12573022, -0.13210486])

    def program(x0):
        v2 = np.linalg.eigh((1.0 + np.sum(x0 * x0)) * 2.0 * np.eye(2, dtype=x0.dtype))[0] ** 2
        return np.sum(v2 * c0)

    x = np.array([[0.12573022], [-0.13210486]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(rb.RulebridgeError, match="eigh"):
            rb.jvp(program, (x,), (np.ones_like(x),))


def test_the_key_of_a_nested_op_is_spelled_once_per_signature_and_a_configuration_as_given():
    # engine/fallback.py spells the key of each nested op whose pullback goes to its pullback
    # rule; the text of a signature alone is kept. A configuration's is not: 0.0 and -0.0 are
    # one dict key, but two settings as the user wrote them.
    from rulebridge.engine.fallback import key_text
    from rulebridge.rules.keys import normalise

    args, _, config = normalise(np.sin, (np.ones((2, 3)),), {})
    signature = rb.signature_of(args)
    assert config == () and key_text(signature, config) == "(float64[:, :])"
    assert key_text(signature, config) is key_text(signature, ())
    texts = []
    for ord_ in (0.0, -0.0):
        args, _, config = normalise(np.linalg.norm, (np.ones(3),), {"ord": ord_})
        texts.append(key_text(rb.signature_of(args), config))
    assert texts == ["(float64[:], ord=0.0)", "(float64[:], ord=-0.0)"]

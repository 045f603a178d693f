"""Compiled code inside a trace and in other threads (issue 22, "the process never dies"):
numpy.random (Generator and legacy), NumPy's C functions, scipy.special/ndimage/signal and
Cython-built code allocate through the numpy module, with no Python frame of their own. They
must get real ndarrays, never a box: a box written into as memory is a segmentation fault.
Each program runs in a subprocess, so a crash is a failed test, not a dead suite; values and
gradients are checked against central differences of the same program with the same seed."""

import subprocess
import sys
import textwrap

import pytest

from tests.support.paths import ROOT

PRELUDE = """\
import pickle, threading
import numpy as np
import scipy.ndimage, scipy.signal, scipy.spatial, scipy.special
import rulebridge as rb
from tests.support.numerical import central_difference
X = np.linspace(0.3, 1.4, 5)
"""


def run_isolated(code: str, timeout: float = 240) -> str:
    """Run `code` after PRELUDE in a fresh interpreter; return its stdout, or fail with how it
    died (a negative return code is the signal: -11 a segmentation fault)."""
    source = PRELUDE + textwrap.dedent(code)
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", source], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (f"the child exited with {done.returncode}\n"
                                  f"{done.stdout}\n{done.stderr[-3000:]}")
    return done.stdout


# Programs of `a` (5 float64 values) that call compiled code inside the differentiated function.
PROGRAMS = {
    "legacy_normal": """
        np.random.seed(3)
        return np.sum(a * np.random.normal(size=5))
    """,
    "legacy_random_state": """
        rs = np.random.RandomState(4)
        return np.sum(np.sin(a) * rs.standard_normal(5) + rs.uniform(size=5) * a ** 2)
    """,
    "generator": """
        rng = np.random.default_rng(0)
        return np.sum(a * rng.normal(size=5) + rng.standard_normal((5,)) * np.cos(a)
                      + rng.gamma(2.0, size=5) * a ** 2)
    """,
    "generator_matrix_and_permutation": """
        rng = np.random.default_rng(1)
        e = rng.normal(size=(3, 5))
        return np.sum(np.tanh(e @ a)) + np.sum(rng.permutation(5) * a)
    """,
    "noise_into_a_followed_buffer": """
        rng = np.random.default_rng(2)
        out = np.zeros(5)
        for i in range(5):
            out[i] = a[i] * rng.normal()
        return np.sum(out ** 2) + np.sum(np.random.default_rng(5).random(5) * out)
    """,
    "compiled_call_among_a_followed_calls_arguments": """
        buf = np.zeros(np.shape(np.random.default_rng(0).normal(size=len(a))))
        buf[:] = np.sin(a)
        return np.sum(buf * a)
    """,
    "numpy_c_functions": """
        k = np.array([0.2, 0.5, 0.3])
        c = np.convolve(k, k)
        t = np.interp(np.linspace(0.0, 1.0, 5), [0.0, 1.0], [1.0, 2.0])
        F = np.fft.fft(np.arange(5.0)).real
        M = np.linalg.inv(np.eye(5) + 0.1)
        return (np.sum(a * t * F) + np.sum(M @ a) * c[2] + np.sum(np.convolve(a, k) ** 2)
                + np.sum(np.linalg.solve(np.eye(5) * 2.0 + 0.1, a) ** 2))
    """,
    "scipy_special": """
        g = scipy.special.gammaln(np.linspace(1.0, 2.0, 5))
        return np.sum(a * g) + np.sum(scipy.special.expit(a) * scipy.special.erf(g))
    """,
    "scipy_ndimage": """
        w = scipy.ndimage.gaussian_filter(np.linspace(0.0, 1.0, 5), 1.0)
        s = scipy.ndimage.uniform_filter1d(np.arange(5.0), 3)
        m = scipy.ndimage.median_filter(np.array([3.0, 1.0, 2.0, 5.0, 4.0]), 3)
        return np.sum(a * w * s * m)
    """,
    "scipy_signal_and_cython": """
        b, c = scipy.signal.butter(2, 0.3)
        y = scipy.signal.lfilter(b, c, np.arange(5.0))
        sos = scipy.signal.butter(2, 0.3, output="sos")
        z = scipy.signal.sosfilt(sos, np.ones(5))  # Cython
        return np.sum(a * y * z) + np.sum(np.sin(a) * scipy.signal.windows.hann(5))
    """,
    "cython_kdtree": """
        tree = scipy.spatial.cKDTree(np.random.default_rng(0).normal(size=(6, 2)))
        d, i = tree.query(np.linspace(0.0, 1.0, 10).reshape(5, 2))
        return np.sum(a * d) + np.sum(a[i % 5])
    """,
}


def _function(name: str, body: str) -> str:
    return f"def {name}(a):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def outcomes(programs: dict, check: str) -> dict:
    """Run each program (a function of `a`) through `check` in one child, which prints
    "<name> <outcome>" per program as it goes; a crash leaves the rest without an outcome."""
    code = "\n".join(_function(name, body) for name, body in programs.items())
    code += f"\nCHECK = {check!r}\n" + """
for name in %r:
    f = globals()[name]
    exec(CHECK)
    print(name, outcome, flush=True)
""" % (list(programs),)
    source = PRELUDE + code
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", source], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    found = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    died = f"the child exited with {done.returncode}: {done.stderr[-3000:]}"
    return {name: found.get(name, died) for name in programs}


INSIDE = """
value, gradient = rb.value_and_grad(f)(X.copy())
assert value == f(X.copy()), (value, f(X.copy()))
np.testing.assert_allclose(gradient, central_difference(f, (X,), 0, 1e-6), rtol=1e-6, atol=1e-8)
outcome = "right"
"""


@pytest.fixture(scope="module")
def inside():
    return outcomes(PROGRAMS, INSIDE)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiled_callers_inside_the_differentiated_function(inside, name):
    assert inside[name] == "right"


def test_compiled_callers_in_another_thread_during_a_trace():
    """The other thread gets NumPy's own results (bit for bit), plain ndarrays, and NumPy's own
    functions: pickle.dumps(np.sum) works there and unpickles to numpy's function."""
    out = run_isolated(r"""
def others():
    rng = np.random.default_rng(7)
    np.random.seed(7)
    sos = scipy.signal.butter(2, 0.3, output="sos")
    results = {
        "generator": rng.normal(size=(3, 4)), "legacy": np.random.normal(size=6),
        "zeros": np.zeros(3), "empty_shape": np.empty((2, 2)).shape, "ones": np.ones(2),
        "full": np.full(3, 1.5), "array": np.array([1.0, 2.0]), "asarray": np.asarray([3.0]),
        "mean": np.mean([1.0, 2.0, 4.0]), "convolve": np.convolve([1.0, 2.0], [0.5, 0.5]),
        "fft": np.fft.rfft(np.arange(4.0)), "ndimage": scipy.ndimage.gaussian_filter(
            np.arange(6.0), 1.0), "special": scipy.special.gammaln(np.arange(1.0, 4.0)),
        "sosfilt": scipy.signal.sosfilt(sos, np.ones(6)),
        "kdtree": scipy.spatial.cKDTree(np.arange(6.0).reshape(3, 2)).query([[0.1, 0.2]])[0],
    }
    functions = {name: getattr(np, name) for name in ("sum", "zeros", "array", "mean")}
    pickled = {name: pickle.loads(pickle.dumps(function))
               for name, function in functions.items()}
    return results, functions, pickled

expected, numpy_functions, _ = others()
started, finished, seen = threading.Event(), threading.Event(), {}

def thread():
    started.wait(30)
    try:
        for _ in range(5):
            seen["results"], seen["functions"], seen["pickled"] = others()
    except BaseException as exc:
        seen["error"] = repr(exc)
    finished.set()

def f(a):
    started.set()
    assert finished.wait(60)
    return np.sum(np.sin(a))

t = threading.Thread(target=thread)
t.start()
np.testing.assert_allclose(rb.grad(f)(X.copy()), np.cos(X), rtol=1e-12)
t.join(60)
assert "error" not in seen, seen.get("error")
for key, value in expected.items():
    got = seen["results"][key]
    assert type(got) is type(value), (key, type(got))
    np.testing.assert_array_equal(got, value, err_msg=key)
for name, function in numpy_functions.items():
    assert seen["functions"][name] is function, name
    assert seen["pickled"][name] is function, name
print("ok")
""")
    assert out.strip() == "ok"


READERS = [
    "scipy.ndimage.gaussian_filter(v, 1.0)",
    "np.random.default_rng(0).normal(loc=v)",
    "np.random.default_rng(0).normal(loc=v, size=5)",
    "np.random.normal(loc=v)",
    "np.random.RandomState(0).normal(v, 1.0)",
    "scipy.signal.sosfilt(scipy.signal.butter(2, 0.3, output='sos'), v)",
    "scipy.spatial.cKDTree(np.reshape(v, (5, 1))).query([[0.5]])[0]",
    "scipy.signal.lfilter([1.0, 0.5], [1.0], v)",
]
HOLDERS = {"argument": "v = a * 1.0", "followed_buffer": "v = np.zeros(5)\nv[:] = a * 1.0"}
READING = {f"{holder}_{i}": f"{make}\nreturn np.sum(a * {call})"
           for holder, make in HOLDERS.items() for i, call in enumerate(READERS)}
REFUSED_OR_RIGHT = """
try:
    gradient = rb.grad(f)(X.copy())
except rb.RulebridgeError as exc:
    outcome = "refused"
else:
    np.testing.assert_allclose(gradient, central_difference(f, (X,), 0, 1e-6), rtol=1e-6,
                               atol=1e-8)
    outcome = "right"
"""


@pytest.fixture(scope="module")
def reading():
    return outcomes(READING, REFUSED_OR_RIGHT)


@pytest.mark.parametrize("name", sorted(READING))
def test_compiled_code_reading_a_traced_value_raises(reading, name):
    """What compiled code reads as raw memory would silently lose the gradient: it must be
    refused with rulebridge's error (or a rule recorded, for a function that has one)."""
    assert reading[name] in ("refused", "right"), READING[name]


def test_a_buffer_that_never_held_a_traced_value_works_after_the_call():
    out = run_isolated("""
seen = {}

def f(a):
    buf = np.zeros(3)
    buf[0] = 2.0
    seen["buf"] = buf
    seen["ones"] = np.ones((2, 2))
    return np.sum(a * buf[0])

np.testing.assert_allclose(rb.grad(f)(X.copy()), np.full(5, 2.0))
buf = seen["buf"]
assert np.sum(buf) == 2.0 and float(buf[0]) == 2.0
np.testing.assert_array_equal(buf + 1.0, [3.0, 1.0, 1.0])
np.testing.assert_array_equal(np.asarray(buf), [2.0, 0.0, 0.0])
buf[1] = 5.0
np.testing.assert_array_equal(np.asarray(buf), [2.0, 5.0, 0.0])
np.testing.assert_array_equal(scipy.ndimage.gaussian_filter(np.asarray(seen["ones"]), 1.0),
                              np.ones((2, 2)))
assert np.sum(seen["ones"] @ seen["ones"]) == 8.0
# used again inside another trace: a constant there
np.testing.assert_allclose(rb.grad(lambda a: np.sum(a[:3] * buf))(X.copy()),
                           [2.0, 5.0, 0.0, 0.0, 0.0])
print("ok")
""")
    assert out.strip() == "ok"

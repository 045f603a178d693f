"""Write docs/errors.md: every error and warning class rulebridge raises, each with a message
produced by running the code shown (`python -m tools.errors_doc`; `--check` fails when the
committed file is stale)."""

from __future__ import annotations

import argparse
import inspect
import linecache
import re
import sys
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import rulebridge as rb
from rulebridge import errors

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "docs" / "errors.md"


@dataclass
class Example:
    raised: type
    code: str  # run with `np` and `rb` in scope; it raises (or warns) `raised`
    meaning: str
    fix: str
    title: str = ""  # which cause, when a class has several examples


class _WrongShapeAdapter(rb.Adapter):
    """A deliberately broken adapter: its np.sin pullback drops the last element."""

    name = "broken"

    def build_rule(self, function, signature):
        if function is not np.sin:
            raise rb.Declined("only np.sin")
        return rb.Rule(function, signature, lambda args, kw: (np.sin(*args), args),
                       lambda args, g, argnums: ((g * np.cos(args[0]))[:-1],), source=self.name)


class _FailingAdapter(rb.Adapter):
    name = "crashing"

    def build_rule(self, function, signature):
        raise RuntimeError("this adapter is broken")


EXAMPLES = [
    Example(rb.NoRuleError,
            "rb.grad(lambda x: np.sum(np.sin(x)))(np.ones(3, dtype=np.float16))",
            "No installed adapter has a rule for this function at this concrete signature "
            "(exact dtype and rank). It is also a TypeError.",
            "Pass float32/float64/complex128 arrays, use a function an adapter covers, or add a "
            "rule (`rulebridge.import_rule`, or an adapter: docs/adapter-contract.md)."),
    Example(rb.NoRuleError,
            "rb.grad(lambda x: np.sum(np.cbrt(x)), source='autograd')(np.ones(3))",
            "The source the call names has no rule here, and another installed source has one: "
            "the fix names it.",
            "Name the source the message gives (`source='jax'`), or leave `source` out.",
            title="another source has a rule"),
    Example(rb.Declined,
            "rb.REGISTRY.adapter('autograd').build_rule(np.sin, rb.signature_of((np.ones(2, "
            "np.float16),)))",
            "Raised by an adapter's `build_rule` for a signature it will not cover. Users see it "
            "inside a NoRuleError, one line per adapter.",
            "Nothing, as a user. As an adapter author: raise it with the reason."),
    Example(rb.TracingError,
            "rb.grad(lambda x: float(np.sum(x)) * 2.0)(np.ones(3))",
            "The differentiated code turned a traced value into a plain number (`float`, `int`, "
            "`.item()`, `.tolist()`), which would cut the gradient. It is also a TypeError.",
            "Keep values as arrays (`x[()]`, `np.sum(x)`); compare them to branch on them.",
            title="a plain number"),
    Example(rb.TracingError,
            "buffer = np.zeros(3)  # made before the trace: not followed\n"
            "def f(x):\n"
            "    buffer[:] = x\n"
            "    return np.sum(buffer)\n"
            "rb.grad(f)(np.ones(3))",
            "A traced value was written into a plain ndarray that rulebridge does not follow "
            "(made before the trace, by a library, or through `from numpy import zeros`).",
            "Allocate the buffer inside the differentiated code (`np.zeros(n)`, followed while "
            "tracing) or from a traced array (`np.zeros_like(x)`).",
            title="a write into a plain buffer"),
    Example(rb.TracingError,
            "from numpy import asarray  # bound before the trace: NumPy's own function\n"
            "rb.grad(lambda x: np.sum(asarray(x)))(np.ones(3))",
            "A library function that calls `np.asarray` or `np.array` (a SciPy function outside "
            "NumPy's protocols: the message names it and its drop-in), or the differentiated "
            "code through a name bound before the trace (`from numpy import asarray`, "
            "`getattr(np, 'asarray')`), converted a traced value to a plain ndarray. "
            "`np.asarray(x)` and `np.array(x)` spelled so in the differentiated code are "
            "differentiable, as in autograd.numpy and jax.numpy.",
            "Spell the call `np.asarray(x)` in the differentiated code; build arrays with "
            "np.stack or np.concatenate; use `rulebridge.scipy`'s drop-in, or "
            "`rulebridge.import_rule` for another library's function.",
            title="np.asarray"),
    Example(rb.TracingError,
            "import rulebridge.scipy.stats as stats\n"
            "rb.grad(lambda m: np.sum(stats.norm(m, 1.0).logpdf(np.ones(3))))(0.5)",
            "A `scipy.stats` distribution was frozen with a traced parameter: its methods "
            "convert the parameters to plain arrays.",
            "Pass the parameters to the method: `stats.norm.logpdf(x, m, 1.0)`.",
            title="a frozen distribution"),
    Example(rb.RuleContractError,
            "rb.register_adapter(_WrongShapeAdapter())\n"
            "try:\n"
            "    with rb.trust():  # no check at first use, which would stop this rule first\n"
            "        y, pullback = rb.vjp(np.sin, np.ones(3), source='broken')\n"
            "        pullback(np.ones(3))\n"
            "finally:\n"
            "    rb.REGISTRY.unregister('broken')",
            "A rule broke the contract: its forward did not return (output, residuals), its "
            "pullback raised or returned the wrong number, shape or dtype of cotangents. In debug "
            "mode (`rulebridge.debug(True)`) also: it mutated its inputs, aliased them, disagreed "
            "with NumPy, or returned non-finite cotangents for finite inputs. The message names "
            "the adapter, the function and the signature.",
            "Report it to that adapter's authors; meanwhile choose another source "
            "(`rulebridge.prefer(function, 'jax')`)."),
    Example(rb.UnverifiedRuleError,
            "rb.register_adapter(_WrongShapeAdapter())\n"
            "try:\n"
            "    rb.vjp(np.sin, np.ones((3, 1, 1)), source='broken')\n"
            "finally:\n"
            "    rb.REGISTRY.unregister('broken')",
            "A call arrived at a key (function, signature, keywords and static arguments) that "
            "no shipped status verifies, and no source's rule passed its check at the call's "
            "inputs: each failed, raised or broke the contract (the message gives each result). "
            "No wrong number is returned. It is also a NoRuleError. Where the check could not "
            "decide at the inputs (a kink, a tie, a derivative that does not exist there, "
            "finite inputs where NumPy's value is not finite, log at 0) or a rule raised at "
            "them, the message says the rules 'could not be checked at these inputs': that call "
            "is refused, nothing is kept for the key, and the next call's inputs are checked "
            "again. Inputs holding NaN or inf are checked at finite stand-ins (each such entry "
            "replaced by the median of its argument's finite entries): a rule that passes there "
            "is used at the real inputs, and an output whose value is NaN there has a NaN "
            "gradient wherever it reads an input; one that fails there is refused.",
            "Call the function in a configuration a source supports (compat_matrix.md), at "
            "inputs inside its smooth domain, prefer or install another source, or report the "
            "rule; `rulebridge.trust()` uses unverified rules unchecked."),
    Example(rb.AdapterError,
            "rb.grad(lambda x: np.sum(x), source='nonexistent')(np.ones(3))",
            "An adapter is not installed, failed to import, or raised while building a rule.",
            "Install it (the message says how) or pick an installed source."),
    Example(rb.NestedDifferentiationError,
            "rb.hessian(lambda a: np.sum(np.real(np.linalg.eigvals(a))), source='jax')(\n"
            "    np.array([[2.0, 1.0], [0.0, 3.0]]))",
            "Nested differentiation (grad of grad, hessian, a gradient inside a loss) met a rule "
            "whose pullback is not NumPy code and which offers no verified rule for it (JAX "
            "offers the VJP of its compiled pullback, checked before use; JAX cannot "
            "differentiate eigvals twice), so its derivative cannot be recorded; or a "
            "traced value escaped an earlier differentiation (a global, a closure) and is used "
            "again.",
            "Differentiate the inner level with a source whose pullbacks are NumPy code "
            "(autograd's, or source=None); return plain results from differentiated functions."),
    Example(rb.MutationError,
            "def f(x):\n"
            "    u = np.copy(x)\n"
            "    u[[0, 0]] = x[1:3]  # which of the two values NumPy keeps is unspecified\n"
            "    return np.sum(u)\n"
            "rb.grad(f)(np.ones(3))",
            "An in-place write the tape cannot represent exactly (repeated indices, ufunc.at, "
            "np.put, an alias the tape cannot follow), or a `vjp` pullback called after one of "
            "its arguments was changed in place (it names the argument: call the pullback "
            "first, or pass a copy).",
            "Write through the array you read afterwards, or build the result functionally "
            "(np.where, np.concatenate)."),
    Example(rb.MutationError,
            "a = np.array([0.3, 0.7])\n"
            "def f(x):\n"
            "    y = np.sin(x)\n"
            "    a[0] = 5.0  # the argument's memory, written through the caller's name\n"
            "    return np.sum(y * x)\n"
            "rb.grad(f)(a)",
            "The differentiated function wrote into the memory of an argument being "
            "differentiated through a name the tape never saw: a global or closure array that "
            "is the caller's argument, a list holding it from an earlier call, a view made "
            "before the call. Every op after that write read memory its recorded history does "
            "not explain. rulebridge compares each traced argument's bytes when the function "
            "returns (its own recorded writes undone) with a copy made on entry, and refuses, "
            "naming the argument.",
            "Write through the argument the function receives (`x[0] = 5.0`), or keep a copy "
            "in the global (`a = x.copy()`). Reading such an alias is fine: it is a constant, "
            "as in autograd and JAX.",
            title="a write through a global or closure alias"),
    Example(rb.ReplayError,
            "def f(x):\n"
            "    if np.sum(x) > 0:\n"
            "        return np.sum(x * 2)\n"
            "    return np.sum(x * 10)\n"
            "y, tape = rb.trace(f, np.array([1.0]))\n"
            "tape.replay(np.array([-1.0]))  # f would take the other branch",
            "`tape.replay` was given inputs on which the program would decide differently than "
            "when it was traced: a comparison, an argmax or a mask, `bool`, `len`, a shape or "
            "dtype it read (`Tape.decisions`, docs/architecture.md). The recorded path's value "
            "would be another function's. It is also a ValueError.",
            "Trace again on the new inputs (`rb.trace(f, *new_args)`), or call `f` itself."),
    Example(rb.JitError,
            "def noisy(w):\n"
            "    return np.sum(w * np.random.normal(size=3))\n"
            "rb.jit(rb.grad(noisy))(np.ones(3))",
            "`rulebridge.jit` cannot replay the function: it draws random numbers inside (a "
            "replay would repeat the same draw), changes state outside itself, writes into an "
            "argument in place, or its first replay was not its own result to the bit (it "
            "computes with something no guard sees: a generator made inside without a seed, "
            "the clock). With the JAX back end: a program it cannot stage (the calls then "
            "run eagerly), or a value that takes another path than the JAX function "
            "`rulebridge_jax.jax_function` handed out holds (raised on the host, inside JAX's "
            "error of the call). docs/jit.md lists each hazard.",
            "Pass what changes between calls in as an argument (the noise, the time); copy an "
            "argument before writing into it; or call the function unjitted."),
    Example(rb.NoDerivativeError,
            "a = np.array([[2.0, 1j], [-1j, 3.0]])\n"
            "rb.grad(lambda a: np.sum(np.real(np.linalg.eigh(a)[1])))(a)",
            "The program has no derivative: its value depends on a choice NumPy or SciPy makes "
            "as it likes, the phase of a complex eigenvector (`numpy.linalg.eigh`, `eig`, "
            "`rulebridge.scipy.linalg.eigh`). It is also a ValueError.",
            "Use phase-invariant functions of the vectors (`abs(v) ** 2`, `v @ v.conj().T`, the "
            "eigenvalues), or fix each vector's phase in the program."),
    Example(rb.ImportRuleError,
            "rb.import_rule(np.linalg.norm, 'autograd', equivalent=lambda x: x.sum(), "
            "signatures=['float64[:]'])",
            "`import_rule` could not import a rule, or the equivalent disagrees with the function "
            "on sample inputs. It is also a ValueError.",
            "Give an `equivalent` that computes the same values, or another source."),
    Example(rb.RuleCheckError,
            "wrong = rb.Rule(np.sin, rb.signature_of((np.ones(3),)),\n"
            "               lambda args, kwargs: (np.sin(*args), args),\n"
            "               lambda args, g, argnums: (g * np.sin(args[0]),),  # should be cos\n"
            "               source='example')\n"
            "rb.assert_rule(wrong, np.ones(3))",
            "`assert_rule` found that a rule disagrees with finite differences (or broke the "
            "contract). It is an AssertionError, for tests.",
            "Fix the rule, or do not use it (`rulebridge.prefer`)."),
    Example(rb.GradientCheckError,
            "rb.check_grads(lambda x: np.abs(x - 1.0004), np.array([1.0]))",
            "`check_grads` found that the gradient of your function disagrees with central "
            "differences of the function at your inputs (the message gives the worst relative "
            "error and the leaf it is in), or, as here, the differences cannot decide there. It "
            "is an AssertionError, for tests.",
            "Check at inputs away from kinks and ties; if the gradient is wrong, find the op "
            "with `rulebridge.trace` and check its rule with `rulebridge.check_rule`."),
    Example(rb.AdapterWarning,
            "rb.register_adapter(_FailingAdapter())\n"
            "rb.prefer('crashing', 'autograd', 'jax')\n"
            "try:\n"
            "    rb.grad(lambda x: np.sum(np.cos(x)))(np.ones(3))\n"
            "finally:\n"
            "    rb.REGISTRY.unregister('crashing')\n"
            "    rb.prefer('autograd', 'jax')",
            "Among several adapters, one raised while building a rule: it is skipped, the others "
            "answer.",
            "Report it to that adapter's authors, or uninstall it."),
    Example(rb.UncheckedRuleWarning,
            "x = np.array([1e8, 0.5]).reshape(1, 1, 1, 1, 1, 1, 1, 2)  # a rank no matrix "
            "row covers\n"
            "rb.grad(lambda v: np.sum(np.sin(v)), source='autograd')(x)",
            "A rule no shipped status verifies at this key was to be checked against finite "
            "differences at the call's inputs, but they cannot decide there: two step sizes "
            "disagree and a ladder of steps cannot bound the error (sin at 1e8). The rule is "
            "used unverified for this call only: nothing is recorded about the key, and the next "
            "call's inputs are checked again (after three undecided calls, the rule is used "
            "unverified from then on). The gradient is the rule's, not a checked one. Inputs "
            "holding NaN or inf never come here (they are checked at finite stand-ins), nor "
            "finite inputs where NumPy's value is not finite (refused).",
            "Call the function first at inputs where it is finite and smooth, which checks the "
            "rule there; or turn the warning into an error to refuse such calls: "
            "`warnings.simplefilter('error', rulebridge.UncheckedRuleWarning)`."),
    Example(rb.UsageError,
            "rb.grad(lambda x: x * 2.0)(np.ones(3))",
            "Misuse of the API: grad of a non-scalar, a non-float argument in argnums, a bad "
            "argnums. It is also a TypeError.",
            "Follow the message (reduce to a scalar, use vjp, cast the argument).",
            title="grad of a non-scalar"),
    Example(rb.UsageError,
            "rb.grad(lambda x, y: np.sum(x * y), argnum=1)",
            "A program moved from autograd spells the argument to differentiate `argnum=`; "
            "rulebridge takes JAX's `argnums=`, with the same meaning.",
            "Rename the keyword: `argnums=1`.",
            title="autograd's argnum="),
    Example(rb.ArgumentError,
            "rb.vjp(np.sin, np.ones(3))[1](np.ones(4))",
            "A vjp pullback received a cotangent of the wrong shape or structure (or a replayed "
            "tape a changed constant). It is also a ValueError.",
            "Give one cotangent per output, of that output's shape."),
]


def library_classes() -> list[type]:
    """Every exception and warning class rulebridge defines and exports."""
    found = {cls for _, cls in inspect.getmembers(errors, inspect.isclass)
             if issubclass(cls, Exception) and cls.__module__ == errors.__name__}
    found |= {getattr(rb, name) for name in rb.__all__
              if inspect.isclass(getattr(rb, name)) and issubclass(getattr(rb, name), Exception)}
    return sorted(found, key=lambda c: c.__name__)


def run(example: Example) -> str:
    """The message `example.code` produces."""
    namespace = {"np": np, "rb": rb, "_WrongShapeAdapter": _WrongShapeAdapter,
                 "_FailingAdapter": _FailingAdapter}
    filename = f"<example {example.raised.__name__}>"
    # the lines of the example, for a message that quotes the user's line (a frozen distribution)
    linecache.cache[filename] = (len(example.code), None, example.code.splitlines(True), filename)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(example.code, filename, "exec"), namespace)
        except example.raised as exc:
            return _stable(str(exc))
    for warning in caught:
        if issubclass(warning.category, example.raised):
            return _stable(str(warning.message))
    raise AssertionError(f"the example for {example.raised.__name__} did not raise it")


def _stable(message: str) -> str:
    """The message without the memory addresses that differ from run to run."""
    return re.sub(r" at 0x[0-9a-f]+", "", message)


def render() -> str:
    documented = {e.raised for e in EXAMPLES}
    missing = [c.__name__ for c in library_classes()
               if c not in documented and c is not rb.RulebridgeError]
    if missing:
        raise SystemExit(f"tools/errors_doc.py has no example for {', '.join(missing)}")
    lines = ["# Errors", "",
             "Every error and warning rulebridge raises, with a message produced by running the "
             "code shown (regenerate with `python -m tools.errors_doc`). All of rulebridge's own "
             "errors derive from `rulebridge.RulebridgeError`; a wrong gradient is never one of "
             "them: when rulebridge cannot be sure, it raises.", "",
             "Each message has three parts: a first line with the file and line of your code "
             "that made the call (here `<example ...>:1`, the examples' own) and what happened; "
             "then `Fix:`, the most likely fix as code to paste; then the details. "
             "`error.where` is the location alone, `error.message` the rest (and what "
             "`f\"{error}\"` gives, for quoting one message in another).", ""]
    for example in EXAMPLES:
        message = run(example)
        bases = ", ".join(b.__name__ for b in example.raised.__mro__[1:-1]
                          if b not in (Exception, BaseException))
        title = f": {example.title}" if example.title else ""
        lines += [f"## {example.raised.__name__}{title}" + (f" ({bases})" if bases else ""), "",
                  example.meaning, "", "```python", example.code, "```", "",
                  "```text", textwrap.fill(message, 100, replace_whitespace=False)
                  if "\n" not in message else message, "```", "",
                  f"**What to do.** {example.fix}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if docs/errors.md is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if OUTPUT.read_text() != text:
            print("docs/errors.md is stale: run python -m tools.errors_doc")
            return 1
        return 0
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {sum(1 for e in EXAMPLES)} error classes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

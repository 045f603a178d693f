"""What a check says about one rule at one signature."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import RulebridgeError

STATUSES = ("pass", "fail", "error", "inconclusive")
# How the reason of an "error" starts when the rule (or NumPy's function) raised at the inputs:
# a verdict about those inputs, not about the key (`CheckResult.settled`).
RAISED = "its %s raised"
_RAISED_HERE = ("its forward raised", "its pullback raised", "its unary_vjp raised",
                "its unary_vjp's VJP raised", "NumPy's own",
                "its import raised")  # an import's own verification keeps what it settles

# The reason of an undecided check where the derivative does not exist (a kink, a jump): a call
# there is refused, not used unverified (checking/firstuse.py).
AT_A_KINK = ("the function has a kink or a jump at these inputs (its forward and backward "
             "differences disagree at every step): no derivative to check")
AT_AN_EDGE = ("finite differences of NumPy's function are not finite at these finite inputs (an "
              "input at the edge of its domain, or a derivative that is infinite there): no "
              "derivative to check")
# A disagreement at steps a domain's edge made smaller than the usual ones (rules/tangents.py: a
# covariance with an eigenvalue of 1e-6): rounding in NumPy's function then passes the
# tolerance, so the disagreement is no verdict on the rule. A pass there still is one.
SQUEEZED_STEPS = ("the inputs are so close to the edge of the function's domain (a nearly "
                  "singular matrix, an entry near 0 on a simplex) that finite-difference steps "
                  "small enough to stay inside it are dominated by rounding: a disagreement "
                  "there decides nothing")
# (finite inputs where NumPy's value is not finite: a pole, log at 0, outside the domain; the
# words are the matrix's, which records them for scipy.special.zeta)
AT_A_POLE = "NumPy's value is not finite at these inputs, so finite differences cannot decide"
REFUSED_HERE = (AT_A_KINK, AT_AN_EDGE, AT_A_POLE)  # no derivative exists: refused there
# Undecided because the inputs themselves hold NaN or inf: never a verdict, never a reason to use
# a rule unverified; the first-use check tries finite stand-ins of them (checking/firstuse.py).
NOT_FINITE_INPUTS = ("the inputs are not finite (NaN or inf), so finite differences cannot "
                     "decide there")


@dataclass(frozen=True)
class CheckResult:
    """The verdict of `check_rule`: `status` is "pass", "fail", "error" (the rule raised or broke
    the contract) or "inconclusive" (finite differences cannot decide at these inputs).
    `max_rel_error` is the worst, over directions, of abs(rule - finite differences) divided by the
    scale the tolerance is relative to; `tolerance` is the bound it was held to. `reason` says
    why in words that do not depend on the machine; `measured` holds the figures behind it
    (which do: NumPy picks its libm and BLAS kernels by CPU)."""

    function: str
    source: str
    signature: str
    status: str
    max_rel_error: float | None
    tolerance: float
    seed: int
    directions: int
    reason: str = ""
    kwargs: str = ""
    measured: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def settled(self) -> bool:
        """Does the verdict hold for the key, not only at these inputs? A pass, a fail (a
        conclusive disagreement) and a broken contract (a mutated input, a cotangent of the
        wrong shape) do; "inconclusive" and a rule that raised at these inputs (a value or a
        shape it does not handle) do not: those refuse one call, and the next is checked."""
        if self.status == "error":
            return not self.reason.startswith(_RAISED_HERE)
        return self.status in ("pass", "fail")

    def __bool__(self) -> bool:
        return self.passed

    def describe(self) -> str:
        call = f"{self.function}{self.signature}" + (f" [{self.kwargs}]" if self.kwargs else "")
        error = "" if self.max_rel_error is None else f", max rel error {self.max_rel_error:.2e}"
        text = (f"{self.status}: {call} from {self.source or '?'} "
                f"(tolerance {self.tolerance:.0e}{error}, seed {self.seed}, "
                f"{self.directions} direction(s))")
        text += f": {self.reason}" if self.reason else ""
        return text + (f" ({self.measured})" if self.measured else "")

    __str__ = describe

    def to_dict(self) -> dict:
        return asdict(self)


class RuleCheckError(RulebridgeError, AssertionError):
    """A rule failed its finite-difference check (raised by `assert_rule` and by the
    check-on-first-use option). `.result` is the CheckResult."""

    def __init__(self, result: CheckResult, hint: str = "") -> None:
        self.result = result
        super().__init__(result.describe(), fix=hint)

    def __reduce__(self):
        return _rebuilt, (self.result, self.args[0], self.__dict__)


def _rebuilt(result: CheckResult, message: str, state: dict) -> RuleCheckError:
    error = RuleCheckError.__new__(RuleCheckError)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error

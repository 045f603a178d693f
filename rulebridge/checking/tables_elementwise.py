"""Catalogue table: elementwise functions, reductions and scans, with their domains."""

from __future__ import annotations

from .cases import MATRIX, SCALAR, VECTOR, binary, case, of, reduction, scan, unary
from .domains import (ABOVE_ONE, DISTINCT, HALF_PI, NEAR_ONE, NONZERO, OFF_INTEGERS, POSITIVE,
                      PROBABILITY, REAL, TIE_FREE_HIGH, TIE_FREE_LOW, UNIT, Arr, Bools,
                      Const)

_UNARY_DOMAINS = {
    REAL: """sin cos sinh cosh tanh arctan arcsinh exp exp2 expm1 negative positive square
        deg2rad degrees rad2deg radians real imag conjugate conj sinc nan_to_num real_if_close
        isfinite isinf isnan isneginf isposinf iscomplex isreal iscomplexobj isrealobj signbit
        copy asarray cbrt logical_not ones_like zeros_like spacing frexp scipy.special.fresnel
        scipy.special.erf scipy.special.erfc scipy.special.expit scipy.special.log_expit
        scipy.special.ndtr scipy.special.log_ndtr scipy.special.dawsn scipy.special.erfcx
        scipy.special.i0 scipy.special.i0e scipy.special.i1 scipy.special.i1e
        scipy.special.j0 scipy.special.j1 scipy.special.exp2 scipy.special.exp10
        scipy.special.expm1 scipy.special.cosm1 scipy.special.sinc
        scipy.special.wofz scipy.special.log_softmax scipy.special.softmax""",
    POSITIVE: """log log10 log2 sqrt scipy.special.gamma scipy.special.gammaln scipy.special.psi
        scipy.special.digamma scipy.special.rgamma scipy.special.gammasgn scipy.special.loggamma
        scipy.special.y0 scipy.special.y1 scipy.special.k0 scipy.special.k1 scipy.special.k0e
        scipy.special.k1e scipy.special.entr scipy.special.cbrt scipy.special.expi
        scipy.special.exp1 scipy.special.sici scipy.special.spence""",
    NONZERO: "absolute abs fabs sign reciprocal angle",
    UNIT: "arcsin arccos arctanh unwrap scipy.special.erfinv",
    PROBABILITY: "scipy.special.logit scipy.special.ndtri",
    ABOVE_ONE: "arccosh",
    HALF_PI: "tan",
    OFF_INTEGERS: "floor ceil rint round around trunc fix modf",
}
_ERFCINV = "scipy.special.erfcinv"

_BINARY_DOMAINS = {
    (REAL, REAL): """add subtract multiply logaddexp logaddexp2 equal not_equal greater
        greater_equal less less_equal logical_and logical_or logical_xor isclose allclose
        array_equal array_equiv nextafter scipy.special.owens_t""",
    (REAL, NONZERO): "divide true_divide arctan2",
    (NONZERO, NONZERO): "hypot copysign",
    (POSITIVE, REAL): "power float_power",
    (REAL, POSITIVE): "scipy.special.xlog1py",
    (TIE_FREE_LOW, TIE_FREE_HIGH): "maximum minimum fmax fmin",
    (POSITIVE, POSITIVE): """scipy.special.beta scipy.special.betaln scipy.special.xlogy
        scipy.special.kl_div scipy.special.rel_entr scipy.special.zeta scipy.special.poch""",
    (OFF_INTEGERS, NEAR_ONE): "remainder mod fmod floor_divide divmod",
}

_REDUCTION_DOMAINS = {
    REAL: "sum mean std var nansum nanmean nanstd nanvar average all any count_nonzero",
    NONZERO: "prod nanprod",
    DISTINCT: """max min amax amin nanmax nanmin ptp median nanmedian argmax argmin
        scipy.special.logsumexp""",
}


def _spread(table: dict, build) -> dict:
    cases = {}
    for key, names in table.items():
        for name in names.split():
            full = name if "." in name else f"numpy.{name}"
            cases[full] = build(*key) if isinstance(key, tuple) else build(key)
    return cases


def _order_and_x(domain=POSITIVE, order=1.5):
    """Special functions of (order, x): the order is a static Python number."""
    return [case(order, Arr(domain, MATRIX)), case(order, Arr(domain, VECTOR)),
            case(2, Arr(domain, SCALAR))]


def sorted_knots():
    return Const([-2.5, -1.05, -0.1, 0.75, 1.9, 2.5, 3.0])


CASES = {
    **_spread(_UNARY_DOMAINS, unary),
    **_spread(_BINARY_DOMAINS, binary),
    **_spread(_REDUCTION_DOMAINS, reduction),
    "numpy.log1p": unary(PROBABILITY),
    _ERFCINV: [case(Arr(NEAR_ONE, MATRIX))] + unary(PROBABILITY)[1:],
    "numpy.nan_to_num": unary(REAL),
    "numpy.cumsum": scan(), "numpy.nancumsum": scan(), "numpy.cumprod": scan(NONZERO),
    "numpy.nancumprod": scan(NONZERO),
    "numpy.cumulative_sum": of(case(Arr(REAL, VECTOR)), case(Arr(REAL, MATRIX), axis=1),
                               case(Arr(REAL, VECTOR), include_initial=True)),
    "numpy.cumulative_prod": of(case(Arr(NONZERO, VECTOR)), case(Arr(NONZERO, MATRIX), axis=0)),
    "numpy.sort_complex": of(case(Arr(DISTINCT, VECTOR))),
    "numpy.diff": of(case(Arr(REAL, MATRIX)), case(Arr(REAL, MATRIX), axis=0),
                     case(Arr(REAL, VECTOR), n=2)),
    "numpy.gradient": of(case(Arr(REAL, VECTOR)), case(Arr(REAL, MATRIX), axis=1)),
    "numpy.ediff1d": of(case(Arr(REAL, VECTOR))),
    "numpy.trapezoid": of(case(Arr(REAL, VECTOR)), case(Arr(REAL, MATRIX), axis=0)),
    "numpy.clip": of(case(Arr(OFF_INTEGERS, MATRIX), -0.5, 0.5),
                     case(Arr(OFF_INTEGERS, VECTOR), -0.5, 0.5)),
    "numpy.where": of(case(Bools(MATRIX), Arr(REAL, MATRIX), Arr(REAL, MATRIX)),
                      case(Bools(MATRIX), Arr(REAL, (3, 1)), Arr(REAL, (4,)))),
    "numpy.sort": of(case(Arr(DISTINCT, MATRIX)), case(Arr(DISTINCT, MATRIX), axis=0),
                     case(Arr(DISTINCT, VECTOR))),
    "numpy.argsort": of(case(Arr(DISTINCT, MATRIX)), case(Arr(DISTINCT, VECTOR))),
    "numpy.partition": of(case(Arr(DISTINCT, VECTOR), 2), case(Arr(DISTINCT, MATRIX), 1)),
    "numpy.argpartition": of(case(Arr(DISTINCT, VECTOR), 2)),
    "numpy.quantile": of(case(Arr(DISTINCT, VECTOR), 0.3), case(Arr(DISTINCT, MATRIX), 0.3,
                                                                  axis=1)),
    "numpy.percentile": of(case(Arr(DISTINCT, VECTOR), 30.0)),
    "numpy.nanquantile": of(case(Arr(DISTINCT, VECTOR), 0.3)),
    "numpy.nanpercentile": of(case(Arr(DISTINCT, VECTOR), 30.0)),
    "numpy.searchsorted": of(case(sorted_knots(), Arr(REAL, VECTOR))),
    "numpy.nonzero": of(case(Arr(NONZERO, MATRIX))),
    "numpy.flatnonzero": of(case(Arr(NONZERO, MATRIX))),
    "numpy.argwhere": of(case(Arr(NONZERO, MATRIX))),
    "numpy.ldexp": of(case(Arr(REAL, MATRIX), 2)),
    "numpy.heaviside": of(case(Arr(NONZERO, MATRIX), 0.5)),
    "numpy.i0": unary(REAL)[:2],
    "numpy.interp": of(case(Arr(REAL, VECTOR), sorted_knots(), Arr(REAL, (7,)))),
    "scipy.special.iv": _order_and_x(), "scipy.special.ive": _order_and_x(),
    "scipy.special.jv": _order_and_x(), "scipy.special.yn": _order_and_x(order=2),
    "scipy.special.kv": _order_and_x(), "scipy.special.polygamma": _order_and_x(order=1),
    "scipy.special.expn": _order_and_x(order=2),
    "scipy.special.boxcox": of(case(Arr(POSITIVE, MATRIX), 0.5), case(Arr(POSITIVE, VECTOR), 0.0)),
    "scipy.special.boxcox1p": of(case(Arr(POSITIVE, MATRIX), 0.5)),
    "scipy.special.hyp1f1": of(case(1.5, 2.5, Arr(REAL, MATRIX)),
                               case(1.5, 2.5, Arr(REAL, VECTOR))),
    "scipy.special.hyp2f1": of(case(0.5, 1.5, 2.5, Arr(UNIT, MATRIX))),
    "scipy.special.betainc": of(case(1.5, 2.5, Arr(PROBABILITY, MATRIX)),
                                case(1.5, 2.5, Arr(PROBABILITY, VECTOR))),
    "scipy.special.gammainc": of(case(1.5, Arr(POSITIVE, MATRIX)), case(1.5, Arr(POSITIVE,
                                                                                 VECTOR))),
    "scipy.special.gammaincc": of(case(1.5, Arr(POSITIVE, MATRIX))),
}

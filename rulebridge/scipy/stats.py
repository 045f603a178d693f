"""`rulebridge.scipy.stats`: `scipy.stats`, with the distribution methods (`norm.logpdf`,
`multivariate_normal.logpdf`, `poisson.logpmf`, ...) and functions as drop-ins, under SciPy's
names and with SciPy's arguments (`norm.logpdf(x, loc, scale)`): SciPy's own on plain arrays; on
traced values, an imported rule where an installed source has one."""

from __future__ import annotations

from typing import Any

from ..errors import TracingError
from ..rules.scipy_names import is_candidate, is_distribution, unfrozen
from .dropin import DropIn, _first_box, drop_in, mirror, signature_of_method


class Distribution:
    """A `scipy.stats` distribution whose methods are drop-ins, each made when first read;
    everything else (freezing with `norm(loc, scale)`, attributes) is SciPy's object itself."""

    def __init__(self, name: str, scipy_distribution: Any) -> None:
        self._scipy = scipy_distribution
        self._name = name
        self.__doc__ = getattr(scipy_distribution, "__doc__", None)

    def __getattr__(self, attribute: str) -> Any:
        if attribute in ("_scipy", "_name"):  # not set yet (a copy being made)
            raise AttributeError(attribute)
        value = getattr(self._scipy, attribute)
        if attribute.startswith("_") or not is_candidate(value):
            return value
        made = drop_in(f"scipy.stats.{self._name}.{attribute}", value,
                       signature_of_method(self._scipy, attribute, value))
        self.__dict__[attribute] = made  # one drop-in per method: rules are keyed by it
        return made

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _first_box(args) is not None or _first_box(kwargs.values()) is not None:
            raise TracingError(f"scipy.stats.{self._name}(...) froze a traced parameter, which "
                               "its methods convert to a plain array and would cut the "
                               "gradient.", fix=unfrozen(f"scipy.stats.{self._name}(...).logpdf"))
        return self._scipy(*args, **kwargs)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._scipy)) | set(self.__dict__))

    def drop_ins(self) -> dict[str, DropIn]:
        """Every method's drop-in, by method name."""
        return {m: getattr(self, m) for m in dir(self._scipy)
                if not m.startswith("_") and is_candidate(getattr(self._scipy, m, None))}

    def __repr__(self) -> str:
        return f"<rulebridge.scipy.stats.{self._name}: scipy.stats.{self._name}, its methods " \
               "as drop-ins>"


def _namespace() -> tuple[dict[str, Any], dict[str, Any]]:
    names, functions = mirror("scipy.stats")
    for attr, value in list(names.items()):
        if is_distribution(value):
            names[attr] = Distribution(attr, value)
    return names, functions


_names, _FUNCTIONS = _namespace()
globals().update(_names)
__all__ = sorted(_names)


def drop_ins() -> dict[str, DropIn]:
    """Every drop-in of the module, by its name under `scipy.stats` (`norm.logpdf`, `sem`)."""
    found: dict[str, DropIn] = dict(_FUNCTIONS)
    for attr, value in _names.items():
        if isinstance(value, Distribution):
            found.update({f"{attr}.{m}": f for m, f in value.drop_ins().items()})
    return found

"""`rulebridge.scipy.stats`: `scipy.stats`, with the distribution methods (`norm.logpdf`,
`multivariate_normal.logpdf`, `poisson.logpmf`, ...) and functions an installed source has a rule
for as drop-ins, under SciPy's names and with SciPy's arguments (`norm.logpdf(x, loc, scale)`)."""

from __future__ import annotations

from typing import Any

from .dropin import DropIn, drop_ins, public_names


class Distribution:
    """A `scipy.stats` distribution whose methods with a rule are drop-ins; everything else
    (`rvs`, `mean`, freezing with `norm(loc, scale)`) is SciPy's object itself."""

    def __init__(self, name: str, scipy_distribution: Any, methods: dict[str, DropIn]) -> None:
        self.__dict__.update(methods)
        self._scipy = scipy_distribution
        self._name = name
        self.__doc__ = getattr(scipy_distribution, "__doc__", None)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._scipy, attribute)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._scipy(*args, **kwargs)

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self._scipy)) | set(self.__dict__))

    def __repr__(self) -> str:
        methods = ", ".join(n for n in sorted(self.__dict__) if not n.startswith("_"))
        return (f"<rulebridge.scipy.stats.{self._name}: scipy.stats.{self._name}, rules for "
                f"{methods}>")


def _namespace() -> tuple[dict[str, Any], dict[str, DropIn]]:
    names = public_names("scipy.stats")
    found = drop_ins("scipy.stats")
    methods: dict[str, dict[str, DropIn]] = {}
    for name, drop_in in found.items():
        parts = name[len("scipy.stats."):].split(".")
        if len(parts) == 2:
            methods.setdefault(parts[0], {})[parts[1]] = drop_in
        else:
            names[parts[0]] = drop_in
    for distribution, members in methods.items():
        names[distribution] = Distribution(distribution, names[distribution], members)
    return names, found


_names, DROP_INS = _namespace()
globals().update(_names)
__all__ = sorted(public_names("scipy.stats"))
del _names

"""A Sphinx extension for the API reference: every name in `rulebridge.__all__`, grouped, from its
docstring, and a warning (an error under -W) for a public name that has none or a public function
whose docstring lacks a numpy-style "Parameters" section.

`docs/api.rst` holds the placeholder line `.. rulebridge-public-names::`, replaced when the page is
read; so a new public name appears in the reference without an edit here.
"""

from __future__ import annotations

import inspect
import sys

from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging

import rulebridge

logger = logging.getLogger(__name__)

# A public name not placed here still appears, under "Other public names".
GROUPS = {
    "Differentiating": ["grad", "value_and_grad", "vjp", "trace"],
    "Tapes": ["Tape", "Op", "Traced"],
    "Rules for any function": ["import_rule"],
    "Checking rules": ["check_rule", "assert_rule", "CheckResult", "check_on_first_use", "debug",
                       "debug_enabled", "measure_rules"],
    "Sources of rules": ["adapters", "prefer", "rules", "lookup", "register_adapter", "Adapter",
                         "AdapterInfo", "ENTRY_POINT_GROUP"],
    "Writing rules": ["Rule", "CallForward", "SparseCotangent", "conform_cotangent",
                      "decline_unsupported", "DIFFERENTIABLE_DTYPES", "function_name"],
    "Functions that read one triangle": ["reads_one_triangle", "triangle_read",
                                         "one_triangle_call", "TriangleCall",
                                         "lower_triangle_cotangent", "hermitian_from_triangle"],
    "Signatures": ["Signature", "SpecInfo", "spec_of", "signature_of", "format_spec",
                   "format_signature", "parse_signature"],
}
# Classes whose methods are mostly the engine's own: only these members are documented.
CLASS_MEMBERS = {"Tape": ["ops", "replay", "replace", "to_dot"], "Traced": []}
PLACEHOLDER = ".. rulebridge-public-names::"


def reference() -> str:
    """The reStructuredText of every public name, grouped as `GROUPS` says."""
    public = list(rulebridge.__all__)
    errors = [n for n in public if _is_error(getattr(rulebridge, n))]
    placed = {n for names in GROUPS.values() for n in names} | set(errors)
    groups = {title: [n for n in names if n in public] for title, names in GROUPS.items()}
    groups["Errors and warnings"] = errors
    groups["Other public names"] = [n for n in public if n not in placed]
    text = []
    for title, names in groups.items():
        if names:
            text += [title, "-" * len(title), ""]
            text += [_directive(name) for name in names]
    return "\n".join(text + [scipy_reference()])


def _is_error(obj) -> bool:
    return isinstance(obj, type) and issubclass(obj, BaseException)


def _is_own(obj) -> bool:
    return getattr(obj, "__module__", "").startswith("rulebridge")


def _directive(name: str) -> str:
    obj = getattr(rulebridge, name)
    if _is_error(obj):
        return f".. autoexception:: rulebridge.{name}\n"
    if isinstance(obj, type) and _is_own(obj):
        members = CLASS_MEMBERS.get(name)
        if members is None:
            return f".. autoclass:: rulebridge.{name}\n   :members:\n"
        members = [m for m in members if hasattr(obj, m)]
        return f".. autoclass:: rulebridge.{name}\n" + (
            f"   :members: {', '.join(members)}\n" if members else "")
    if callable(obj) and _is_own(obj):
        return f".. autofunction:: rulebridge.{name}\n"
    if inspect.ismodule(obj):
        return f".. automodule:: {obj.__name__}\n   :no-index:\n"
    return _data_directive(name, obj)


def _data_directive(name: str, obj) -> str:
    """A constant or type alias, documented by the `#:` comment where a rulebridge module
    assigns it (autodoc would look for one in `rulebridge/__init__.py`, which imports it)."""
    for module_name, module in sorted(sys.modules.items()):
        if module_name.startswith("rulebridge.") and getattr(module, name, None) is obj:
            doc = ModuleAnalyzer.for_module(module_name).find_attr_docs().get(("", name))
            if doc:
                body = "".join(f"   {line}\n" if line else "\n" for line in doc)
                # the page's currentmodule is rulebridge: the name alone, or its anchor would
                # be rulebridge.rulebridge.NAME
                return f".. py:data:: {name}\n   :value: {obj!r}\n\n{body}"
    logger.warning(f"rulebridge.{name} is public but has no documentation: write a `#:` comment "
                   f"above the line of the rulebridge module that assigns it")
    return f".. py:data:: {name}\n"


def scipy_reference() -> str:
    """`rulebridge.scipy` and each of its modules, from their docstrings, and `DropIn`, what
    each function of theirs is (last on the page: automodule changes the current module)."""
    import rulebridge.scipy as namespace

    title = "SciPy's functions: rulebridge.scipy"
    text = [title, "-" * len(title), "", ".. automodule:: rulebridge.scipy", "   :members: imported",
            "", ".. autoclass:: rulebridge.scipy.dropin.DropIn", "   :members: sources", ""]
    for module in namespace.MODULES:  # SciPy's names: documented by SciPy, not repeated here
        text += [f".. automodule:: rulebridge.scipy.{module}", ""]
    return "\n".join(text)


def _check_docstring(app, what, name, obj, options, lines) -> None:
    public = name.removeprefix("rulebridge.")
    if name != f"rulebridge.{public}" or public not in rulebridge.__all__:
        return  # a member or an internal name: not checked here
    if not any(line.strip() for line in lines):
        logger.warning(f"{name} is public but has no docstring")
    elif (what == "function" and _takes_parameters(obj)
          and "Parameters" not in [line.strip() for line in lines]):
        logger.warning(f"{name}'s docstring has no numpy-style 'Parameters' section (a line "
                       f"'Parameters' underlined by '----------')")


def _takes_parameters(obj) -> bool:
    try:
        return bool(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return False


def _fill(app, docname, source) -> None:
    if docname == "api":
        source[0] = source[0].replace(PLACEHOLDER, reference())


def setup(app):
    app.connect("source-read", _fill)
    # before napoleon (priority 500) turns the numpy sections into fields
    app.connect("autodoc-process-docstring", _check_docstring, priority=400)
    return {"parallel_read_safe": True}

"""Sphinx configuration: the API reference (autodoc of `rulebridge.__all__`, numpy-style
docstrings) and the Markdown pages of this folder.

Build: `python -m sphinx -W -n -b html docs docs/_build` (tests/test_docs.py builds it the same
way with a faster builder).
"""

from __future__ import annotations

import importlib.metadata
import re

import rulebridge

project = "rulebridge"
author = "rulebridge developers"
copyright = "rulebridge developers"
release = importlib.metadata.version("rulebridge")
version = release

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
root_doc = "index"

napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
myst_heading_anchors = 3
# Docstrings write code in single backquotes, as Markdown does: show it as code.
default_role = "literal"

# Warnings are errors (-W) and every cross-reference must resolve (-n), except to names outside
# rulebridge: the build is offline, so there is no inventory of Python's, NumPy's or SciPy's docs.
nitpicky = True
nitpick_ignore_regex = [(r"py:.*", r"(?!rulebridge\b).*")]
html_theme = "alabaster"

# The API reference lists every name in `rulebridge.__all__`, in these groups; a public name not
# placed here still appears, under "Other public names", so adding one never needs this file.
API_GROUPS = {
    "Differentiating": ["grad", "value_and_grad", "vjp", "trace"],
    "Tapes": ["Tape", "Op", "Traced"],
    "Rules for any function": ["import_rule"],
    "Checking rules": ["check_rule", "assert_rule", "CheckResult", "check_on_first_use", "debug",
                       "debug_enabled", "measure_rules"],
    "Sources of rules": ["adapters", "prefer", "rules", "lookup", "register_adapter", "Adapter",
                         "AdapterInfo", "ENTRY_POINT_GROUP"],
    "Writing rules": ["Rule", "CallForward", "SparseCotangent", "conform_cotangent",
                      "decline_unsupported", "DIFFERENTIABLE_DTYPES", "function_name"],
    "Signatures": ["Signature", "SpecInfo", "spec_of", "signature_of", "format_spec",
                   "format_signature", "parse_signature"],
}
# Classes whose methods are mostly the engine's own: only these members are documented.
CLASS_MEMBERS = {"Tape": ["ops", "replay", "replace", "to_dot"], "Traced": []}
API_PLACEHOLDER = ".. rulebridge-public-names::"


def api_reference() -> str:
    """The reStructuredText of every public name, grouped as `API_GROUPS` says."""
    public = list(rulebridge.__all__)
    errors = [n for n in public if isinstance(getattr(rulebridge, n), type)
              and issubclass(getattr(rulebridge, n), BaseException)]
    placed = {n for names in API_GROUPS.values() for n in names} | set(errors)
    groups = {title: [n for n in names if n in public] for title, names in API_GROUPS.items()}
    groups["Errors and warnings"] = errors
    groups["Other public names"] = [n for n in public if n not in placed]
    text = []
    for title, names in groups.items():
        if names:
            text += [title, "-" * len(title), ""]
            text += [_directive(name) for name in names]
    return "\n".join(text)


def _directive(name: str) -> str:
    obj = getattr(rulebridge, name)
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return f".. autoexception:: rulebridge.{name}\n"
    if isinstance(obj, type) and obj.__module__.startswith("rulebridge"):
        members = CLASS_MEMBERS.get(name)
        if members is None:
            return f".. autoclass:: rulebridge.{name}\n   :members:\n"
        members = [m for m in members if hasattr(obj, m)]
        return f".. autoclass:: rulebridge.{name}\n" + (
            f"   :members: {', '.join(members)}\n" if members else "")
    if callable(obj) and getattr(obj, "__module__", "").startswith("rulebridge"):
        return f".. autofunction:: rulebridge.{name}\n"
    return f".. autodata:: rulebridge.{name}\n   :annotation:\n"


def _fill_api(app, docname, source):
    if docname == "api":
        source[0] = source[0].replace(API_PLACEHOLDER, api_reference())


def setup(app):
    app.connect("source-read", _fill_api)

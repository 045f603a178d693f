"""Sphinx configuration: the API reference (autodoc of `rulebridge.__all__`, numpy-style
docstrings) and the Markdown pages of this folder.

Build: `python -m sphinx -W -n -b html docs docs/_build` (tests/project/test_docs.py builds it the same
way with a faster builder).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

import rulebridge  # noqa: E402

project = "rulebridge"
author = "rulebridge developers"
copyright = "rulebridge developers"
release = rulebridge.__version__
version = release

# public_api (docs/_ext/public_api.py) fills api.rst with every name in rulebridge.__all__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser", "public_api"]
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
nitpick_ignore_regex = [(r"py:.*", r"(?!rulebridge\b).*"),
                        # the type variables of grad's and jit's typed signatures, not classes
                        (r"py:class", r"rulebridge\.api\.T"),
                        (r"py:class", r"rulebridge\.jit\.F")]
html_theme = "alabaster"

"""docs/errors.md documents every error and warning class rulebridge raises
(tools/errors_doc.py generates it by running each example)."""

import importlib.util
import sys
from pathlib import Path

import rulebridge as rb

ROOT = Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("errors_doc", ROOT / "tools" / "errors_doc.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["errors_doc"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_every_error_class_has_an_example_and_a_section():
    tool = _tool()
    documented = {example.raised for example in tool.EXAMPLES}
    classes = set(tool.library_classes()) - {rb.RulebridgeError}
    assert classes <= documented, sorted(c.__name__ for c in classes - documented)
    text = (ROOT / "docs" / "errors.md").read_text()
    for cls in documented:
        assert f"## {cls.__name__}" in text, f"docs/errors.md has no section for {cls.__name__}"


def test_examples_raise_what_they_document():
    tool = _tool()
    for example in tool.EXAMPLES:
        if example.raised in (rb.NestedDifferentiationError, rb.RuleContractError, rb.TracingError):
            assert tool.run(example)  # raises AssertionError if the example does not raise

"""docs/errors.md documents every error and warning class rulebridge raises
(tools/errors_doc.py generates it by running each example)."""


import rulebridge as rb

from tools import errors_doc
from tests.support.paths import ROOT



def test_every_error_class_has_an_example_and_a_section():
    documented = {example.raised for example in errors_doc.EXAMPLES}
    classes = set(errors_doc.library_classes()) - {rb.RulebridgeError}
    assert classes <= documented, sorted(c.__name__ for c in classes - documented)
    text = (ROOT / "docs" / "errors.md").read_text()
    for cls in documented:
        assert f"## {cls.__name__}" in text, f"docs/errors.md has no section for {cls.__name__}"


def test_examples_raise_what_they_document():
    for example in errors_doc.EXAMPLES:
        if example.raised in (rb.NestedDifferentiationError, rb.RuleContractError, rb.TracingError):
            assert errors_doc.run(example)  # raises AssertionError if the example does not raise


def test_the_reliability_figures_still_run():
    # tools/reliability.py reads its programs from the test modules; a move of tests/ broke it
    # silently once (tests.test_threads), so its cheap figures are run here.
    from tools import reliability

    (threads,) = reliability.threads(rounds=1)
    assert threads.endswith("bit-identical to the serial results")
    n = int(threads.split(", ")[1].split()[0])
    assert f"{n} bit-identical" in threads, threads
    (memory,) = reliability.memory(200)
    assert "heap growth" in memory

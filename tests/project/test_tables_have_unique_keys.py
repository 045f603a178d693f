"""The project's data tables are dict displays (`{np.clip: ..., ...}`): a key written twice keeps
only its last entry, silently (the JAX adapter once lost np.clip's meaning that way). Read every
module's source and refuse any dict display that repeats a key."""

import ast

import pytest
from tests.support.paths import ROOT

MODULES = sorted([*ROOT.glob("rulebridge/**/*.py"), *ROOT.glob("adapters/*/rulebridge_*/*.py")])


def repeated_keys(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, key) for each key a dict display repeats; keys are compared as written."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            seen = set()
            for key in node.keys:
                if key is None:  # `**mapping`
                    continue
                text = ast.unparse(key)
                if text in seen:
                    found.append((key.lineno, text))
                seen.add(text)
    return found


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_no_dict_display_repeats_a_key(path):
    assert repeated_keys(ast.parse(path.read_text(), str(path))) == []


def test_a_repeated_key_is_found():
    source = "MEANINGS = {np.clip: 1, np.sin: 2,\n            np.clip: 3}"
    assert repeated_keys(ast.parse(source)) == [(2, "np.clip")]

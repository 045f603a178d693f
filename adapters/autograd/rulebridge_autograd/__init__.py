"""rulebridge adapter importing autograd's registered VJPs (entry point `autograd`).

This module stays light: rulebridge reads the two declarations below without loading the
adapter, which imports autograd.
"""

rulebridge_priority = 20  # tried before adapters that compile: its VJPs run as they are
rulebridge_install = "pip install -e adapters/autograd (from a checkout of rulebridge) and autograd"


def __getattr__(name: str):
    if name == "AutogradAdapter":
        from .adapter import AutogradAdapter

        return AutogradAdapter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AutogradAdapter"]

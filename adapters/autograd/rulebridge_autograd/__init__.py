"""rulebridge adapter importing autograd's registered VJPs (entry point `autograd`)."""

from .adapter import AutogradAdapter

__all__ = ["AutogradAdapter"]

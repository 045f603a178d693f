"""rulebridge adapter importing JAX's VJPs, compiled once per signature (entry point `jax`)."""

from .adapter import JaxAdapter

__all__ = ["JaxAdapter"]

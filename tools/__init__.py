"""Maintenance tools, each run from the repository root as `python -m tools.NAME`."""

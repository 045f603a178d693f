"""Deliberately broken rulebridge adapters (tests only)."""

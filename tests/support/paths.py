"""The repository's root, for tests that read its files (docs, examples, the matrix)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

"""compat_matrix.md answers a reader: whole footnotes that say at which configurations a rule
passed and at which it did not, and per function the configurations checked."""

from __future__ import annotations

from rulebridge.checking import matrix, render

REASON = ("ImportRuleError: the rule imported for scipy.stats.gamma.logpdf broke in its check "
          "against scipy.stats.gamma.logpdf itself, before its first use: error: "
          + "the pullback of the shape parameter raised NotImplementedError " * 4
          + "THE REASON'S LAST WORDS")


def _cell(status, signature, kwargs="", reason="", dtype="float64", source="autograd"):
    key = signature[:-1] + (f", {kwargs})" if kwargs else ")")
    return {"function": "scipy.stats.gamma.logpdf", "source": source, "dtype": dtype,
            "signature": signature, "kwargs": kwargs, "key": key, "status": status,
            "reason": reason}


MATRIX = {"versions": {"numpy": "2"}, "seed": 0, "sources": ["autograd"],
          "dtypes": ["float64"], "exports": {}, "conventions": [],
          "cells": [_cell("pass", "(float64[:, :], float64)"),
                    _cell("error", "(float64[:], float64, float64, float64)", reason=REASON)]}


def test_a_footnote_is_whole_and_says_what_passed_and_what_did_not():
    text = render.to_markdown(MATRIX)
    (note,) = [line for line in text.splitlines() if line.startswith("1. ")]
    assert note.endswith("THE REASON'S LAST WORDS") and "..." not in note
    assert "passes at (float64[:, :], float64); error at (float64[:], float64, float64, " \
           "float64): ImportRuleError" in note
    assert "error [1] (in 1 of 2 configurations; the others pass)" in text
    assert "/2 pass)" not in text


def test_each_function_lists_the_configurations_checked():
    text = render.to_markdown(MATRIX)
    assert ("- `logpdf`: `(float64[:, :], float64)` · "
            "`(float64[:], float64, float64, float64)`") in text


def test_a_cells_reason_is_kept_whole_without_run_dependent_addresses():
    long = "x " * 400 + "<function f at 0x7f00deadbeef> end"
    assert matrix._line(long) == " ".join(long.split()).replace(" at 0x7f00deadbeef", "")

"""Keyword arguments as other libraries spell them, answered with rulebridge's spelling.

A program moved from another library may call `grad(f, argnum=1)`; rulebridge takes `argnums`,
and Python's own "got an unexpected keyword argument 'argnum'" leaves the reader to guess why.
Each transformation that takes `argnums` is wrapped here: a keyword of the table raises a
UsageError that names the keyword to use, at the user's line. It runs when the transformation
is built, never per call.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from .errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])

#: another library's keyword -> rulebridge's, with the same meaning
RENAMED = {"argnum": "argnums"}


def other_spellings(transformation: F) -> F:
    """`transformation`, answering a keyword of `RENAMED` with the keyword to use instead."""

    @functools.wraps(transformation)
    def spelled(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            for keyword in kwargs.keys() & RENAMED.keys():
                ours, name = RENAMED[keyword], transformation.__name__
                raise UsageError(
                    f"rulebridge.{name} takes {ours}=, not {keyword}=: both name the "
                    "position(s) of the argument(s) to differentiate.",
                    fix=f"rulebridge.{name}(f, {ours}={kwargs[keyword]!r})")
        return transformation(*args, **kwargs)

    return spelled  # type: ignore[return-value]

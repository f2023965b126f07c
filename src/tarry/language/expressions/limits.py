"""The bounds that keep every expression small and quick, whatever its input.

Evaluation walks each node of a compiled expression once: there are no loops, no recursion and
no calls besides the built-in filters, so the number of nodes evaluated is bounded by the
source length. What can still grow is data: strings and lists built by ``+`` and ``*``, JSON
text, membership tests over big values. Those operations are charged to a per-render work
budget, and the values they build are capped in size before they are built.
"""

from __future__ import annotations

from tarry.errors import ExpressionError

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_LIST_ITEMS",
    "MAX_SOURCE_CHARS",
    "MAX_STRING_CHARS",
    "MAX_WORK",
    "check_list_size",
    "check_string_size",
]

MAX_SOURCE_CHARS = 10_000
"""Longest template source accepted by ``compile_template``."""

MAX_DEPTH = 50
"""Deepest nesting of one expression (parentheses alone do not count)."""

MAX_STRING_CHARS = 1_000_000
"""Longest string an expression may build or render."""

MAX_LIST_ITEMS = 100_000
"""Longest list an expression may build."""

MAX_INT_BITS = 4096
"""Largest integer (in bits) arithmetic may produce."""

MAX_WORK = 10_000_000
"""Work units one render may spend: a unit is a character or item built, copied or scanned."""


def check_string_size(length: int) -> None:
    """Refuse, before building it, a string of ``length`` characters over the limit."""
    if length > MAX_STRING_CHARS:
        raise ExpressionError(f"string result is too long ({length:,} characters; the limit "
                              f"is {MAX_STRING_CHARS:,})")


def check_list_size(length: int) -> None:
    """Refuse, before building it, a list of ``length`` items over the limit."""
    if length > MAX_LIST_ITEMS:
        raise ExpressionError(f"list result is too long ({length:,} items; the limit is "
                              f"{MAX_LIST_ITEMS:,})")

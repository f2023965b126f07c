"""The bounds that keep every expression small and quick, whatever its input.

Evaluation walks each node of a compiled expression once: there are no loops, no recursion and
no calls besides the built-in filters, so the number of nodes evaluated is bounded by the
source length. What can still grow is data: strings and lists built by ``+`` and ``*``, JSON
text, membership tests over big values. Those operations are charged to a per-render work
budget, by what they cost (four characters handled at C speed are a unit, a step over a
nested item in Python a thousand), and the values they build are capped in size before they are
built.
"""

from __future__ import annotations

from tarry.errors import ExpressionError

__all__ = [
    "CHARS_PER_UNIT",
    "ITEM_WORK",
    "LOOP_WORK",
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "MAX_LIST_ITEMS",
    "MAX_SOURCE_CHARS",
    "MAX_STRING_CHARS",
    "MAX_WORK",
    "STEP_WORK",
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

MAX_WORK = 1_000_000
"""Work units one render may spend, each about a nanosecond of work: :data:`CHARS_PER_UNIT`
characters built, copied, scanned, compared or written are a unit, a list's item scanned or
compared is :data:`ITEM_WORK` (:data:`LOOP_WORK` in a loop in Python), a step the evaluator
takes in Python (a call over one nested item) :data:`STEP_WORK`. The
worst render costs about a millisecond, so that no run holds a worker's loop for long: 34
such runs beside 200 timers leave the timers' lateness p99 under 100 ms on a quiet machine
(``bench/hostile_expressions.py``)."""

CHARS_PER_UNIT = 4
"""Characters built, copied, scanned, compared or written (at C speed) per work unit."""

ITEM_WORK = 20
"""Work units of one item of a list (or object) scanned or compared at C speed."""

LOOP_WORK = 100
"""Work units of one item of a list (or object) looked at in a loop in Python."""

STEP_WORK = 1_000
"""Work units of one step in Python: comparing two items of nested values, looking at one
candidate of a membership test, visiting one item to write it out."""


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

"""Fuzzing the JSON reader of ``--data``, ``--inputs`` and ``-i``: any text gives a plain
value or a ``ValueError`` saying why, never a RecursionError, and never NaN or infinity."""

from __future__ import annotations

import math
from typing import Any

from fuzz_support import fuzz, json_text, outcome
from hypothesis import example, given

from tarry.language.jsontext import parse_json


def finite(value: Any) -> bool:
    """Whether no float inside ``value`` is NaN or infinite."""
    if isinstance(value, dict):
        return all(finite(item) for item in value.values())
    if isinstance(value, list):
        return all(finite(item) for item in value)
    return not isinstance(value, float) or math.isfinite(value)


@fuzz(300)
@given(text=json_text())
@example(text="[" * 100_000 + "]" * 100_000)
@example(text='{"a": ' * 5000 + "1" + "}" * 5000)
@example(text="9" * 4301)
@example(text="[NaN, Infinity, -Infinity]")
@example(text="1e400")
def test_any_text_is_a_finite_json_value_or_a_value_error(text: str) -> None:
    result = outcome(lambda: parse_json(text))
    if isinstance(result, Exception):
        assert isinstance(result, ValueError), repr(result)
        assert str(result)
    else:
        assert finite(result)

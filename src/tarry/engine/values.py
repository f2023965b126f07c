"""Conversions between the interpreter's values and what the store keeps (JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from tarry.clock import iso
from tarry.language.durations import format_duration

__all__ = ["to_json"]



def to_json(value: Any) -> Any:
    """``value`` with instants and durations spelled as strings, tuples as lists."""
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value

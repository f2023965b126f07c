"""Conversions between the interpreter's values and what the store keeps (JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from tarry.clock import iso
from tarry.errors import InvalidValue
from tarry.language.durations import format_duration
from tarry.values import MAX_DEPTH

__all__ = ["to_json"]


class _Cycle(Exception):
    """A container met again inside itself."""


def to_json(value: Any, what: str = "the value") -> Any:
    """``value`` with instants and durations spelled as strings, tuples as lists and integer
    keys as strings; raises :class:`InvalidValue` (naming ``what``) for a value that holds
    itself. Nothing else is converted: a key of another kind (a tuple), or a value no JSON
    holds, is left for :func:`tarry.values.check_value` to refuse with where it is, and so
    is a value nested deeper than it allows (left as it is past that depth)."""
    try:
        return _converted(value, set())
    except _Cycle:
        raise InvalidValue(what, "it contains itself (a list or object that holds a "
                                 "reference to itself has no JSON form)") from None


def _converted(value: Any, holding: set[int]) -> Any:
    """``value`` converted; ``holding`` has the ids of the containers it is inside."""
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, timedelta):
        return format_duration(value)
    if not isinstance(value, Mapping | list | tuple) or len(holding) > MAX_DEPTH:
        return value
    if id(value) in holding:
        raise _Cycle
    holding.add(id(value))
    if isinstance(value, Mapping):
        converted: Any = {_key(k): _converted(v, holding) for k, v in value.items()}
    else:
        converted = [_converted(v, holding) for v in value]
    holding.discard(id(value))
    return converted


def _key(key: Any) -> Any:
    """An object's key as JSON writes it: an integer as its digits, anything else as it is."""
    return str(key) if type(key) is int else key

"""The values expressions work on: their kinds, and how they are written as text and JSON.

Values are JSON values (``None``, ``bool``, ``int``, ``float``, ``str``, ``list``, ``dict``)
plus aware ``datetime`` (instants) and ``timedelta`` (durations). Kinds are the names error
messages use: ``null``, ``bool``, ``int``, ``float``, ``str``, ``list``, ``dict``,
``instant``, ``duration``.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from tarry.errors import ExpressionError
from tarry.language.durations import format_duration
from tarry.language.expressions.limits import check_string_size

__all__ = ["UNDEFINED", "format_instant", "kind_of", "to_json", "to_text", "with_article"]


class _Undefined(enum.Enum):
    """The type of :data:`UNDEFINED`."""

    TOKEN = "undefined"


UNDEFINED: Final = _Undefined.TOKEN
"""What a lenient lookup yields where a name, key or index does not exist."""

_KIND_BY_TYPE: dict[type, str] = {
    str: "str", bool: "bool", int: "int", float: "float", type(None): "null", list: "list",
    dict: "dict", timedelta: "duration",
}


def kind_of(value: Any) -> str:
    """The kind of ``value`` as error messages name it (``str``, ``instant``, …)."""
    kind = _KIND_BY_TYPE.get(type(value))
    if kind is not None:
        return kind
    if isinstance(value, datetime):
        return "instant" if value.tzinfo is not None else "datetime without timezone"
    if isinstance(value, Mapping):
        return "dict"
    for base, name in _KIND_BY_TYPE.items():
        if isinstance(value, base):
            return name
    return type(value).__name__


def with_article(kind: str) -> str:
    """``"an int"``, ``"a str"``, ``"null"``: a kind as it reads in a sentence."""
    if kind == "null":
        return kind
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def format_instant(instant: datetime) -> str:
    """ISO 8601 in UTC with ``Z``; milliseconds only when non-zero (``…T08:00:00.250Z``)."""
    utc = instant.astimezone(UTC)
    seconds = utc.isoformat(timespec="seconds")[:19]
    millis = utc.microsecond // 1000
    return f"{seconds}.{millis:03d}Z" if millis else f"{seconds}Z"


def _json_default(value: Any) -> Any:
    """A JSON-ready stand-in for instants, durations and read-only mappings."""
    kind = kind_of(value)
    if kind == "dict":
        return dict(value)
    if kind == "instant":
        return format_instant(value)
    if kind == "duration":
        return format_duration(value)
    raise ExpressionError(f"cannot write {with_article(kind)} as JSON")


def to_json(value: Any) -> str:
    """Compact JSON for ``value``; instants and durations are written as in text."""
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                          default=_json_default)
    except (TypeError, ValueError) as exc:
        raise ExpressionError(f"cannot write {with_article(kind_of(value))} as JSON ({exc})"
                              ) from None
    check_string_size(len(text))
    return text


_TEXT: dict[str, Callable[[Any], str]] = {
    "str": str,
    "null": lambda _: "",
    "bool": lambda value: "true" if value else "false",
    "int": lambda value: str(int(value)),
    "float": lambda value: float.__repr__(float(value)),
    "list": to_json,
    "dict": to_json,
    "instant": format_instant,
    "duration": format_duration,
}


def to_text(value: Any) -> str:
    """``value`` as it reads inside a string: strings as is, null as "", JSON otherwise."""
    kind = kind_of(value)
    write = _TEXT.get(kind)
    if write is None:
        raise ExpressionError(f"cannot write {with_article(kind)} as text")
    return write(value)

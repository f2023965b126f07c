"""How a Python flow's values become JSON in its run's state, and back.

Everything a flow records — a step's result, a condition's state, the flow's return value — is
kept in the run's state, a JSON document. The default :class:`JsonSerializer` accepts JSON data
as it is (dict, list, str, int, float, bool, None). An app can plug in its own
:class:`Serializer` (``App(serializer=...)``) to store other types, such as dataclasses, by
turning them into JSON data and back.

A value that cannot be stored fails clearly, at the operation that recorded it, with a
:class:`~tarry.errors.SerializationError` naming the value and the reason — or, for JSON no
store can keep (a NUL character, a lone surrogate, over the size limit, see
:mod:`tarry.values`), an :class:`~tarry.errors.InvalidValue`.

The value an operation returns is always the *decoded* stored form, on the first execution as
on every replay, so a flow sees the same thing whether a result was just computed or recalled
(a tuple comes back as a list either way).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from tarry.errors import SerializationError
from tarry.values import ValueLimits, check_value, load_json

__all__ = ["Codec", "JsonSerializer", "Serializer"]


class Serializer(Protocol):
    """Turns values into JSON data (``encode``) and JSON data back into values (``decode``)."""

    def encode(self, value: Any) -> Any:
        """JSON data (dict, list, str, int, float, bool, None) standing for ``value``."""
        ...

    def decode(self, data: Any) -> Any:
        """The value ``data`` stands for."""
        ...


class JsonSerializer:
    """The default: values must be JSON data already; dict keys become strings."""

    def encode(self, value: Any) -> Any:
        """``value`` itself (checked by the caller)."""
        return value

    def decode(self, data: Any) -> Any:
        """``data`` itself."""
        return data


_SCALARS = (str, int, float, bool, type(None))
_HINT = ("return JSON data (dict, list, str, int, float, bool or None), or give the App a "
         "serializer that handles it")


class Codec:
    """A :class:`Serializer` wrapped with the checks the journal relies on.

    :meth:`store` gives JSON data that is the journal's own (no caller can mutate it later);
    :meth:`load` gives a fresh value each time, so a flow mutating what an operation returned
    cannot change what the run recorded.
    """

    def __init__(self, serializer: Serializer) -> None:
        self.serializer = serializer

    def store(self, value: Any, what: str) -> Any:
        """The JSON data to record for ``value``; ``what`` names it in a SerializationError."""
        try:
            data = self.serializer.encode(value)
        except SerializationError:
            raise
        except Exception as exc:
            raise SerializationError(what, f"the serializer failed: {type(exc).__name__}: "
                                           f"{exc}") from exc
        return self.plain(data, what, hint=_HINT)

    def load(self, data: Any) -> Any:
        """The value recorded as ``data`` (decoded from a fresh copy)."""
        return self.serializer.decode(self.copy(data))

    @staticmethod
    def plain(data: Any, what: str, *, hint: str = "") -> Any:
        """``data`` checked to be JSON data and copied (no serializer involved); ``hint``
        ends the message of a SerializationError."""
        if isinstance(data, _SCALARS) and not isinstance(data, float | str):
            return data
        try:
            copied = load_json(json.dumps(data, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise SerializationError(what, f"{exc}{'; ' + hint if hint else ''}") from exc
        check_value(copied, what, ValueLimits().value_bytes)  # InvalidValue: no store keeps it
        return copied

    @staticmethod
    def copy(data: Any) -> Any:
        """A fresh copy of JSON data (its scalars are immutable and shared)."""
        if isinstance(data, dict):
            return {key: Codec.copy(value) for key, value in data.items()}
        if isinstance(data, list):
            return [Codec.copy(value) for value in data]
        return data

"""Correlation paths: where an event type's correlation values are in its payloads.

``correlate_on`` is a list of top-level field names (``[message]``: the key ``message`` is
the field ``message``) or a mapping from key names to dotted paths into the payload (``{issue:
issue.number, repo: repository.full_name}``). Waits ``match`` on the key names; an event's
values are read at the paths.

A path is read one segment at a time, each segment naming a field of an object. A segment of
digits alone, on a list, is an item of it counted from 0 (``actions.0.value``; on an object
it names the field ``"0"``). The value found must be a string, a number or a boolean: a path
that leads nowhere, to ``null``, to an object or to a list makes the payload invalid, with
the path named. Field names that hold a dot or a character outside ``A-Z a-z 0-9 _ -`` cannot
be reached.

Pure: parsing a path, reading it in a payload, and what a JSON Schema proves about it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tarry._suggest import did_you_mean

__all__ = ["CorrelationPath", "parse_path", "path_text", "schema_refutes", "value_at"]

CorrelationPath = tuple[str, ...]
"""A parsed path: its segments, in order."""

_SEGMENT = re.compile(r"[A-Za-z0-9_-]+")
_SCALAR_TYPES = frozenset({"string", "number", "integer", "boolean"})


def parse_path(text: str) -> CorrelationPath:
    """The segments of a dotted path; ``ValueError`` with the reason when it is not one."""
    if not text:
        raise ValueError("a correlation path cannot be empty")
    segments = tuple(text.split("."))
    for segment in segments:
        if not segment:
            raise ValueError(f"'{text}' has an empty segment: write the field names with one "
                             "dot between each (e.g. issue.number)")
        if not _SEGMENT.fullmatch(segment):
            raise ValueError(f"'{text}': the segment '{segment}' holds a character other "
                             "than letters, digits, '_' and '-'")
    return segments


def path_text(path: CorrelationPath) -> str:
    """The path as it is written."""
    return ".".join(path)


def value_at(data: Any, path: CorrelationPath) -> tuple[Any, str | None]:
    """The correlation value at ``path`` in the payload ``data``, and None; or None and why
    there is none (the path named)."""
    value = data
    for segment in path:
        value = _step(value, segment)
        if value is _ABSENT:
            return None, f"missing correlation field '{path_text(path)}'"
    if value is None or not isinstance(value, str | int | float):
        return None, (f"correlation field '{path_text(path)}' is {_kind(value)}; it must be "
                      "a string, a number or a boolean")
    return value, None


_ABSENT = object()


def _step(value: Any, segment: str) -> Any:
    if isinstance(value, dict):
        return value.get(segment, _ABSENT)
    if isinstance(value, list) and segment.isdecimal() and int(segment) < len(value):
        return value[int(segment)]
    return _ABSENT


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return "an object" if isinstance(value, dict) else "a list"


def schema_refutes(schema: Mapping[str, Any], path: CorrelationPath) -> str | None:
    """Why no payload valid under ``schema`` has a correlation value at ``path`` (None when
    the schema does not prove that). Only what the schema states outright counts: a ``type``
    that rules out an object (or a list, for an item), a field outside ``properties`` where
    ``additionalProperties`` is false, or a last ``type`` that is not a scalar; composed
    schemas (``$ref``, ``allOf`` …) prove nothing here."""
    node: Any = schema
    for depth, segment in enumerate(path):
        where = f"'{path_text(path[:depth])}'" if depth else "the payload"
        if node is False:
            return f"the schema allows nothing at {where}"
        if not isinstance(node, Mapping):
            return None
        types = _types(node)
        if types is not None and "object" not in types and not (
                "array" in types and segment.isdecimal()):
            return f"the schema declares {where} of type {'/'.join(sorted(types))}"
        if types == {"array"}:
            node = node.get("items")
            continue
        properties = node.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        if segment in properties:
            node = properties[segment]
            continue
        if node.get("additionalProperties") is False and not node.get("patternProperties"):
            return (f"the schema allows no field '{segment}' in {where}"
                    f"{did_you_mean(segment, [str(k) for k in properties])}")
        return None
    return _last_refutes(node, path)


def _last_refutes(node: Any, path: CorrelationPath) -> str | None:
    if node is False:
        return f"the schema allows nothing at '{path_text(path)}'"
    types = _types(node) if isinstance(node, Mapping) else None
    if types is not None and not types & _SCALAR_TYPES:
        return (f"the schema declares '{path_text(path)}' of type {'/'.join(sorted(types))}, "
                "not a string, a number or a boolean")
    return None


def _types(node: Mapping[str, Any]) -> set[str] | None:
    declared = node.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list) and all(isinstance(item, str) for item in declared):
        return set(declared)
    return None

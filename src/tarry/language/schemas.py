"""JSON Schema (2020-12), loaded only by a project that uses one.

Event manifests (``schema:``), task forms (``form:``) and ``ctx.ask`` take JSON Schemas. The
checker, jsonschema with its metaschemas and reference resolver, is several MiB of every
process that imports it, so it is imported on the first schema checked, not with the
language: a worker of flows and events without schemas never loads it.

A schema's regular expressions (``pattern``, the keys of ``patternProperties``) run on RE2,
an engine without backtracking whose time grows linearly with the text matched, so that no
payload can make a check run for seconds (``(a+)+$`` on 41 characters takes Python's ``re``
minutes). A pattern RE2 cannot run (a backreference, a lookaround) is refused with the
schema, as is ``unevaluatedProperties`` beside ``patternProperties`` (jsonschema would match
those patterns itself, with ``re``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tarry._text import clip

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = ["SchemaPath", "SchemaProblem", "schema_problem", "validation_problems", "validator"]

SchemaPath = tuple[str | int, ...]
"""Where a value is in a schema: the keys and indexes from its root down to it."""

_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                          "dependentSchemas"})
"""The keywords whose value maps names to schemas (a name there is not a keyword)."""
_DATA = frozenset({"const", "enum", "default", "examples"})
"""The keywords whose value is data, not a schema."""
_LINEAR = "schema patterns run in linear time, without backreferences or lookaround"
_NOT_LINEAR = ("invalid perl operator", "invalid escape sequence")
"""How RE2 refuses a lookaround and a backreference (the refusals the hint explains)."""


@dataclass(frozen=True)
class SchemaProblem:
    """Why a schema is refused, and where in it (``path``: empty for the schema as a whole;
    with ``key``, the problem is the last key of the path, not its value)."""

    message: str
    path: SchemaPath = ()
    key: bool = False


def schema_problem(schema: Mapping[str, Any]) -> SchemaProblem | None:
    """Why ``schema`` is not a valid JSON Schema (2020-12) that tarry can check in linear
    time, or None when it is."""
    import jsonschema  # noqa: PLC0415 - on the first schema: see the module docstring

    try:
        # RE2, not the metaschema's ``format: regex`` (Python's ``re``), judges patterns
        jsonschema.Draft202012Validator.check_schema(
            schema, format_checker=jsonschema.FormatChecker(formats=()))
    except jsonschema.SchemaError as exc:
        return SchemaProblem(exc.message, tuple(exc.path))
    return next(_pattern_problems(schema, ()), None) or _unevaluated_problem(schema)


def validator(schema: Mapping[str, Any]) -> Validator:
    """The validator of a valid JSON Schema (2020-12), its patterns run on RE2."""
    return _linear_validator_class()(schema)


def validation_problems(checker: Validator, data: Any) -> list[str]:
    """Why ``checker``'s schema refuses ``data``, one line each (``path/to/field: message``),
    in the order of the fields' paths; empty when it accepts it."""
    errors = sorted(checker.iter_errors(data), key=lambda error: list(error.path))
    return [_message("/".join(str(part) for part in error.path), error) for error in errors]


def _message(where: str, error: ValidationError) -> str:
    """One problem's line, quoting at most an excerpt of the value it is about (a 1 MiB
    string that is too long is not written out again in its own error)."""
    message = error.message
    quoted = repr(error.instance)
    if len(quoted) > _QUOTED and quoted in message:
        message = message.replace(quoted, clip(quoted, _QUOTED))
    return clip(f"{where}: {message}" if where else message, _LINE)


_QUOTED = 60
"""How much of the value a problem is about its line quotes."""
_LINE = 500
"""The longest line of a problem (a path or a list of keys may be long too)."""


def _pattern_problems(schema: Any, path: SchemaPath) -> Iterator[SchemaProblem]:
    """Every pattern of ``schema`` (at ``path``) that RE2 refuses, in the schema's order.
    Every value but data is looked into, unknown keywords' included (a ``$ref`` can point
    anywhere in the document)."""
    if isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _pattern_problems(item, (*path, index))
    if not isinstance(schema, Mapping):
        return
    for key, value in schema.items():
        where = (*path, key)
        if key == "pattern" and isinstance(value, str):
            yield from _refusal(value, where)
        elif key == "patternProperties" and isinstance(value, Mapping):
            for pattern in value:
                yield from _refusal(pattern, (*where, pattern), key=True)
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            for name, subschema in value.items():
                yield from _pattern_problems(subschema, (*where, name))
        elif key not in _DATA:
            yield from _pattern_problems(value, where)


def _refusal(pattern: str, where: SchemaPath, *, key: bool = False
             ) -> Iterator[SchemaProblem]:
    try:
        _compiled(pattern)
    except ValueError as exc:
        reason = str(exc)
        hint = f" ({_LINEAR})" if reason.startswith(_NOT_LINEAR) else ""
        yield SchemaProblem(f"pattern {clip(pattern, 100)!r} cannot be used: {reason}{hint}",
                            where, key)


def _unevaluated_problem(schema: Mapping[str, Any]) -> SchemaProblem | None:
    keys = set(_keys(schema))
    if {"unevaluatedProperties", "patternProperties"} <= keys:
        return SchemaProblem("'unevaluatedProperties' cannot be used in a schema that has "
                             "'patternProperties' (use 'additionalProperties')")
    return None


def _keys(value: Any) -> Iterator[str]:
    """Every key of every mapping in ``value``, at any depth."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield key
            yield from _keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keys(item)


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (ValueError with RE2's reason if it cannot run it)."""
    import re2  # noqa: PLC0415 - with the checker: see the module docstring

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "not a regular expression"
        raise ValueError(reason.decode() if isinstance(reason, bytes) else str(reason)
                         ) from None


def _search(pattern: str, text: str) -> bool:
    return _compiled(pattern).search(text) is not None


@functools.cache
def _linear_validator_class() -> type[Validator]:
    """Draft 2020-12 with the keywords that match patterns running them on RE2."""
    import jsonschema  # noqa: PLC0415 - on the first schema: see the module docstring

    extended: type[Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        jsonschema.Draft202012Validator, {
            "pattern": _pattern, "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties})
    return extended


def _pattern(checker: Any, pattern: str, instance: Any,
             schema: Mapping[str, Any]) -> Iterator[Any]:
    from jsonschema import ValidationError  # noqa: PLC0415 - see the module docstring

    if isinstance(instance, str) and not _search(pattern, instance):
        yield ValidationError(f"{clip(instance, 100)!r} does not match {pattern!r}")


def _pattern_properties(checker: Any, patterns: Mapping[str, Any], instance: Any,
                        schema: Mapping[str, Any]) -> Iterator[Any]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from checker.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(checker: Any, additional: Any, instance: Any,
                           schema: Mapping[str, Any]) -> Iterator[Any]:
    from jsonschema import ValidationError  # noqa: PLC0415 - see the module docstring

    if not isinstance(instance, dict):
        return
    declared, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    extras = sorted(key for key in instance if key not in declared
                    and not any(_search(pattern, key) for pattern in patterns))
    if isinstance(additional, dict):
        for extra in extras:
            yield from checker.descend(instance[extra], additional, path=extra)
    elif additional is False and extras:
        shown = ", ".join(repr(clip(extra, 100)) for extra in extras[:10])
        more = f" and {len(extras) - 10} more" if len(extras) > 10 else ""
        yield ValidationError(f"Additional properties are not allowed ({shown}{more} "
                              f"{'was' if len(extras) == 1 else 'were'} unexpected)")

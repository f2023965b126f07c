"""JSON Schema (2020-12), loaded only by a project that uses one.

Event manifests (``schema:``), task forms (``form:``) and ``ctx.ask`` take JSON Schemas. The
checker, jsonschema with its metaschemas and reference resolver, is several MiB of every
process that imports it, so it is imported on the first schema checked, not with the
language: a worker of flows and events without schemas never loads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["schema_problem", "validation_problems", "validator"]


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` is not a valid JSON Schema (2020-12), or None when it is."""
    import jsonschema  # noqa: PLC0415 - on the first schema: see the module docstring

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return exc.message
    return None


def validator(schema: Mapping[str, Any]) -> Validator:
    """The validator of a valid JSON Schema (2020-12)."""
    import jsonschema  # noqa: PLC0415 - on the first schema: see the module docstring

    return jsonschema.Draft202012Validator(schema)


def validation_problems(checker: Validator, data: Any) -> list[str]:
    """Why ``checker``'s schema refuses ``data``, one line each (``path/to/field: message``),
    in the order of the fields' paths; empty when it accepts it."""
    errors = sorted(checker.iter_errors(data), key=lambda error: list(error.path))
    return [_message("/".join(str(part) for part in error.path), error.message)
            for error in errors]


def _message(where: str, message: str) -> str:
    return f"{where}: {message}" if where else message

"""The arguments an action step gives, checked at load against what the action declares.

Every built-in action declares its arguments as a JSON Schema (:data:`BUILTIN_ARGUMENTS`): which
keys it takes, which are required, and the type of each. A user action may declare its own the
same way, as a JSON Schema in its ``arguments`` attribute (see :mod:`tarry.actions`). At load,
an action step's literal arguments are checked against it:

- a key the schema does not list, when it lists them all (``additionalProperties: false``):
  ``unknown argument 'mesage' of action 'log' (did you mean 'message'?)``;
- a required key that is missing: ``action 'http.request' needs the argument 'url'``;
- a literal value of the wrong type: ``argument 'timeout' of action 'http.request' must be a
  number, got 'soon'``.

An expression (``{{ … }}``) stands for any value; it is checked when the step runs. A scalar
argument (``log: "text"``) stands for the schema's ``x-scalar`` key (``message``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tarry._suggest import did_you_mean
from tarry.language.context import LoadContext
from tarry.language.expressions import is_template
from tarry.language.yamlsource import YamlMap, YamlNode, YamlScalar, YamlSeq, describe

__all__ = ["BUILTIN_ARGUMENTS", "check_arguments"]

_TEXT = {"type": "string"}


def _closed(properties: Mapping[str, Any], *, required: tuple[str, ...] = (),
            scalar: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties),
                              "required": list(required), "additionalProperties": False}
    if scalar is not None:
        schema["x-scalar"] = scalar
    return schema


BUILTIN_ARGUMENTS: Mapping[str, Mapping[str, Any]] = {
    "log": _closed({"message": {}}, scalar="message"),
    "fail": _closed({"message": {}}, scalar="message"),
    "http.request": _closed({"method": _TEXT, "url": _TEXT, "headers": {"type": "object"},
                             "json": {}, "timeout": {"type": "number"}}, required=("url",)),
    "check": _closed({"name": _TEXT}, required=("name",), scalar="name"),
    "emit": _closed({"type": _TEXT, "data": {"type": "object"}, "id": {}},
                    required=("type", "data")),
}
"""The JSON Schema of each built-in action's arguments (``set`` binds whatever it is given;
``emit``'s literal ``type`` is also checked against the manifests, and its computed values
when it runs)."""

_TYPES: dict[str, tuple[str, tuple[type, ...]]] = {
    "string": ("a string", (str,)),
    "number": ("a number", (int, float)),
    "integer": ("an integer", (int,)),
    "boolean": ("true or false", (bool,)),
    "object": ("a mapping", (dict,)),
    "array": ("a list", (list,)),
}


def check_arguments(ctx: LoadContext, action: str, args: YamlNode,
                    schema: Mapping[str, Any]) -> None:
    """Report what is wrong in the literal arguments ``args`` of a step calling ``action``."""
    if _is_expression(args):
        return
    if not isinstance(args, YamlMap):
        if schema.get("x-scalar") is None and isinstance(args, YamlScalar | YamlSeq):
            ctx.report(args.pos, f"action '{action}' takes a mapping of arguments, got "
                                 f"{describe(args)}")
        return
    properties: Mapping[str, Any] = schema.get("properties", {})
    suggested = set()
    for entry in args.entries:
        if entry.key not in properties:
            if schema.get("additionalProperties") is False:
                hint = did_you_mean(entry.key, properties)
                suggested.add(hint)
                ctx.report(entry.key_pos, f"unknown argument '{entry.key}' of action "
                                          f"'{action}'{hint}")
            continue
        _check_type(ctx, action, entry.key, entry.value, properties[entry.key])
    missing = [key for key in schema.get("required", ()) if args.get(key) is None
               and f" (did you mean '{key}'?)" not in suggested]
    for key in missing:
        ctx.report(args.pos, f"action '{action}' needs the argument '{key}'")


def _check_type(ctx: LoadContext, action: str, key: str, value: YamlNode,
                schema: Mapping[str, Any]) -> None:
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in _TYPES or _is_expression(value):
        return
    expected, types = _TYPES[kind]
    literal = _literal(value)
    if not isinstance(literal, types) or (isinstance(literal, bool) and bool not in types):
        ctx.report(value.pos, f"argument '{key}' of action '{action}' must be {expected}, got "
                              f"{describe(value)}")


def _literal(node: YamlNode) -> Any:
    """The node's value as far as its type goes (a mapping or a list stands empty)."""
    if isinstance(node, YamlMap):
        return {}
    if isinstance(node, YamlSeq):
        return []
    return node.value if isinstance(node, YamlScalar) else None


def _is_expression(node: YamlNode) -> bool:
    return isinstance(node, YamlScalar) and isinstance(node.value, str) and is_template(
        node.value)

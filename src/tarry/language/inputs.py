"""Binding the inputs a run is started with to the inputs its flow declares.

Each declared input has a type (:data:`INPUT_TYPES`). A run must give every required input;
an optional one not given takes its default, or ``None`` when it has none, so that every
declared input is a defined name in the run's expressions. Values keep their JSON form:
an ``instant`` or ``duration`` input is a string that parses as one (the flow's
``timezone:`` applies to zone-less instants), converted by the expressions that use it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any, get_args

from tarry._suggest import did_you_mean
from tarry.errors import InvalidRunRequest
from tarry.language.durations import parse_duration, parse_instant
from tarry.language.model import Flow, InputType
from tarry.language.yamlsource import describe_value

__all__ = ["INPUT_TYPES", "bind_inputs", "type_mismatch"]

INPUT_TYPES: tuple[InputType, ...] = get_args(InputType)
"""The type names an input may declare."""


def _parses_as(parse: Callable[[str, str | None], object]) -> Callable[[Any, str | None], bool]:
    """A fit test: the value is a string that ``parse(value, zone)`` accepts."""
    def fits(value: Any, zone: str | None) -> bool:
        if not isinstance(value, str):
            return False
        try:
            parse(value, zone)
        except ValueError:
            return False
        return True
    return fits


_FITS: dict[InputType, tuple[str, Callable[[Any, str | None], bool]]] = {
    "string": ("a string", lambda value, _: isinstance(value, str)),
    "integer": ("an integer", lambda value, _: type(value) is int),
    "number": ("a number", lambda value, _: type(value) in (int, float)),
    "boolean": ("true or false", lambda value, _: isinstance(value, bool)),
    "object": ("an object", lambda value, _: isinstance(value, dict)),
    "array": ("an array", lambda value, _: isinstance(value, list)),
    "instant": ("an instant with a zone such as 2026-09-01T09:00:00Z", _parses_as(parse_instant)),
    "duration": ("a duration such as 30s or 2d",
                 _parses_as(lambda text, _: parse_duration(text))),
    "any": ("any value", lambda value, _: True),
}


def type_mismatch(kind: InputType, value: Any, timezone: str | None = None) -> str | None:
    """``"must be an integer, got '3'"`` when ``value`` does not fit ``kind``, else None."""
    expected, fits = _FITS[kind]
    if fits(value, timezone):
        return None
    if kind == "instant" and isinstance(value, str) and _DATE_ONLY.fullmatch(value):
        return (f"must be an instant, a date with a time such as {value}T09:00:00Z, got the "
                f"date '{value}' only")
    return f"must be {expected}, got {describe_value(value)}"


_DATE_ONLY = re.compile(r"\d{4}-\d\d-\d\d")


def bind_inputs(flow: Flow, given: Mapping[str, Any]) -> dict[str, Any]:
    """The run's input values: ``given`` checked against ``flow.inputs``, defaults filled in.

    Raises ``InvalidRunRequest`` naming every problem: a missing required input, a value of the
    wrong type, an input the flow does not declare.
    """
    problems = [_unknown(flow, name) for name in given if name not in flow.inputs]
    bound: dict[str, Any] = {}
    for name, spec in flow.inputs.items():
        if name in given:
            mismatch = type_mismatch(spec.type, given[name], flow.timezone)
            if mismatch:
                problems.append(f"input '{name}' {mismatch}")
            bound[name] = given[name]
        elif spec.required:
            problems.append(f"input '{name}' is required")
        else:
            bound[name] = _own_copy(spec.default)
    if problems:
        raise InvalidRunRequest(problems)
    return bound


def _own_copy(default: Any) -> Any:
    """A default the run may keep as its own: a copy of a list or object, a scalar itself."""
    return copy.deepcopy(default) if isinstance(default, dict | list) else default


def _unknown(flow: Flow, name: str) -> str:
    if not flow.inputs:
        return f"unknown input '{name}': flow '{flow.name}' declares no inputs"
    return f"unknown input '{name}'{did_you_mean(name, flow.inputs)}"

"""A task's form as the dashboard draws it, and a submitted form read back into
the task's data. Pure: no I/O, no validation.

A task's ``form`` is a JSON Schema of an object. Each property of a simple shape becomes a
field: a string a text box, a number or an integer a number box, a boolean a checkbox, an
``enum`` of plain values a choice; its ``title`` labels it (else its name), its
``description`` is shown with it, and the ``required`` ones are marked. A property of any
other shape (an array, an object, a combination of schemas) is a JSON text box of its own,
and a form that is not a plain object of properties (``oneOf`` at the top,
``patternProperties``, …) is one JSON text box for the whole data.

Nothing here checks the answer against the schema: the data read back goes to the task's
completion, which does (its reasons come back as a 422, and the refusal is in the run's
history). Text in a JSON box that is not JSON goes on as text, so the completion refuses it
where the schema wants something else; :class:`Answer` keeps why it was not JSON, to show
beside the completion's reasons.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from tarry.language.jsontext import json_reason, parse_json

__all__ = ["DATA_FIELD", "FIELD_PREFIX", "Answer", "Choice", "Field", "Kind", "TaskForm",
           "read_answer", "task_form"]

FIELD_PREFIX = "data."
"""The submitted name of a property's field is this prefix and the property's name (so no
property can clash with the form's own ``outcome`` and ``csrf``)."""

DATA_FIELD = "data"
"""The submitted name of the one JSON box of a form drawn whole."""

_PLAIN_FORM_KEYS = frozenset({"type", "properties", "required", "additionalProperties",
                              "title", "description", "default", "examples", "$schema",
                              "$id", "$comment"})
"""The keywords a form may have and still be drawn as fields: any other one (``oneOf``,
``patternProperties``, ``dependentRequired``, …) could ask for what no field shows."""

_SCALARS = (str, int, float, bool)


class Kind(StrEnum):
    """How a property is filled in."""

    TEXT = "text"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    CHOICE = "choice"
    JSON = "json"


_TYPE_KINDS = {"string": Kind.TEXT, "number": Kind.NUMBER, "integer": Kind.INTEGER,
               "boolean": Kind.BOOLEAN}


@dataclass(frozen=True)
class Choice:
    """An option of a choice: its submitted value (the JSON text of the enum value) and the
    text shown."""

    value: str
    label: str


@dataclass(frozen=True)
class Field:
    """One property of the form, as a field.

    ``initial`` is the field's text when the form opens (from the property's ``default``:
    JSON text for a choice or a JSON box, ``true`` for a checked checkbox); ``attributes``
    are the HTML constraints the schema gives (``min``, ``max``, ``step``, ``minlength``,
    ``maxlength``), which a browser checks before the server does; ``schema`` is the
    property's schema as JSON text, shown with a JSON box.
    """

    name: str
    kind: Kind
    label: str
    required: bool
    description: str | None = None
    choices: tuple[Choice, ...] = ()
    initial: str = ""
    attributes: tuple[tuple[str, str], ...] = ()
    schema: str = ""

    @property
    def key(self) -> str:
        """The field's name in the submitted form."""
        return FIELD_PREFIX + self.name


@dataclass(frozen=True)
class TaskForm:
    """What a task asks to be filled in: ``fields`` (none for a task without a form), or,
    with ``whole``, one JSON box for the whole data (``schema`` is then the form's schema as
    JSON text, shown beside it; ``initial`` the box's text when the form opens)."""

    fields: tuple[Field, ...] = ()
    whole: bool = False
    schema: str = ""
    initial: str = ""

    @property
    def asks(self) -> bool:
        """Whether anything is filled in (a task without a form asks only for an outcome)."""
        return self.whole or bool(self.fields)

    def initial_values(self) -> dict[str, str]:
        """The submitted names and texts of the form as it opens."""
        if self.whole:
            return {DATA_FIELD: self.initial}
        return {field.key: field.initial for field in self.fields if field.initial}


def task_form(schema: Mapping[str, Any] | None) -> TaskForm:
    """The form that fills in data for ``schema`` (a task's ``form``; None: no data)."""
    if schema is None:
        return TaskForm()
    properties = schema.get("properties", {})
    if not _drawable(schema, properties):
        default = schema.get("default", {})
        return TaskForm(whole=True, schema=_pretty(schema), initial=_pretty(default))
    required = schema.get("required", [])
    return TaskForm(tuple(_field(str(name), prop, name in required)
                          for name, prop in properties.items()))


def _drawable(schema: Mapping[str, Any], properties: Any) -> bool:
    """Whether ``schema`` is a plain object of properties, each drawn as a field (and every
    required property among them)."""
    required = schema.get("required", [])
    return (schema.keys() <= _PLAIN_FORM_KEYS and isinstance(properties, Mapping)
            and bool(properties) and isinstance(required, list)
            and all(isinstance(name, str) and name in properties for name in required)
            and isinstance(schema.get("additionalProperties", False), bool))


def _field(name: str, prop: Any, required: bool) -> Field:
    """The field of property ``name``, whose schema is ``prop``."""
    spec: Mapping[str, Any] = prop if isinstance(prop, Mapping) else {}
    kind = _kind(spec)
    title, description = spec.get("title"), spec.get("description")
    return Field(name, kind, title if isinstance(title, str) and title else name, required,
                 description if isinstance(description, str) else None,
                 choices=_choices(spec) if kind is Kind.CHOICE else (),
                 initial=_initial(kind, spec), attributes=_attributes(kind, spec),
                 schema=json.dumps(prop, ensure_ascii=False) if kind is Kind.JSON else "")


def _kind(spec: Mapping[str, Any]) -> Kind:
    """How a property of schema ``spec`` is filled in."""
    enum = spec.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, _SCALARS) for v in enum):
        return Kind.CHOICE
    if spec.keys() & {"anyOf", "oneOf", "allOf", "not", "$ref", "if", "const"}:
        return Kind.JSON
    return _TYPE_KINDS.get(_single_type(spec.get("type")) or "", Kind.JSON)


def _single_type(declared: Any) -> str | None:
    """The one type of a ``type`` keyword: ``string``, or ``[string, "null"]`` (a field left
    empty leaves the property out, which an optional property allows)."""
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        named = [kind for kind in declared if kind != "null"]
        return named[0] if len(named) == 1 and isinstance(named[0], str) else None
    return None


def _choices(spec: Mapping[str, Any]) -> tuple[Choice, ...]:
    return tuple(Choice(json.dumps(value, ensure_ascii=False),
                        value if isinstance(value, str) else json.dumps(value))
                 for value in spec["enum"])


def _initial(kind: Kind, spec: Mapping[str, Any]) -> str:
    """The field's text when the form opens: its default, in the field's terms."""
    if "default" not in spec:
        return ""
    default = spec["default"]
    if kind is Kind.BOOLEAN:
        return "true" if default is True else ""
    if kind is Kind.TEXT and isinstance(default, str):
        return default
    if kind in (Kind.NUMBER, Kind.INTEGER) and not isinstance(default, (bool, str)):
        return json.dumps(default)
    return json.dumps(default, ensure_ascii=False, indent=None if kind is Kind.CHOICE else 2)


_NUMBER_ATTRIBUTES = (("minimum", "min"), ("maximum", "max"))
_TEXT_ATTRIBUTES = (("minLength", "minlength"), ("maxLength", "maxlength"))


def _attributes(kind: Kind, spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The HTML constraints of the field (the server checks the schema whatever they say)."""
    if kind in (Kind.NUMBER, Kind.INTEGER):
        step = (("step", "1" if kind is Kind.INTEGER else "any"),)
        return step + _numbers(spec, _NUMBER_ATTRIBUTES, (int, float))
    if kind is Kind.TEXT:
        return _numbers(spec, _TEXT_ATTRIBUTES, (int,))
    return ()


def _numbers(spec: Mapping[str, Any], names: tuple[tuple[str, str], ...],
             types: tuple[type, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((html, json.dumps(spec[key])) for key, html in names
                 if isinstance(spec.get(key), types) and not isinstance(spec[key], bool))


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


@dataclass(frozen=True)
class Answer:
    """What a submitted form gives: the ``data`` (None for a task without a form, or a whole
    form's box left empty) and, for each JSON box whose text is not JSON, why
    (``data: tags: not valid JSON: …``)."""

    data: Any
    not_json: tuple[str, ...] = ()


def read_answer(form: TaskForm, submitted: Mapping[str, str]) -> Answer:
    """The answer a submitted form gives; the schema is not checked here.

    A field left empty leaves its property out; an unchecked checkbox is ``false``; a number
    box's text that is no number, and a JSON box's text that is not JSON, go on as text (the
    completion then says what the schema wanted instead).
    """
    if form.whole:
        text = submitted.get(DATA_FIELD, "")
        value, note = _json_value(text, "data") if text.strip() else (None, None)
        return Answer(value, (note,) if note else ())
    if not form.fields:
        return Answer(None)
    data: dict[str, Any] = {}
    notes: list[str] = []
    for field in form.fields:
        value, note = _read_field(field, submitted.get(field.key))
        notes.extend([note] if note else [])
        if value is not _LEFT_OUT:
            data[field.name] = value
    return Answer(data, tuple(notes))


_LEFT_OUT = object()
"""A field left empty: its property is not in the data."""


def _read_field(field: Field, text: str | None) -> tuple[Any, str | None]:
    """The value of one field, and why its text is not JSON (a JSON box's only)."""
    if field.kind is Kind.BOOLEAN:
        return text is not None, None
    if not text or (not text.strip() and field.kind is not Kind.TEXT):
        return _LEFT_OUT, None
    if field.kind is Kind.TEXT:
        return text, None
    if field.kind is Kind.JSON:
        return _json_value(text, f"data: {field.name}")
    return _parsed_or_text(field.kind, text.strip()), None


def _json_value(text: str, where: str) -> tuple[Any, str | None]:
    """The JSON value of ``text``; else the text itself, and why it is not JSON."""
    try:
        return parse_json(text), None
    except ValueError as exc:
        return text, f"{where}: not valid JSON: {json_reason(exc)}"


def _parsed_or_text(kind: Kind, text: str) -> Any:
    """A number box's or a choice's value: the JSON value of its text, else the text."""
    try:
        value = parse_json(text)
    except ValueError:
        return text
    if kind is Kind.CHOICE:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return text
    if kind is Kind.INTEGER and isinstance(value, float) and value.is_integer():
        return int(value)
    return value

"""A task's form drawn from its JSON Schema and read back (pure): which field each property
gets, which forms are typed whole as JSON, what a submitted form gives, and fuzzing that finds
no schema or submission it crashes on."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.server.dashboard.taskform import (
    Answer,
    Choice,
    Field,
    Kind,
    TaskForm,
    read_answer,
    task_form,
)


def _form(**properties: Any) -> TaskForm:
    return task_form({"type": "object", "properties": properties})


def _only(prop: dict[str, Any], *, required: bool = False) -> Field:
    form = task_form({"type": "object", "properties": {"p": prop},
                      "required": ["p"] if required else []})
    assert not form.whole
    (field,) = form.fields
    return field


@pytest.mark.parametrize(("prop", "kind"), [
    ({"type": "string"}, Kind.TEXT),
    ({"type": "number"}, Kind.NUMBER),
    ({"type": "integer"}, Kind.INTEGER),
    ({"type": "boolean"}, Kind.BOOLEAN),
    ({"type": ["string", "null"]}, Kind.TEXT),
    ({"enum": ["a", 1, True]}, Kind.CHOICE),
    ({"type": "string", "enum": ["a", "b"]}, Kind.CHOICE),
    ({"type": "array", "items": {"type": "string"}}, Kind.JSON),
    ({"type": "object"}, Kind.JSON),
    ({"type": ["string", "integer"]}, Kind.JSON),
    ({"type": "null"}, Kind.JSON),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, Kind.JSON),
    ({"type": "string", "oneOf": [{"minLength": 1}]}, Kind.JSON),
    ({"const": "x"}, Kind.JSON),
    ({"enum": [[1], [2]]}, Kind.JSON),
    ({}, Kind.JSON),
])
def test_each_property_gets_the_field_of_its_shape(prop: dict[str, Any], kind: Kind) -> None:
    assert _only(prop).kind is kind


def test_a_field_has_the_title_description_and_mark_of_its_property() -> None:
    assert _only({"type": "string", "title": "Note", "description": "What to say"},
                 required=True) == Field("p", Kind.TEXT, "Note", True, "What to say")
    assert _only({"type": "string"}).label == "p"
    assert _only({"type": "string"}).key == "data.p"


def test_the_schemas_bounds_become_the_fields_html_constraints() -> None:
    assert _only({"type": "integer", "minimum": 1, "maximum": 9}).attributes == (
        ("step", "1"), ("min", "1"), ("max", "9"))
    assert _only({"type": "number", "minimum": 0.5}).attributes == (("step", "any"),
                                                                    ("min", "0.5"))
    assert _only({"type": "string", "minLength": 2, "maxLength": 5}).attributes == (
        ("minlength", "2"), ("maxlength", "5"))
    assert _only({"type": "string", "minLength": True}).attributes == ()


def test_a_choice_offers_each_value_as_json_text() -> None:
    assert _only({"enum": ["email", 2, None]}).choices == ()  # null is not a plain choice
    assert _only({"enum": ["email", 2, False]}).choices == (
        Choice('"email"', "email"), Choice("2", "2"), Choice("false", "false"))


@pytest.mark.parametrize(("prop", "initial"), [
    ({"type": "string", "default": "hello"}, "hello"),
    ({"type": "integer", "default": 3}, "3"),
    ({"type": "boolean", "default": True}, "true"),
    ({"type": "boolean", "default": False}, ""),
    ({"enum": ["a", "b"], "default": "b"}, '"b"'),
    ({"type": "array", "default": ["x"]}, '[\n  "x"\n]'),
    ({"type": "string"}, ""),
])
def test_a_field_opens_with_its_default(prop: dict[str, Any], initial: str) -> None:
    assert _only(prop).initial == initial


@pytest.mark.parametrize("schema", [
    {"type": "object"},
    {"type": "object", "properties": {}},
    {"type": "object", "additionalProperties": {"type": "integer"}},
    {"type": "object", "properties": {"a": {"type": "string"}}, "oneOf": [{}, {}]},
    {"type": "object", "properties": {"a": {"type": "string"}},
     "patternProperties": {"^x": {}}},
    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
    {"properties": ["a"]},
    {"properties": {"a": {}}, "required": [["a"]]},
])
def test_a_form_fields_cannot_draw_is_typed_whole_as_json(schema: dict[str, Any]) -> None:
    form = task_form(schema)
    assert (form.whole, form.fields) == (True, ())
    assert form.initial_values() == {"data": "{}"}


def test_a_task_without_a_form_asks_for_nothing() -> None:
    assert task_form(None) == TaskForm()
    assert not task_form(None).asks
    assert read_answer(TaskForm(), {"data.x": "1"}) == Answer(None)


def test_a_submitted_form_gives_typed_values_and_leaves_empty_fields_out() -> None:
    form = _form(note={"type": "string"}, n={"type": "integer"}, x={"type": "number"},
                 ok={"type": "boolean"}, off={"type": "boolean"}, pick={"enum": ["a", 2]},
                 tags={"type": "array"}, blank={"type": "string"}, none={"type": "integer"})
    submitted = {"data.note": " as typed ", "data.n": " 3.0 ", "data.x": "1e3",
                 "data.ok": "true", "data.pick": "2", "data.tags": '["t"]', "data.blank": "",
                 "data.none": "  ", "outcome": "go", "csrf": "t"}
    assert read_answer(form, submitted) == Answer({
        "note": " as typed ", "n": 3, "x": 1000.0, "ok": True, "off": False, "pick": 2,
        "tags": ["t"]})


def test_text_that_is_no_number_or_json_goes_on_as_text_for_the_completion_to_refuse() -> None:
    form = _form(n={"type": "integer"}, pick={"enum": ["a"]}, tags={"type": "array"},
                 flag={"type": "integer"})
    answer = read_answer(form, {"data.n": "two", "data.pick": "fax", "data.tags": "[1,",
                                "data.flag": "true"})
    assert answer == Answer({"n": "two", "pick": "fax", "tags": "[1,", "flag": "true"},
                            ("data: tags: not valid JSON: Expecting value (line 1, column 4)",))


def test_a_whole_form_is_read_as_json_and_left_empty_gives_no_data() -> None:
    form = task_form({"type": "object"})
    assert read_answer(form, {"data": '{"a": 1}'}) == Answer({"a": 1})
    assert read_answer(form, {"data": "  "}) == Answer(None)
    assert read_answer(form, {"data": '{"a": NaN}'}) == Answer('{"a": NaN}', (
        "data: not valid JSON: 'NaN' is not a JSON number (JSON has no NaN or infinity)",))


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8)
                     | st.floats(allow_nan=False, allow_infinity=False),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                     max_leaves=12)
_KEYWORDS = st.sampled_from(["type", "properties", "required", "enum", "default", "title",
                             "description", "minimum", "maxLength", "items", "oneOf",
                             "additionalProperties", "const"])
_SCHEMAS = st.recursive(st.dictionaries(_KEYWORDS, _JSON, max_size=4),
                        lambda inner: st.dictionaries(_KEYWORDS, inner | _JSON, max_size=4),
                        max_leaves=10)


@given(_SCHEMAS, st.dictionaries(st.text(max_size=12), st.text(max_size=12), max_size=6))
def test_any_schema_and_submission_give_a_form_and_an_answer(
        schema: dict[str, Any], submitted: dict[str, str]) -> None:
    form = task_form(schema)
    answer = read_answer(form, {**form.initial_values(), **submitted})
    assert form.whole or isinstance(answer.data, dict | None)

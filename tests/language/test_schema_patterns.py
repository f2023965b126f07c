"""Schema patterns run in linear time: what RE2 cannot run is refused at load, with the
pattern's ``line:col``, and what it runs answers the ReDoS payloads in milliseconds."""

from __future__ import annotations

import time
from textwrap import dedent

import pytest

from tarry.errors import LoadError
from tarry.language.manifests import parse_manifests
from tarry.language.schemas import SchemaProblem, schema_problem, validation_problems, validator

EMAIL = (r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}"
         r"(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$")
"""The probe's e-mail pattern: Python's ``re`` took 6.7 s on 27 characters."""
LINEAR = "(schema patterns run in linear time, without backreferences or lookaround)"


def manifest_problems(schema: str) -> list[str]:
    """What a manifest of type ``t`` with ``schema`` (flow-style YAML) is refused for."""
    with pytest.raises(LoadError) as caught:
        parse_manifests(dedent(f"""\
            events:
              t:
                correlate_on: [k]
                schema: {schema}
            """), "events.yaml")
    return [str(problem) for problem in caught.value.problems]


@pytest.mark.parametrize(("schema", "expected"), [
    ('{ properties: { k: { pattern: "(a)\\\\1" } } }',
     "events.yaml:4:43: 'schema' is not a valid JSON Schema: pattern '(a)\\\\1' cannot be "
     f"used: invalid escape sequence: \\1 {LINEAR}"),
    ('{ properties: { k: { pattern: "(?=a)b" } } }',
     "events.yaml:4:43: 'schema' is not a valid JSON Schema: pattern '(?=a)b' cannot be "
     f"used: invalid perl operator: (?= {LINEAR}"),
    ('{ items: { pattern: "(?<!a)b" } }',
     "events.yaml:4:33: 'schema' is not a valid JSON Schema: pattern '(?<!a)b' cannot be "
     f"used: invalid perl operator: (?<! {LINEAR}"),
    ('{ patternProperties: { "^(?!x)": { type: string } } }',
     "events.yaml:4:36: 'schema' is not a valid JSON Schema: pattern '^(?!x)' cannot be "
     f"used: invalid perl operator: (?! {LINEAR}"),
    ('{ anyOf: [ { type: string }, { pattern: "(x)\\\\1" } ] }',
     "events.yaml:4:53: 'schema' is not a valid JSON Schema: pattern '(x)\\\\1' cannot be "
     f"used: invalid escape sequence: \\1 {LINEAR}"),
    ('{ properties: { k: { pattern: "[a-" } } }',
     "events.yaml:4:43: 'schema' is not a valid JSON Schema: pattern '[a-' cannot be used: "
     "missing ]: [a-"),
    ('{ patternProperties: { "^a": {} }, unevaluatedProperties: false }',
     "events.yaml:4:13: 'schema' is not a valid JSON Schema: 'unevaluatedProperties' cannot "
     "be used in a schema that has 'patternProperties' (use 'additionalProperties')"),
])
def test_a_pattern_re2_cannot_run_is_refused_at_load_with_its_place(
        schema: str, expected: str) -> None:
    assert manifest_problems(schema) == [expected]


def test_a_task_form_with_a_lookahead_is_refused_at_the_pattern() -> None:
    from tarry.language.loader import parse_flow  # noqa: PLC0415

    source = dedent("""\
        flow: f
        steps:
          - review:
              ask:
                title: Go?
                outcomes: [go]
                form: { properties: { note: { pattern: "(?=a)" } } }
              timeout: 1h
        """)
    with pytest.raises(LoadError) as caught:
        parse_flow(source, "f.yaml")
    assert [str(p) for p in caught.value.problems] == [
        "f.yaml:7:48: 'form' is not a valid JSON Schema: pattern '(?=a)' cannot be used: "
        f"invalid perl operator: (?= {LINEAR}"]


def test_a_word_called_pattern_that_is_data_or_a_property_name_is_no_pattern() -> None:
    schema = {"properties": {"pattern": {"type": "string"}, "const": {"pattern": "^a"}},
              "const": {"pattern": "(a)\\1"}, "examples": [{"pattern": "(?=x)"}]}
    assert schema_problem(schema) is None


def test_a_pattern_a_ref_can_reach_under_any_keyword_is_checked() -> None:
    schema = {"$ref": "#/x-shared/code", "x-shared": {"code": {"pattern": "(?=x)"}}}
    assert schema_problem(schema) == SchemaProblem(
        f"pattern '(?=x)' cannot be used: invalid perl operator: (?= {LINEAR}",
        ("x-shared", "code", "pattern"))


def test_schema_problem_says_where_the_pattern_is() -> None:
    assert schema_problem({"$defs": {"a": {"pattern": "(?=x)"}}}) == SchemaProblem(
        f"pattern '(?=x)' cannot be used: invalid perl operator: (?= {LINEAR}",
        ("$defs", "a", "pattern"))


@pytest.mark.parametrize(("pattern", "text"), [(EMAIL, "a" * 27), ("(a+)+$", "a" * 41 + "!")])
def test_the_redos_payloads_are_answered_in_milliseconds(pattern: str, text: str) -> None:
    checker = validator({"properties": {"email": {"pattern": pattern}}})
    began = time.perf_counter()
    problems = validation_problems(checker, {"email": text})
    assert time.perf_counter() - began < 0.5  # Python's re: 6.7 s and minutes
    assert problems == [f"email: {text!r} does not match {pattern!r}"]


@pytest.mark.parametrize(("schema", "data", "expected"), [
    ({"properties": {"id": {"pattern": "^[A-Z]{3}-\\d+$"}}}, {"id": "ABC-12"}, []),
    ({"properties": {"id": {"pattern": "^[A-Z]{3}-\\d+$"}}}, {"id": "abc"},
     ["id: 'abc' does not match '^[A-Z]{3}-\\\\d+$'"]),
    ({"patternProperties": {"^x-": {"type": "integer"}}}, {"x-a": "no", "y": 1},
     ["x-a: 'no' is not of type 'integer'"]),
    ({"patternProperties": {"^x-": {}}, "additionalProperties": False}, {"x-a": 1, "y": 1},
     ["Additional properties are not allowed ('y' was unexpected)"]),
    ({"properties": {"a": {}}, "patternProperties": {"^x-": {}},
      "additionalProperties": {"type": "string"}}, {"a": 1, "x-b": 2, "c": 3},
     ["c: 3 is not of type 'string'"]),
    ({"properties": {"name": {"pattern": "^é+$"}}}, {"name": "ééé"}, []),
])
def test_patterns_keep_their_json_schema_meaning(
        schema: dict[str, object], data: dict[str, object], expected: list[str]) -> None:
    assert validation_problems(validator(schema), data) == expected


def test_a_quoted_value_that_breaks_a_pattern_is_cut_in_the_message() -> None:
    problems = validation_problems(validator({"pattern": "^a+$"}), "b" * 10_000)
    assert problems == [f"'{'b' * 97}...' does not match '^a+$'"]

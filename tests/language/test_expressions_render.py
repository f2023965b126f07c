"""Rendering: native values for a lone expression, text otherwise, and walking whole values."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, compile_template, is_template, render

CTX = EvalContext(now=datetime(2026, 3, 1, 12, 0, tzinfo=UTC))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=5), children, max_size=5),
    max_leaves=20,
)


@pytest.mark.parametrize(("source", "expected"), [
    ("{{ 5 }}", 5),
    ("  {{ 5 }}  ", 5),
    ("\n{{ 5 }}\n", 5),
    ("{{ 'a' }} ", "a"),
    ("{{ true }}", True),
    ("{{ null }}", None),
    ("{{ [1, 2] }}", [1, 2]),
    ("{{ 1d }}", timedelta(days=1)),
    ("x{{ 5 }}", "x5"),
    ("{{ 1 }}{{ 2 }}", "12"),
    ("{{ 1 }} {{ 2 }}", "1 2"),
    ("no expression", "no expression"),
    ("", ""),
])
def test_a_lone_expression_renders_natively_and_text_renders_a_string(source: str,
                                                                        expected: Any) -> None:
    assert compile_template(source).render({}, CTX) == expected


@pytest.mark.parametrize(("value", "text"), [
    ("plain", "plain"),
    (None, ""),
    (True, "true"),
    (False, "false"),
    (3, "3"),
    (-3, "-3"),
    (1.5, "1.5"),
    (2.0, "2.0"),
    (1e20, "1e+20"),
    ([1, "a", None], '[1,"a",null]'),
    ({"k": None, "é": [True]}, '{"k":null,"é":[true]}'),
    (datetime(2026, 3, 1, 12, 0, tzinfo=UTC), "2026-03-01T12:00:00Z"),
    (datetime(2026, 3, 1, 12, 0, 0, 250_000, tzinfo=UTC), "2026-03-01T12:00:00.250Z"),
    (datetime(2026, 3, 1, 12, 0, 0, 250_999, tzinfo=UTC), "2026-03-01T12:00:00.250Z"),
    (datetime(2026, 3, 1, 12, 0, 0, 999, tzinfo=UTC), "2026-03-01T12:00:00Z"),
    (datetime(2026, 3, 1, 14, 0, tzinfo=timezone(timedelta(hours=2))), "2026-03-01T12:00:00Z"),
    (datetime(9, 1, 1, tzinfo=UTC), "0009-01-01T00:00:00Z"),
    (timedelta(hours=1, minutes=30), "1h30m"),
    (timedelta(0), "0s"),
    ([datetime(2026, 3, 1, tzinfo=UTC), timedelta(days=2)], '["2026-03-01T00:00:00Z","2d"]'),
])
def test_values_written_into_text(value: Any, text: str) -> None:
    assert compile_template("v={{ v }}").render({"v": value}, CTX) == "v=" + text


@pytest.mark.parametrize(("value", "reason"), [
    (object(), "cannot write an object as text"),
    (datetime(2026, 3, 1), "cannot write a datetime without timezone as text"),
    ([object()], "cannot write an object as JSON"),
    ({"x": float("nan")}, "cannot write a dict as JSON (Out of range float values are not "
                          "JSON compliant)"),
])
def test_values_that_cannot_be_written_into_text(value: Any, reason: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_template("v={{ v }}").render({"v": value}, CTX)
    assert caught.value.reason == reason


def test_an_undefined_name_names_the_template() -> None:
    with pytest.raises(ExpressionError) as caught:
        compile_template("Hi {{ x }}").render({}, CTX)
    assert caught.value.reason == "undefined name 'x'"
    assert caught.value.expression == "Hi {{ x }}"
    assert str(caught.value) == "undefined name 'x': Hi {{ x }}"
    assert str(caught.value.at_step("greet")) == "undefined name 'x' in step 'greet': Hi {{ x }}"


def test_render_walks_dicts_and_lists_and_leaves_the_input_alone() -> None:
    value = {"a": "{{ n }}", "b": ["x {{ n }}", 3, None, "{{ n > 1 }}"], "c": "plain",
             "d": {"e": "{{ n + 1 }}"}, "f": 1.5}
    original = json.loads(json.dumps(value))
    assert render(value, {"n": 2}, CTX) == {"a": 2, "b": ["x 2", 3, None, True], "c": "plain",
                                            "d": {"e": 3}, "f": 1.5}
    assert value == original


@pytest.mark.parametrize("value", ["plain }}", 5, None, True, 1.5, datetime(2026, 1, 1)])
def test_render_returns_non_templates_as_they_are(value: Any) -> None:
    assert render(value, {}, CTX) is value


@pytest.mark.parametrize(("text", "expected"), [
    ("{{ x }}", True), ("a {{", True), ("a { {", False), ("}}", False), ("", False),
])
def test_is_template(text: str, expected: bool) -> None:
    assert is_template(text) is expected


@given(json_values)
def test_a_lone_expression_returns_json_unchanged(value: Any) -> None:
    assert render("{{ x }}", {"x": value}, CTX) == value


@given(json_values)
def test_json_filter_round_trips(value: Any) -> None:
    assert json.loads(render("{{ x | json }}", {"x": value}, CTX)) == value


@given(st.text())
def test_any_text_survives_as_a_value_and_as_a_literal(text: str) -> None:
    assert render("<{{ s }}>", {"s": text}, CTX) == f"<{text}>"
    literal = json.dumps(text, ensure_ascii=False)
    assert render("{{ " + literal + " }}", {}, CTX) == text
    assert render("{{ " + literal + " }}!", {}, CTX) == text + "!"

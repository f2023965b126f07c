"""Reading -i pairs and --inputs JSON into a run's inputs."""

from __future__ import annotations

import getpass

import pytest
import typer

from tarry.cli.options import current_user, parse_inputs, parse_pair, parse_value


@pytest.mark.parametrize(("text", "value"), [
    ("3", 3), ("2.5", 2.5), ("true", True), ("null", None), ('{"a": [1]}', {"a": [1]}),
    ('"quoted"', "quoted"), ("Ada", "Ada"), ("", ""), ("{not json", "{not json"),
])
def test_a_value_is_json_when_it_parses_and_text_otherwise(text: str, value: object) -> None:
    assert parse_value(text) == value


def test_a_pair_splits_at_the_first_equals_sign() -> None:
    assert parse_pair("query=a=b") == ("query", "a=b")
    assert parse_pair(" name =Ada") == ("name", "Ada")


@pytest.mark.parametrize("text", ["name", "=Ada"])
def test_a_pair_without_a_name_is_a_usage_error(text: str) -> None:
    with pytest.raises(typer.BadParameter) as caught:
        parse_pair(text)
    assert caught.value.message == f"expected name=value, got {text!r}"


def test_each_pair_overrides_the_json_object() -> None:
    assert parse_inputs(["count=2", "flag=true"], '{"count": 1, "name": "Ada"}') == {
        "count": 2, "name": "Ada", "flag": True}


def test_no_inputs_is_an_empty_object() -> None:
    assert parse_inputs([], None) == {}


def test_inputs_that_are_not_json_are_a_usage_error() -> None:
    with pytest.raises(typer.BadParameter) as caught:
        parse_inputs([], "{oops")
    assert caught.value.message == (
        "not valid JSON (Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1))")


@pytest.mark.parametrize(("text", "kind"), [
    ("[1]", "an array"), ('"x"', "a string"), ("3", "a number"), ("true", "a boolean"),
    ("null", "null"),
])
def test_inputs_must_be_a_json_object(text: str, kind: str) -> None:
    with pytest.raises(typer.BadParameter) as caught:
        parse_inputs([], text)
    assert caught.value.message == (
        f"expected a JSON object such as '{{\"name\": \"Ada\"}}', got {kind}")


def test_the_user_is_unknown_when_the_system_has_no_name_for_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_user() -> str:
        raise KeyError("uid not found")
    monkeypatch.setattr(getpass, "getuser", no_user)
    assert current_user() == "unknown"

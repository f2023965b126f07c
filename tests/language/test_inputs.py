"""Binding a run's inputs to the inputs its flow declares."""

from __future__ import annotations

from typing import Any

import pytest

from tarry.errors import RunError
from tarry.language.inputs import bind_inputs
from tarry.language.loader import parse_flow
from tarry.language.model import Flow


def flow_with_inputs(inputs: str, head: str = "") -> Flow:
    """A one-step flow declaring ``inputs`` (a YAML flow mapping)."""
    return parse_flow(f"flow: f\n{head}inputs: {inputs}\nsteps: [{{step: {{exit: done}}}}]\n",
                      "f.yaml")


TYPED = flow_with_inputs("""{
    s: {type: string}, i: {type: integer}, n: {type: number}, b: {type: boolean},
    o: {type: object}, a: {type: array}, t: {type: instant}, d: {type: duration},
    x: {type: any}}""")


@pytest.mark.parametrize(("given", "expected"), [
    ({"s": 3}, "input 's' must be a string, got 3"),
    ({"i": "3"}, "input 'i' must be an integer, got '3'"),
    ({"i": 3.0}, "input 'i' must be an integer, got 3.0"),
    ({"i": True}, "input 'i' must be an integer, got true"),
    ({"n": False}, "input 'n' must be a number, got false"),
    ({"n": None}, "input 'n' must be a number, got null"),
    ({"b": "yes"}, "input 'b' must be true or false, got 'yes'"),
    ({"o": []}, "input 'o' must be an object, got a list"),
    ({"a": {}}, "input 'a' must be an array, got a mapping"),
    ({"t": "2026-09-01T09:00:00"},
     "input 't' must be an instant with a zone such as 2026-09-01T09:00:00Z, "
     "got '2026-09-01T09:00:00'"),
    ({"t": "2026-02-31T09:00:00Z"},
     "input 't' must be an instant with a zone such as 2026-09-01T09:00:00Z, "
     "got '2026-02-31T09:00:00Z'"),
    ({"d": "1mo"}, "input 'd' must be a duration such as 30s or 2d, got '1mo'"),
    ({"d": 30}, "input 'd' must be a duration such as 30s or 2d, got 30"),
    ({"z": 1}, "unknown input 'z'"),
    ({"ss": "x"}, "unknown input 'ss' (did you mean 's'?)"),
    ({"i": "1", "z": 1}, "unknown input 'z'; input 'i' must be an integer, got '1'"),
])
def test_refusals(given: dict[str, Any], expected: str) -> None:
    with pytest.raises(RunError) as caught:
        bind_inputs(TYPED, given)
    assert str(caught.value) == expected


def test_every_type_accepts_its_values() -> None:
    given = {"s": "x", "i": 3, "n": 2.5, "b": False, "o": {"k": 1}, "a": [1],
             "t": "2026-09-01T09:00:00+02:00", "d": "1h30m", "x": None}
    assert bind_inputs(TYPED, given) == given


def test_a_number_may_be_an_integer() -> None:
    assert bind_inputs(TYPED, {"n": 2})["n"] == 2


def test_missing_optional_inputs_are_bound_to_none() -> None:
    assert bind_inputs(TYPED, {}) == dict.fromkeys("sinboatdx")


def test_required_inputs_must_be_given() -> None:
    flow = flow_with_inputs("{deal: {type: object, required: true}, note: {required: true}}")
    with pytest.raises(RunError) as caught:
        bind_inputs(flow, {})
    assert str(caught.value) == "input 'deal' is required; input 'note' is required"


def test_defaults_fill_in_and_are_copies() -> None:
    flow = flow_with_inputs("{tags: {type: array, default: [a]}, n: {default: 3}}")
    bound = bind_inputs(flow, {"n": 5})
    assert bound == {"tags": ["a"], "n": 5}
    bound["tags"].append("b")
    assert bind_inputs(flow, {})["tags"] == ["a"]


def test_a_zone_less_instant_is_read_in_the_flow_timezone() -> None:
    flow = flow_with_inputs("{at: {type: instant}}", head="timezone: Europe/Berlin\n")
    assert bind_inputs(flow, {"at": "2026-09-01T09:00:00"}) == {"at": "2026-09-01T09:00:00"}


def test_a_flow_without_inputs_takes_none() -> None:
    flow = parse_flow("flow: bare\nsteps: [{a: {exit: done}}]\n", "f.yaml")
    assert bind_inputs(flow, {}) == {}
    with pytest.raises(RunError) as caught:
        bind_inputs(flow, {"deal": {}})
    assert str(caught.value) == "unknown input 'deal': flow 'bare' declares no inputs"

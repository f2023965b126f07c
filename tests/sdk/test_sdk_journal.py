"""The journal and its scopes, without an engine: places by name or call order, the checks
that catch a changed flow, and the serializer that stores recorded values."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from sdk_support import exactly

from tarry import JsonSerializer, NondeterminismError, SerializationError
from tarry.engine.outcome import WaitInfo
from tarry.sdk.replay import Journal, Scope, Suspend
from tarry.sdk.serializers import Codec


def scope_of(state: dict[str, Any], prefix: str = "", label: str = "the flow") -> Scope:
    return Scope(Journal(state), prefix, label)


def test_operations_take_their_name_or_their_place_as_path() -> None:
    state: dict[str, Any] = {}
    flow = scope_of(state)
    assert flow.enter("step", "reserve").path == "reserve"
    assert flow.enter("now", None).path == "#2"
    branch = scope_of(state, "fan[1].", "branch 'fan[1]'")
    assert branch.enter("wait", "nap").path == "fan[1].nap"
    assert state["journal"]["order"] == {"": [["step", "reserve"], ["now", "#2"]],
                                         "fan[1].": [["wait", "nap"]]}


def test_a_replay_finds_what_each_operation_recorded() -> None:
    state: dict[str, Any] = {}
    scope_of(state).enter("step", "reserve").record({"result": 1})
    replayed = scope_of(state).enter("step", "reserve")
    assert replayed.entry == {"result": 1}


def test_a_different_operation_at_a_recorded_place_is_nondeterminism() -> None:
    state: dict[str, Any] = {}
    first = scope_of(state)
    first.enter("step", "reserve")
    first.enter("wait", "cooling-off")
    replay = scope_of(state)
    replay.enter("step", "reserve")
    with pytest.raises(NondeterminismError) as raised:
        replay.enter("step", "charge")
    error = raised.value
    assert str(error) == (
        "the flow changed at operation 2: the run recorded wait 'cooling-off', the code now "
        "asks for step 'charge'; its code changed while the run was in progress")
    assert (error.operation, error.recorded, error.requested) == (
        "cooling-off", "wait 'cooling-off'", "step 'charge'")
    assert replay.journal.broken is error


def test_the_same_name_with_another_kind_is_nondeterminism() -> None:
    state: dict[str, Any] = {}
    scope_of(state).enter("wait", "nap")
    with pytest.raises(NondeterminismError) as raised:
        scope_of(state).enter("step", "nap")
    assert raised.value.operation == "nap"
    assert str(raised.value).startswith(
        "the flow changed at operation 1: the run recorded wait 'nap', the code now asks for "
        "step 'nap'")


def test_unnamed_operations_are_described_by_their_place() -> None:
    state: dict[str, Any] = {}
    scope_of(state).enter("now", None)
    with pytest.raises(NondeterminismError) as raised:
        scope_of(state).enter("random", None)
    assert str(raised.value).startswith(
        "the flow changed at operation 1: the run recorded unnamed now (#1), the code now asks "
        "for unnamed random (#1)")


def test_returning_before_a_recorded_operation_is_nondeterminism() -> None:
    state: dict[str, Any] = {}
    first = scope_of(state, "fan[0].", "branch 'fan[0]'")
    first.enter("step", "a")
    first.enter("step", "b")
    replay = scope_of(state, "fan[0].", "branch 'fan[0]'")
    replay.enter("step", "a")
    with pytest.raises(NondeterminismError) as raised:
        replay.finish()
    assert str(raised.value) == (
        "branch 'fan[0]' changed at operation 2: the run recorded step 'b', the code now "
        "returns without it; its code changed while the run was in progress")
    assert raised.value.requested is None


def test_a_name_used_twice_in_one_scope_is_refused() -> None:
    scope = scope_of({})
    scope.enter("step", "charge")
    message = ("the flow uses the operation name 'charge' twice; names must be unique within "
               "the flow and within each branch")
    with pytest.raises(ValueError, match=exactly(message)):
        scope.enter("wait", "charge")


def test_the_same_name_in_two_scopes_is_fine() -> None:
    state: dict[str, Any] = {}
    assert scope_of(state, "a[0].").enter("step", "x").path == "a[0].x"
    assert scope_of(state, "a[1].").enter("step", "x").path == "a[1].x"


@pytest.mark.parametrize(("name", "error", "message"), [
    ("", ValueError, "operation name '' is invalid: use a non-empty name without '[' or ']' "
                     "that does not start with '#'"),
    ("#1", ValueError, "operation name '#1' is invalid: use a non-empty name without '[' or "
                       "']' that does not start with '#'"),
    ("a[0]", ValueError, "operation name 'a[0]' is invalid: use a non-empty name without '[' "
                         "or ']' that does not start with '#'"),
    (3, TypeError, "an operation name must be a string or None, got int"),
])
def test_bad_names(name: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as raised:
        scope_of({}).enter("step", name)
    assert str(raised.value) == message


def test_one_operation_at_a_time_per_scope() -> None:
    scope = scope_of({})
    running = scope.enter("step", "slow")
    with scope.running(running), pytest.raises(RuntimeError) as raised:
        scope.enter("step", "other")
    assert str(raised.value) == (
        "the flow: step 'other' started while step 'slow' is still running; await each "
        "operation before starting the next, or run them concurrently with ctx.parallel or "
        "ctx.map")
    scope.enter("step", "after")


def test_a_suspended_scope_suspends_every_later_operation() -> None:
    scope = scope_of({})
    wait = WaitInfo("timer", "nap", datetime(2026, 1, 2, tzinfo=UTC))
    with pytest.raises(Suspend) as raised:
        scope.suspend(wait)
    assert raised.value.waits == (wait,)
    with pytest.raises(Suspend) as again:
        scope.enter("step", "cleanup")
    assert again.value is raised.value


# -- the serializer --------------------------------------------------------------------------

def test_json_data_is_stored_as_it_is_and_loaded_as_a_fresh_copy() -> None:
    codec = Codec(JsonSerializer())
    value = {"items": [1, 2.5, "x", None, True], "nested": {"k": (1, 2)}}
    stored = codec.store(value, "the result of step 'x'")
    assert stored == {"items": [1, 2.5, "x", None, True], "nested": {"k": [1, 2]}}
    loaded = codec.load(stored)
    loaded["items"].append("mutated")
    assert codec.load(stored)["items"] == [1, 2.5, "x", None, True]
    assert codec.store("text", "x") == "text"


@pytest.mark.parametrize(("value", "reason"), [
    ({"at": datetime(2026, 1, 1, tzinfo=UTC)}, "Object of type datetime is not JSON serializable"),
    ({1, 2}, "Object of type set is not JSON serializable"),
    (math.nan, "Out of range float values are not JSON compliant"),
])
def test_a_value_that_is_not_json_data_is_refused_clearly(value: Any, reason: str) -> None:
    with pytest.raises(SerializationError) as raised:
        Codec(JsonSerializer()).store(value, "the result of step 'fetch'")
    assert str(raised.value) == (
        f"the result of step 'fetch' cannot be stored: {reason}; return JSON data (dict, list, "
        "str, int, float, bool or None), or give the App a serializer that handles it")
    assert raised.value.what == "the result of step 'fetch'"


@dataclass(frozen=True)
class Money:
    amount: int
    currency: str


class MoneySerializer:
    """Stores Money as a tagged object; everything else as JSON."""

    def encode(self, value: Any) -> Any:
        if isinstance(value, Money):
            return {"$money": [value.amount, value.currency]}
        return value

    def decode(self, data: Any) -> Any:
        if isinstance(data, dict) and "$money" in data:
            return Money(*data["$money"])
        return data


def test_a_pluggable_serializer_stores_its_own_types() -> None:
    codec = Codec(MoneySerializer())
    stored = codec.store(Money(5, "EUR"), "x")
    assert stored == {"$money": [5, "EUR"]}
    assert codec.load(stored) == Money(5, "EUR")


def test_a_serializer_that_fails_is_reported_with_its_error() -> None:
    class Broken:
        def encode(self, value: Any) -> Any:
            raise KeyError("no codec")

        def decode(self, data: Any) -> Any:
            return data

    with pytest.raises(SerializationError) as raised:
        Codec(Broken()).store(1, "the state of condition 'poll'")
    assert str(raised.value) == ("the state of condition 'poll' cannot be stored: the serializer "
                                 "failed: KeyError: 'no codec'")

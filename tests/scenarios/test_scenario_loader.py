"""Loading scenario files: the shape of a valid one, and every refusal with its exact message."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from scenario_projects import APPROVED

from tarry.errors import LoadError
from tarry.language.model import Position
from tarry.scenarios import Expectation, ScriptedEvent, Stub, StubFailure, load_scenario
from tarry.scenarios import parse_scenario as parse
from tarry.scenarios.model import DEFAULT_HORIZON

HEAD = "scenario: s\nflow: f\n"
"""The two required keys besides ``expect``."""
OK = "expect: { status: succeeded }\n"


def problems(text: str) -> list[str]:
    """The problems of loading ``text`` as ``s.yaml``, one line each."""
    with pytest.raises(LoadError) as caught:
        parse(text, "s.yaml")
    return str(caught.value).splitlines()


def test_the_spec_example_loads_into_its_parts() -> None:
    scenario = parse(APPROVED, "scenarios/approved.yaml")
    at = lambda line, column: Position("scenarios/approved.yaml", line, column)  # noqa: E731
    assert (scenario.name, scenario.flow, scenario.flow_pos) == (
        "approved-after-two-hours", "flows/deal-approval.yaml", at(2, 7))
    assert (scenario.inputs, scenario.inputs_pos) == ({"deal": {"name": "ACME"}}, at(3, 9))
    assert scenario.target == "acme/web#7"
    assert scenario.start == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    assert scenario.horizon == DEFAULT_HORIZON
    assert scenario.stubs == (Stub("slack.post", ({"ts": "1700000000.100"},)),)
    assert scenario.events == (ScriptedEvent(
        type="slack.approval", data={"message": "1700000000.100", "approved": True},
        pos=at(9, 5), type_pos=at(10, 11), after=timedelta(hours=2), id="e1"),)
    assert scenario.expectations == (
        Expectation("status", "succeeded", at(14, 11)),
        Expectation("exit", "approved", at(15, 9)),
        Expectation("reason", None, at(16, 11)),
        Expectation("bindings", "received", at(17, 15), "approval.status"),
        Expectation("bindings", "2026-03-02T11:00:00.000Z", at(17, 42),
                    "approval.received_at"),
        Expectation("calls", 1, at(18, 12), "slack.post"),
        Expectation("events", ["delivered"], at(19, 11)),
    )


def test_stub_answers_events_after_a_step_and_every_expectation_kind() -> None:
    scenario = parse(HEAD + """\
horizon: 30d
stub:
  a: null
  b: [ {n: 1}, { fail: down }, { fail: slow, type: http-503 } ]
events:
  - { after_step: "polls[2].check", after: 5m, type: e, data: {} }
expect:
  error: { type: failed, step: null }
  history: [created, started]
  history_contains: [started]
  events: [buffered]
""", "s.yaml")
    assert scenario.horizon == timedelta(days=30)
    assert [stub.answers for stub in scenario.stubs] == [
        (None,), ({"n": 1}, StubFailure("down", "action-error"), StubFailure("slow", "http-503"))]
    [event] = scenario.events
    assert (event.after_step, event.after, event.after_step_pos) == (
        "polls[2].check", timedelta(minutes=5), Position("s.yaml", 8, 19))
    assert [(e.kind, e.expected) for e in scenario.expectations] == [
        ("error", {"type": "failed", "step": None}), ("history", ["created", "started"]),
        ("history_contains", ["started"]), ("events", ["buffered"])]


def test_a_flow_may_be_named_or_given_by_path() -> None:
    assert parse("scenario: s\nflow: deal-approval\n" + OK, "s.yaml").flow == "deal-approval"
    assert parse("scenario: s\nflow: flows/x.yml\n" + OK, "s.yaml").flow == "flows/x.yml"


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param(HEAD + OK + "stubs: {}\n",
                 ["s.yaml:4:1: unknown key 'stubs' at scenario level (did you mean 'stub'?)"],
                 id="unknown-key"),
    pytest.param("description: x\n", [
        "s.yaml:1:1: missing 'scenario' at scenario level (the scenario's name)",
        "s.yaml:1:1: missing 'expect' at scenario level (what the run must come to)",
        "s.yaml:1:1: missing 'flow' at scenario level (a flow name or a path such as "
        "flows/x.yaml; without one, 'events' or 'schedules' must start runs through their "
        "triggers)"],
        id="missing-keys"),
    pytest.param("", ["s.yaml:1:1: the file is empty; a scenario needs at least 'scenario:', "
                      "'flow:' (or 'events' that start runs) and 'expect:'"], id="empty"),
    pytest.param("- a\n", ["s.yaml:1:1: a scenario file must be a mapping (scenario:, flow:, "
                           "expect:, …), got a list"], id="not-a-mapping"),
    pytest.param("scenario: s\nflow: [f\n", [
        "s.yaml:3:1: invalid YAML: expected ',' or ']', but got '<stream end>' (while parsing "
        "a flow sequence)"], id="yaml-syntax"),
    pytest.param(HEAD + "flow: g\n" + OK, ["s.yaml:3:1: duplicate key 'flow' (first at line 2)"],
                 id="duplicate-key"),
    pytest.param("scenario: Bad Name\nflow: f\n" + OK, [
        "s.yaml:1:11: 'scenario' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Bad Name'"],
        id="scenario-name"),
    pytest.param("scenario: s\nflow: Not A Flow\n" + OK, [
        "s.yaml:2:7: 'flow' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Not A Flow'"],
        id="flow-name"),
    pytest.param(HEAD + "inputs: [1]\ntarget: 3\n" + OK, [
        "s.yaml:3:9: 'inputs' must be a mapping of input name to value, got a list",
        "s.yaml:4:9: 'target' must be a string, got 3"], id="inputs-target"),
    pytest.param(HEAD + "start: '2026-03-01T09:00:00'\n" + OK, [
        "s.yaml:3:8: instant '2026-03-01T09:00:00' has no timezone; add 'Z' or an offset such "
        "as +02:00, or declare the flow's 'timezone'"], id="zoneless-start"),
    pytest.param(HEAD + "start: '2026-02-31T09:00:00Z'\n" + OK, [
        "s.yaml:3:8: '2026-02-31T09:00:00Z' is not a real date and time (day is out of range "
        "for month)"], id="impossible-start"),
    pytest.param(HEAD + "horizon: 3 days\n" + OK, [
        "s.yaml:3:10: '3 days' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, 1w, 1h30m "
        "or ISO 8601 like PT30S)"], id="bad-duration"),
    pytest.param(HEAD + "horizon: 0s\n" + OK, [
        "s.yaml:3:10: 'horizon' must be a duration longer than 0s, got '0s'"], id="zero-horizon"),
])
def test_scenario_level_refusals(text: str, expected: list[str]) -> None:
    assert problems(text) == expected


@pytest.mark.parametrize(("events", "expected"), [
    pytest.param("events: {after: 2h}\n", [
        "s.yaml:3:9: 'events' must be a list of events such as '- { after: 2h, type: …, "
        "data: {…} }', got a mapping"], id="not-a-list"),
    pytest.param("events: [3]\n", [
        "s.yaml:3:10: 'events[0]' must be a mapping such as { after: 2h, type: …, data: {…} }, "
        "got 3"], id="not-a-mapping"),
    pytest.param("events:\n  - {type: a, data: {}}\n", [
        "s.yaml:4:5: events[0] needs 'after' (a duration from the start) or 'after_step' "
        "(a step whose completion it follows)"], id="no-instant"),
    pytest.param("events:\n  - {after: 2h}\n", [
        "s.yaml:4:5: missing 'type' in events[0] (the event type)",
        "s.yaml:4:5: missing 'data' in events[0] (the payload, a mapping)"], id="missing-keys"),
    pytest.param("events:\n  - {after: 2h, typ: a, data: {}, dat: 1}\n", [
        "s.yaml:4:17: unknown key 'typ' in events[0] (did you mean 'type'?)",
        "s.yaml:4:35: unknown key 'dat' in events[0] (did you mean 'data'?)"],
        id="unknown-keys"),
    pytest.param("events:\n  - {after: 1mo, type: a, data: {}}\n", [
        "s.yaml:4:13: duration '1mo' uses months or years, whose length is ambiguous; use days "
        "or weeks"], id="months"),
    pytest.param("events:\n  - {after: 2h, type: a, data: [1]}\n", [
        "s.yaml:4:32: 'data' must be a mapping (the event's payload), got a list"],
        id="data-not-a-mapping"),
    pytest.param("events:\n  - {after: 2h, type: Big, data: {}}\n", [
        "s.yaml:4:23: 'type' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Big'"],
        id="bad-type"),
    pytest.param("events:\n  - {after_step: 'Ask!', type: a, data: {}}\n", [
        "s.yaml:4:18: 'after_step' must be a step path such as ask or polls[2].check, "
        "got 'Ask!'"], id="bad-step-path"),
    pytest.param("events:\n  - {after: 1h, type: a, data: {}, id: ''}\n", [
        "s.yaml:4:40: 'id' must not be empty"], id="empty-id"),
])
def test_event_refusals(events: str, expected: list[str]) -> None:
    assert problems(HEAD + events + OK) == expected


@pytest.mark.parametrize(("stub", "expected"), [
    pytest.param("stub: [x]\n", [
        "s.yaml:3:7: 'stub' must be a mapping of action name to its result, got a list"],
        id="not-a-mapping"),
    pytest.param("stub: {x: 3, y: [], z: [{a: 1}, oops]}\n", [
        "s.yaml:3:11: stub 'x' must be a result mapping, null, or { fail: message }, got 3",
        "s.yaml:3:17: stub 'y' must list at least one answer",
        "s.yaml:3:33: stub 'z'[1] must be a result mapping, null, or { fail: message }, "
        "got 'oops'"], id="bad-answers"),
    pytest.param("stub: {x: {fail: boom, ts: 1}, y: {fail: 3, type: Bad}}\n", [
        "s.yaml:3:24: unknown key 'ts' in the failing answer of stub 'x' (expected one of: "
        "fail, type)",
        "s.yaml:3:42: 'fail' must be a string, got 3",
        "s.yaml:3:51: 'type' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Bad'"],
        id="bad-failures"),
])
def test_stub_refusals(stub: str, expected: list[str]) -> None:
    assert problems(HEAD + stub + OK) == expected


@pytest.mark.parametrize(("expect", "expected"), [
    pytest.param("expect: {}\n", [
        "s.yaml:3:9: 'expect' must name at least one expectation (status, exit, reason, error, "
        "bindings, calls, history, history_contains, events, runs)"], id="empty"),
    pytest.param("expect: [status]\n", [
        "s.yaml:3:9: 'expect' must be a mapping such as { status: succeeded, exit: approved }, "
        "got a list"], id="not-a-mapping"),
    pytest.param("expect: {statuss: succeeded, exits: done}\n", [
        "s.yaml:3:10: unknown key 'statuss' in 'expect' (did you mean 'status'?)",
        "s.yaml:3:30: unknown key 'exits' in 'expect' (did you mean 'exit'?)"],
        id="unknown-keys"),
    pytest.param("expect: {status: done}\n", [
        "s.yaml:3:18: 'status' must be one of held, pending, running, waiting, succeeded, "
        "failed, cancelled, refused, got 'done'"], id="status"),
    pytest.param("expect: {exit: 3, reason: Bad Token}\n", [
        "s.yaml:3:16: 'exit' must be a name matching [a-z0-9][a-z0-9_.-]*, got 3",
        "s.yaml:3:27: 'reason' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Bad Token'"],
        id="exit-reason"),
    pytest.param("expect: {error: failed}\n", [
        "s.yaml:3:17: 'error' must be a mapping of some of type, message, step (or null), "
        "got 'failed'"], id="error-not-a-mapping"),
    pytest.param("expect: {error: {}}\n", [
        "s.yaml:3:17: 'error' must give at least one of type, message, step (or be null)"],
        id="error-empty"),
    pytest.param("expect: {error: {kind: x, message: 3}}\n", [
        "s.yaml:3:18: unknown key 'kind' in 'error' (expected one of: message, step, type)",
        "s.yaml:3:36: 'message' must be a string, got 3"], id="error-fields"),
    pytest.param("expect: {bindings: [a]}\n", [
        "s.yaml:3:20: 'bindings' must be a mapping of binding path to value, such as "
        "{ approval.status: received }, got a list"], id="bindings-not-a-mapping"),
    pytest.param("expect: {bindings: {}}\n", [
        "s.yaml:3:20: 'bindings' must give at least one binding path"], id="bindings-empty"),
    pytest.param("expect: {bindings: {'a..b': 1, 'a[x]': 2}}\n", [
        "s.yaml:3:21: 'a..b' is not a binding path (write step ids and keys joined by dots, "
        "list indexes as [0])",
        "s.yaml:3:32: 'a[x]' is not a binding path (write step ids and keys joined by dots, "
        "list indexes as [0])"], id="binding-paths"),
    pytest.param("stub: {slack.post: {}}\nexpect: {calls: {slack.pots: 1, other: -1}}\n", [
        "s.yaml:4:18: calls: 'slack.pots' is not stubbed; only the calls of stubbed actions "
        "are counted (did you mean 'slack.post'?)",
        "s.yaml:4:33: calls: 'other' is not stubbed; only the calls of stubbed actions are "
        "counted (stubbed: slack.post)",
        "s.yaml:4:40: 'other' must be a non-negative integer, got -1"], id="calls"),
    pytest.param("expect: {calls: {x: 1}}\n", [
        "s.yaml:3:18: calls: 'x' is not stubbed; only the calls of stubbed actions are counted "
        "(nothing is stubbed)"], id="calls-without-stubs"),
    pytest.param("expect: {calls: {}}\n", [
        "s.yaml:3:17: 'calls' must count at least one stubbed action"], id="calls-empty"),
    pytest.param("expect: {history: [], history_contains: started}\n", [
        "s.yaml:3:19: 'history' must list at least one history kind",
        "s.yaml:3:41: 'history_contains' must be a list of history kinds such as "
        "[started, step.started], got 'started'"], id="history"),
    pytest.param("expect: {history: [started, 3]}\n", [
        "s.yaml:3:29: 'history[1]' must be a string, got 3"], id="history-item"),
    pytest.param("expect: {events: delivered}\n", [
        "s.yaml:3:18: 'events' must be a list of event states, one per scripted event, "
        "got 'delivered'"], id="events-not-a-list"),
    pytest.param("events:\n  - {after: 1h, type: a, data: {}}\n"
                 "expect: {events: [delivered, lost]}\n", [
        "s.yaml:5:18: 'events' gives 2 states but the scenario sends 1 event",
        "s.yaml:5:30: 'events[1]' must be one of delivered, buffered, unmatched, invalid, "
        "duplicate, discarded, got 'lost'"], id="event-states"),
])
def test_expect_refusals(expect: str, expected: list[str]) -> None:
    assert problems(HEAD + expect) == expected


@pytest.mark.parametrize(("make", "message"), [
    pytest.param(lambda path: None, "file not found", id="missing"),
    pytest.param(lambda path: path.mkdir(), "is a directory, not a scenario file",
                 id="directory"),
    pytest.param(lambda path: path.write_bytes(b"\xff\xfe"), "the file is not UTF-8 text",
                 id="not-utf8"),
])
def test_a_file_that_cannot_be_read_is_one_problem(tmp_path: Path, make: object,
                                                   message: str) -> None:
    path = tmp_path / "s.yaml"
    make(path)  # type: ignore[operator]
    with pytest.raises(LoadError) as caught:
        load_scenario(path)
    assert str(caught.value) == f"{path}:1:1: {message}"

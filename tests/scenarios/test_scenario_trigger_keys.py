"""Loading the scenario keys for triggers and holds: ``checks``, ``schedules``, a scenario
without ``flow:``, and ``expect.runs`` — their parts, and every refusal with its exact message."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tarry.errors import LoadError
from tarry.holds.checks import Answer
from tarry.language.model import Position
from tarry.scenarios import parse_scenario as parse
from tarry.scenarios.model import CheckPhase, CheckStub, Expectation, ExpectedRun, RealCheck

HEAD = "scenario: s\nflow: f\n"
OK = "expect: { status: succeeded }\n"
TRIGGERED = "scenario: s\nevents: [{after: 0s, type: e, data: {}}]\n"
"""A scenario without a run of its own: the event it sends starts runs."""
MONDAY = datetime(2026, 10, 26, 8, 0, tzinfo=UTC)


def problems(text: str) -> list[str]:
    """The problems of loading ``text`` as ``s.yaml``, one line each."""
    with pytest.raises(LoadError) as caught:
        parse(text, "s.yaml")
    return str(caught.value).splitlines()


def at(line: int, column: int) -> Position:
    return Position("s.yaml", line, column)


def test_checks_are_stubbed_by_instant_or_run_for_real() -> None:
    scenario = parse(HEAD + """\
checks:
  ledger: go
  deploy-window:
    - { answer: not_yet, until: "2026-10-26T09:00:00+01:00" }
    - { answer: go }
  jira: { path: checks/wait-jira.sh }
""" + OK, "s.yaml")
    assert scenario.checks == (
        CheckStub("ledger", (CheckPhase(Answer.GO),), at(4, 3)),
        CheckStub("deploy-window", (CheckPhase(Answer.NOT_YET, MONDAY), CheckPhase(Answer.GO)),
                  at(5, 3)),
        RealCheck("jira", "checks/wait-jira.sh", at(8, 3)),
    )


def test_a_stubbed_check_answers_by_the_instant_it_is_asked_at() -> None:
    [stub] = parse(HEAD + """\
checks:
  w:
    - { answer: not_yet, until: "2026-10-26T08:00:00Z" }
    - { answer: never, until: "2026-10-27T08:00:00Z" }
    - { answer: unknown }
""" + OK, "s.yaml").checks
    assert isinstance(stub, CheckStub)
    assert [stub.answer_at(datetime(2026, 10, day, hour, tzinfo=UTC))
            for day, hour in ((26, 7), (26, 8), (27, 7), (27, 8), (30, 0))] == [
        Answer.NOT_YET, Answer.NEVER, Answer.NEVER, Answer.UNKNOWN, Answer.UNKNOWN]


def test_a_scenario_without_flow_names_the_runs_its_triggers_start() -> None:
    scenario = parse("""\
scenario: s
horizon: 5d
schedules: [report]
events: [{after: 0s, type: github.issues, data: {}}]
expect:
  runs:
    - { flow: deploy, target: acme/web#7, exit: deployed, inputs: { repo: acme/web } }
    - { flow: report, scheduled_at: "2026-10-26T09:00:00+01:00" }
""", "s.yaml")
    assert (scenario.flow, scenario.schedules, scenario.runs_pos) == (
        None, {"report": at(3, 13)}, at(6, 3))
    assert scenario.runs == (
        ExpectedRun("deploy", at(7, 7), at(7, 15), target="acme/web#7", expectations=(
            Expectation("exit", "deployed", at(7, 49)),
            Expectation("inputs", {"repo": "acme/web"}, at(7, 67)))),
        ExpectedRun("report", at(8, 7), at(8, 15), scheduled_at=MONDAY),
    )
    assert scenario.runs[0].describe(0) == "runs[0] (deploy acme/web#7)"
    assert scenario.runs[1].describe(1) == "runs[1] (report at 2026-10-26T08:00:00.000Z)"


def test_a_scenario_with_a_flow_may_expect_runs_too() -> None:
    scenario = parse(HEAD + "expect:\n  status: succeeded\n  runs: []\n", "s.yaml")
    assert (scenario.flow, scenario.runs, scenario.runs_pos) == ("f", (), at(5, 3))
    assert parse(HEAD + OK, "s.yaml").runs_pos is None  # no 'runs': triggered runs unchecked


CHECKS_SHAPE = ("an answer (go, not_yet, never, unknown), a list of { answer, until }, or "
                "{ path: … }")
REAL_HINT = ("(a real check is { path: … }; a stubbed one is an answer, such as 'go', or a "
             "list of { answer, until })")


@pytest.mark.parametrize(("checks", "expected"), [
    pytest.param("checks: [go]\n", [
        "s.yaml:3:9: 'checks' must be a mapping of check name to its answers or { path: … }, "
        "such as { deploy-window: go }, got a list"], id="not-a-mapping"),
    pytest.param("checks: {a: 3}\n", [f"s.yaml:3:13: check 'a' must be {CHECKS_SHAPE}, got 3"],
                 id="not-an-answer"),
    pytest.param("checks: {a: not-yet, b: yes, c: Go}\n", [
        "s.yaml:3:13: check 'a' must be one of go, not_yet, never, unknown, got 'not-yet' "
        "(did you mean 'not_yet'?)",
        "s.yaml:3:25: check 'b' must be one of go, not_yet, never, unknown, got 'yes'",
        "s.yaml:3:33: check 'c' must be one of go, not_yet, never, unknown, got 'Go' "
        "(did you mean 'go'?)"], id="bad-answers"),
    pytest.param("checks: {a: []}\n", ["s.yaml:3:13: check 'a' must list at least one answer"],
                 id="empty-list"),
    pytest.param("checks: {a: [go]}\n", [
        "s.yaml:3:14: check 'a'[0] must be a mapping such as { answer: not_yet, until: "
        "2026-10-26T08:00:00Z } or { answer: go }, got 'go'"], id="bare-answer-in-a-list"),
    pytest.param("checks:\n  a:\n    - {answer: not_yet, untill: '2026-01-02T00:00:00Z'}\n"
                 "    - {anwser: go}\n", [
        "s.yaml:5:25: unknown key 'untill' in check 'a'[0] (did you mean 'until'?)",
        "s.yaml:6:8: unknown key 'anwser' in check 'a'[1] (did you mean 'answer'?)"],
        id="misspelt-keys"),
    pytest.param("checks:\n  a:\n    - {answer: not_yet}\n"
                 "    - {answer: go, until: '2026-01-02T00:00:00Z'}\n", [
        "s.yaml:5:7: check 'a'[0] needs 'until' (the instant its answer ends); only the last "
        "answer goes on without one",
        "s.yaml:6:20: the last answer of check 'a' must not have 'until': it answers every "
        "check after the others"], id="until-misplaced"),
    pytest.param("checks:\n  a:\n    - {answer: not_yet, until: '2026-01-03T00:00:00Z'}\n"
                 "    - {answer: never, until: '2026-01-02T00:00:00Z'}\n    - {answer: go}\n",
                 ["s.yaml:6:30: 'until' of check 'a'[1] must come after the one before it"],
                 id="until-out-of-order"),
    pytest.param("checks:\n  a:\n    - {answer: not_yet, until: '2026-01-03T00:00:00'}\n"
                 "    - {answer: go}\n", [
        "s.yaml:5:32: instant '2026-01-03T00:00:00' has no timezone; add 'Z' or an offset "
        "such as +02:00, or declare the flow's 'timezone'"], id="zoneless-until"),
    pytest.param("checks:\n  a:\n    - {answer: 0, until: '2026-01-03T00:00:00Z'}\n"
                 "    - {until: '2026-01-04T00:00:00Z'}\n", [
        "s.yaml:5:16: 'answer' of check 'a'[0] must be one of go, not_yet, never, unknown, "
        "got 0",
        "s.yaml:6:7: missing 'answer' in check 'a'[1] (go, not_yet, never, unknown)",
        "s.yaml:6:8: the last answer of check 'a' must not have 'until': it answers every "
        "check after the others"], id="bad-phase-answers"),
    pytest.param("checks: {a: {run: x.sh}, b: {answer: go}, c: {path: ''}, d: {path: 3}}\n", [
        "s.yaml:3:13: missing 'path' in check 'a' (the check's executable, relative to the "
        "project root)",
        f"s.yaml:3:14: unknown key 'run' in check 'a' {REAL_HINT}",
        "s.yaml:3:29: missing 'path' in check 'b' (the check's executable, relative to the "
        "project root)",
        f"s.yaml:3:30: unknown key 'answer' in check 'b' {REAL_HINT}",
        "s.yaml:3:53: 'path' of check 'c' must not be empty",
        "s.yaml:3:68: 'path' must be a string, got 3"], id="real-checks"),
])
def test_check_refusals(checks: str, expected: list[str]) -> None:
    assert problems(HEAD + checks + OK) == expected


@pytest.mark.parametrize(("schedules", "expected"), [
    pytest.param("horizon: 1d\nschedules: report\n", [
        "s.yaml:4:12: 'schedules' must be a list of the flows whose schedule triggers fire, "
        "such as [report], got 'report'"], id="not-a-list"),
    pytest.param("horizon: 1d\nschedules: []\n", [
        "s.yaml:4:12: 'schedules' must name at least one flow"], id="empty"),
    pytest.param("horizon: 1d\nschedules: [Report, report, report]\n", [
        "s.yaml:4:13: 'schedules[0]' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'Report'",
        "s.yaml:4:29: 'schedules' names flow 'report' twice"], id="bad-names"),
    pytest.param("schedules: [report]\n", [
        "s.yaml:3:1: 'schedules' needs 'horizon' (how long the schedules fire, such as 7d)"],
        id="no-horizon"),
])
def test_schedules_refusals(schedules: str, expected: list[str]) -> None:
    assert problems(HEAD + schedules + OK) == expected


OWN_RUN = ("needs 'flow:': without it the scenario starts no run of its own (its runs are "
           "those triggers start)")


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("""\
scenario: s
inputs: {a: 1}
target: t
tasks: [{task: a, outcome: b}]
events: [{after_step: a, type: e, data: {}}]
expect: {status: succeeded, exit: x, bindings: {a.b: 1}, runs: []}
""", [f"s.yaml:2:1: 'inputs' {OWN_RUN}", f"s.yaml:3:1: 'target' {OWN_RUN}",
      f"s.yaml:4:1: 'tasks' {OWN_RUN}", f"s.yaml:5:23: 'after_step' {OWN_RUN}",
      f"s.yaml:6:18: 'status' {OWN_RUN}; expect those under 'runs'",
      f"s.yaml:6:35: 'exit' {OWN_RUN}; expect those under 'runs'",
      f"s.yaml:6:49: 'bindings' {OWN_RUN}; expect those under 'runs'"], id="own-run-only"),
    pytest.param("scenario: s\nexpect: {runs: []}\n", [
        "s.yaml:1:1: missing 'flow' at scenario level (a flow name or a path such as "
        "flows/x.yaml; without one, 'events' or 'schedules' must start runs through their "
        "triggers)"], id="nothing-starts-runs"),
    pytest.param("scenario: s\nflwo: f\nexpect: {runs: []}\n", [
        "s.yaml:2:1: unknown key 'flwo' at scenario level (did you mean 'flow'?)"],
        id="misspelt-flow"),
    pytest.param(HEAD + "runs: []\ntriggers: []\nholds: {}\ncheck: {}\nschedule: []\n" + OK, [
        "s.yaml:3:1: unknown key 'runs' at scenario level ('runs' is an expectation: write it "
        "under 'expect')",
        "s.yaml:4:1: unknown key 'triggers' at scenario level (an event's triggers fire when "
        "the scenario sends it under 'events'; 'schedules' lists the flows whose schedule "
        "triggers fire)",
        "s.yaml:5:1: unknown key 'holds' at scenario level (did you mean 'checks'? the hold "
        "checks a scenario stubs or runs)",
        "s.yaml:6:1: unknown key 'check' at scenario level (did you mean 'checks'?)",
        "s.yaml:7:1: unknown key 'schedule' at scenario level (did you mean 'schedules'?)"],
        id="near-misses"),
])
def test_scenario_refusals_about_triggers(text: str, expected: list[str]) -> None:
    assert problems(text) == expected


@pytest.mark.parametrize(("runs", "expected"), [
    pytest.param("expect: {runs: {flow: d}}\n", [
        "s.yaml:3:16: 'runs' must be a list of the runs triggers start, such as '- { flow: "
        "deploy, target: acme/web#7, status: succeeded }', got a mapping"], id="not-a-list"),
    pytest.param("expect: {runs: [3]}\n", [
        "s.yaml:3:17: 'runs[0]' must be a mapping such as { flow: deploy, target: acme/web#7, "
        "status: succeeded }, got 3"], id="not-a-mapping"),
    pytest.param("expect:\n  runs:\n    - {flow: d, targt: t, at: '2026-01-01T09:00:00Z', "
                 "calls: {a: 1}, occurrence: 1}\n", [
        "s.yaml:5:17: unknown key 'targt' in runs[0] (did you mean 'target'?)",
        "s.yaml:5:27: unknown key 'at' in runs[0] (did you mean 'scheduled_at'? a schedule "
        "occurrence is named by its instant)",
        "s.yaml:5:55: unknown key 'calls' in runs[0] ('calls' counts across the scenario: "
        "write it in 'expect', not in a run)",
        "s.yaml:5:70: unknown key 'occurrence' in runs[0] (did you mean 'scheduled_at'? a "
        "schedule occurrence is named by its instant)"], id="unknown-keys"),
    pytest.param("expect:\n  runs:\n    - {target: t, status: held}\n", [
        "s.yaml:5:7: missing 'flow' in runs[0] (the flow of the run a trigger starts)"],
        id="missing-flow"),
    pytest.param("expect:\n  runs:\n    - {flow: D, target: 7, scheduled_at: "
                 "'2026-01-01T09:00:00', inputs: [1], status: won, history: []}\n", [
        "s.yaml:5:14: 'flow' must be a name matching [a-z0-9][a-z0-9_.-]*, got 'D'",
        "s.yaml:5:25: 'target' must be a string, got 7",
        "s.yaml:5:42: instant '2026-01-01T09:00:00' has no timezone; add 'Z' or an offset "
        "such as +02:00, or declare the flow's 'timezone'",
        "s.yaml:5:73: 'inputs' must be a mapping of input name to value, such as { day: … }, "
        "got a list",
        "s.yaml:5:86: 'status' must be one of held, pending, running, waiting, succeeded, "
        "failed, cancelled, refused, got 'won'",
        "s.yaml:5:100: 'history' must list at least one history kind"], id="bad-values"),
    pytest.param("expect:\n  inputs: {a: 1}\n  started: []\n", [
        "s.yaml:4:3: unknown key 'inputs' in 'expect' (the inputs of a run a trigger started "
        "are expected in its entry of 'runs'; the scenario's own run has those it gives)",
        "s.yaml:5:3: unknown key 'started' in 'expect' (did you mean 'runs'? the runs "
        "triggers start)"], id="near-misses"),
])
def test_run_expectation_refusals(runs: str, expected: list[str]) -> None:
    assert problems(TRIGGERED + runs) == expected


def test_downtime_spans_are_read_in_order() -> None:
    [span] = parse(HEAD + "start: '2026-10-23T06:00:00Z'\nhorizon: 5d\ndowntime:\n"
                   "  - { from: '2026-10-23T18:00:00+02:00', until: '2026-10-26T08:00:00Z' }\n"
                   + OK, "s.yaml").downtime
    assert (span.begins, span.ends, span.pos) == (
        datetime(2026, 10, 23, 16, tzinfo=UTC), MONDAY, at(6, 5))
    assert (span.covers(span.begins), span.covers(MONDAY)) == (True, False)


@pytest.mark.parametrize(("downtime", "expected"), [
    pytest.param("downtime: {from: x}\n", [
        "s.yaml:3:11: 'downtime' must be a list of spans such as '- { from: "
        "2026-10-23T18:00:00Z, until: 2026-10-26T10:00:00Z }', got a mapping"], id="not-a-list"),
    pytest.param("downtime: [3]\n", [
        "s.yaml:3:12: 'downtime[0]' must be a mapping such as { from: 2026-10-23T18:00:00Z, "
        "until: 2026-10-26T10:00:00Z }, got 3"], id="not-a-mapping"),
    pytest.param("downtime:\n  - {from: '2026-01-02T00:00:00Z', untill: '2026-01-03T00:00:00Z'}"
                 "\n  - {}\n", [
        "s.yaml:4:36: unknown key 'untill' in downtime[0] (did you mean 'until'?)",
        "s.yaml:5:5: missing 'from' in downtime[1] (the instant every worker stops)",
        "s.yaml:5:5: missing 'until' in downtime[1] (the instant the workers are back)"],
        id="keys"),
    pytest.param("downtime:\n  - {from: '2026-01-03T00:00:00Z', until: '2026-01-02T00:00:00Z'}"
                 "\n", ["s.yaml:4:5: downtime[0] must end after it begins"], id="backwards"),
    pytest.param("start: '2026-01-02T00:00:00Z'\nhorizon: 3d\ndowntime:\n"
                 "  - {from: '2026-01-01T00:00:00Z', until: '2026-01-03T00:00:00Z'}\n"
                 "  - {from: '2026-01-02T12:00:00Z', until: '2026-01-02T13:00:00Z'}\n"
                 "  - {from: '2026-01-04T00:00:00Z', until: '2026-01-06T00:00:00Z'}\n", [
        "s.yaml:6:5: downtime[0] begins before the scenario's start (2026-01-02T00:00:00.000Z)",
        "s.yaml:7:5: downtime[1] begins before downtime[0] ends",
        "s.yaml:8:5: downtime[2] ends past the horizon (2026-01-05T00:00:00.000Z)"],
        id="outside-or-overlapping"),
])
def test_downtime_refusals(downtime: str, expected: list[str]) -> None:
    assert problems(HEAD + downtime + OK) == expected

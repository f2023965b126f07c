"""Running scenarios: the real engine on a virtual clock, stubs, scripted events, expectations.

Every test runs on SQLite and (with TARRY_TEST_POSTGRES) on PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scenario_projects import APPROVED, ScenarioProject

from tarry.language.model import Position
from tarry.scenarios import Mismatch, Missing


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ScenarioProject:
    monkeypatch.chdir(tmp_path)
    return ScenarioProject.create(tmp_path)


def at(line: int, column: int, file: str = "scenarios/s.yaml") -> Position:
    """A position in the scenario file the test wrote."""
    return Position(file, line, column)


async def test_the_spec_scenario_passes(project: ScenarioProject, store_url: str) -> None:
    result = await project.run(project.scenario("approved", APPROVED), store_url=store_url)
    assert result.passed, result.mismatches
    assert result.document is not None
    assert result.document["target"] == "acme/web#7"
    assert result.document["created_at"] == "2026-03-02T09:00:00.000Z"


async def test_a_scenario_event_correlates_on_a_nested_path(project: ScenarioProject,
                                                            store_url: str) -> None:
    project.write("events.yaml", """\
        events:
          slack.approval:
            correlate_on: { message: container.message_ts }
        """)
    result = await project.run_text(APPROVED.replace(
        'data: { message: "1700000000.100", approved: true }',
        'data: { container: { message_ts: "1700000000.100" }, approved: true }'),
        store_url=store_url)
    assert result.passed, result.mismatches


VENDOR = """\
scenario: {name}
flow: vendor-confirmation
inputs: {{ vendor: acme }}
start: "2026-03-02T09:00:00Z"
stub:
  mail.send: {{ thread: th-1 }}
  chat.nudge: null
{events}
expect:
{expect}
"""

ANSWERED_ON_DAY_TEN = VENDOR.format(name="vendor-answers-on-day-ten", events="""\
events:
  - after: 10d
    type: vendor.reply
    data: { thread: th-1, confirmed: true }""", expect="""\
  status: succeeded
  exit: confirmed
  calls: { mail.send: 1, chat.nudge: 3 }
  bindings:
    reply.status: received
    reply.received_at: "2026-03-12T09:00:00.000Z"
    reply.event.confirmed: true
  events: [delivered]""")

NEVER_ANSWERED = VENDOR.format(name="vendor-never-answers", events="", expect="""\
  status: succeeded
  exit: no-reply
  calls: { mail.send: 1, chat.nudge: 4 }
  bindings: { reply: { status: timeout, event: null } }
  history_contains: [wait.registered, reminder.sent, reminder.sent, reminder.sent,
                     reminder.sent, wait.timeout, succeeded]""")


@pytest.mark.parametrize("text", [ANSWERED_ON_DAY_TEN, NEVER_ANSWERED],
                         ids=["answered-on-day-10", "never-answered"])
async def test_a_14_day_wait_with_reminders_every_3_days_runs_on_the_virtual_clock(
        project: ScenarioProject, store_url: str, text: str) -> None:
    path = project.scenario("vendor", text)
    result = await project.run(path, store_url=store_url)
    assert result.passed, result.mismatches


async def test_the_never_answered_run_ends_at_the_deadline(project: ScenarioProject,
                                                           store_url: str) -> None:
    result = await project.run(project.scenario("vendor", NEVER_ANSWERED), store_url=store_url)
    assert result.document is not None
    reminders = [entry["at"] for entry in result.document["history"]
                 if entry["kind"] == "reminder.sent"]
    assert reminders == ["2026-03-05T09:00:00.000Z", "2026-03-08T09:00:00.000Z",
                         "2026-03-11T09:00:00.000Z", "2026-03-14T09:00:00.000Z"]
    assert result.document["updated_at"] == "2026-03-16T09:00:00.000Z"


async def test_every_failed_expectation_is_reported(project: ScenarioProject,
                                                    store_url: str) -> None:
    result = await project.run_text("""\
        scenario: wrong-about-everything
        flow: deal-approval
        inputs: { deal: { name: ACME } }
        stub:
          slack.post: { ts: "1" }
        expect:
          status: failed
          exit: approved
          reason: null
          error: { type: failed }
          bindings: { approval.status: received, approval.event.approved: true, ask.ts: "1" }
          calls: { slack.post: 2 }
          history: [created, started]
        """, store_url=store_url)
    assert not result.passed
    assert result.problems == ()
    assert result.mismatches == (
        Mismatch("status", at(7, 11), "failed", "succeeded"),
        Mismatch("exit", at(8, 9), "approved", "no-answer"),
        Mismatch("error", at(10, 10), {"type": "failed"}, None),
        Mismatch("bindings approval.status", at(11, 15), "received", "timeout"),
        Mismatch("bindings approval.event.approved", at(11, 42), True,
                 Missing("approval.event.approved")),
        Mismatch("calls slack.post", at(12, 12), 2, 1),
        Mismatch("history", at(13, 12), ["created", "started"],
                 ["created", "started", "step.started", "step.completed", "step.started",
                  "wait.registered", "resumed", "wait.timeout", "step.completed",
                  "step.skipped", "step.started", "succeeded"]),
    )


async def test_values_compare_as_json(project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: json
        flow: deal-approval
        inputs: { deal: { name: ACME } }
        stub:
          slack.post: { ts: 1, ok: true, ratio: 2.0 }
        expect:
          bindings: { ask.ts: true, ask.ok: 1, ask.ratio: 2, ask: { ok: true, ratio: 2, ts: 1 } }
        """, store_url=store_url)
    assert [(m.label, m.expected, m.actual) for m in result.mismatches] == [
        ("bindings ask.ts", True, 1), ("bindings ask.ok", 1, True)]


REPEAT_FLOW = """\
flow: poller
steps:
  - polls:
      repeat: { every: 30s, max: 5, until: "{{ check.status == 'indexed' }}" }
      steps:
        - check: { search.status: { id: T-1 } }
"""


async def test_a_list_stub_answers_one_per_call_and_the_last_repeats(
        project: ScenarioProject, store_url: str) -> None:
    project.write("flows/poller.yaml", REPEAT_FLOW)
    result = await project.run_text("""\
        scenario: polls
        flow: poller
        stub:
          search.status: [ {status: queued}, {status: indexing}, {status: indexed} ]
        expect:
          calls: { search.status: 3 }
          bindings:
            polls: [ { check: { status: queued } }, { check: { status: indexing } },
                     { check: { status: indexed } } ]
        """, store_url=store_url)
    assert result.passed, result.mismatches


async def test_a_failing_stub_fails_the_step_with_its_type_and_message(
        project: ScenarioProject, store_url: str) -> None:
    project.write("flows/poller.yaml", REPEAT_FLOW)
    result = await project.run_text("""\
        scenario: search-down
        flow: poller
        stub:
          search.status: { fail: "search is down", type: http-503 }
        expect:
          status: failed
          exit: null
          error: { type: http-503, message: search is down, step: "polls[0].check" }
          calls: { search.status: 1 }
        """, store_url=store_url)
    assert result.passed, result.mismatches


async def test_a_failing_answer_without_type_is_an_action_error(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: slack-down
        flow: deal-approval
        inputs: { deal: { name: ACME } }
        stub:
          slack.post: { fail: "slack is down" }
        expect:
          status: failed
          error: { type: action-error, message: slack is down, step: ask }
        """, store_url=store_url)
    assert result.passed, result.mismatches


STAGED_FLOW = """\
flow: staged
steps:
  - prepare:
      wait: { for: 1h }
  - ask:
      slack.post: { text: "ok?" }
  - approval:
      wait_for: slack.approval
      match: { message: "{{ ask.ts }}" }
      timeout: 24h
"""


async def test_an_event_after_a_step_is_sent_that_long_after_the_step_completed(
        project: ScenarioProject, store_url: str) -> None:
    project.write("flows/staged.yaml", STAGED_FLOW)
    result = await project.run_text("""\
        scenario: after-step
        flow: staged
        start: "2026-03-02T09:00:00Z"
        stub: { slack.post: { ts: t1 } }
        events:
          - after_step: ask
            after: 30m
            type: slack.approval
            data: { message: t1, approved: true }
        expect:
          bindings: { approval.received_at: "2026-03-02T10:30:00.000Z" }
        """, store_url=store_url)
    assert result.passed, result.mismatches


async def test_an_event_after_a_step_that_never_completes_fails_the_scenario(
        project: ScenarioProject, store_url: str) -> None:
    project.write("flows/staged.yaml", STAGED_FLOW)
    result = await project.run_text("""\
        scenario: never
        flow: staged
        stub: { slack.post: { fail: down } }
        events:
          - after_step: ask
            type: slack.approval
            data: { message: t1, approved: true }
        expect:
          status: failed
        """, store_url=store_url)
    assert result.mismatches == (
        Mismatch("events[0] (slack.approval)", at(5, 5),
                 note="never sent: step 'ask' never completed"),)


async def test_an_event_due_after_the_run_ended_fails_the_scenario(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: too-late
        flow: deal-approval
        inputs: { deal: { name: ACME } }
        start: "2026-03-02T09:00:00Z"
        stub: { slack.post: { ts: t1 } }
        events:
          - { after: 2d, type: slack.approval, data: { message: t1, approved: true } }
        expect:
          exit: no-answer
          events: [delivered]
        """, store_url=store_url)
    assert result.mismatches == (
        Mismatch("events[0] (slack.approval)", at(7, 5),
                 note="not sent: the run had ended before its instant "
                      "2026-03-04T09:00:00.000Z"),
        Mismatch("events", at(10, 11), ["delivered"], [None]),
    )


async def test_an_event_past_the_horizon_is_not_sent(project: ScenarioProject,
                                                     store_url: str) -> None:
    result = await project.run_text("""\
        scenario: horizon
        flow: vendor-confirmation
        inputs: { vendor: acme }
        start: "2026-03-02T09:00:00Z"
        horizon: 5d
        stub: { mail.send: { thread: th-1 }, chat.nudge: null }
        events:
          - { after: 6d, type: vendor.reply, data: { thread: th-1 } }
        expect:
          status: waiting
          calls: { chat.nudge: 1 }
        """, store_url=store_url)
    assert result.mismatches == (
        Mismatch("events[0] (vendor.reply)", at(8, 5),
                 note="not sent: its instant 2026-03-08T09:00:00.000Z lies past the horizon "
                      "(2026-03-07T09:00:00.000Z)"),)


async def test_at_one_instant_the_engine_wakes_first_then_the_events_arrive(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: same-instant
        flow: deal-approval
        inputs: { deal: { name: ACME } }
        stub: { slack.post: { ts: t1 } }
        events:
          - { after: 24h, type: slack.approval, data: { message: t1, approved: true } }
        expect:
          exit: no-answer
          events: [buffered]
        """, store_url=store_url)
    assert result.passed, result.mismatches


async def test_the_final_state_of_each_scripted_event_is_compared(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: event-states
        flow: deal-approval
        inputs: { deal: { name: ACME } }
        stub: { slack.post: { ts: t1 } }
        events:
          - { after: 1h, type: slack.approval, data: { message: t1, approved: "yes" } }
          - { after: 2h, type: slack.approval, data: { message: other, approved: true } }
          - { after: 3h, type: slack.approval, data: { message: t1, approved: true }, id: a }
          - { after: 3h, type: slack.approval, data: { message: t1, approved: true }, id: a }
        expect:
          exit: approved
          events: [invalid, unmatched, delivered, duplicate]
        """, store_url=store_url)
    assert result.passed, result.mismatches


async def test_history_contains_wants_the_kinds_in_order(project: ScenarioProject,
                                                         store_url: str) -> None:
    result = await project.run_text("""\
        scenario: order
        flow: deal-approval
        inputs: { deal: { name: ACME } }
        stub: { slack.post: { ts: t1 } }
        expect:
          history_contains: [started, wait.timeout, wait.registered]
        """, store_url=store_url)
    [mismatch] = result.mismatches
    assert (mismatch.label, mismatch.note) == (
        "history_contains", "no 'wait.registered' after 'wait.timeout' in the history")


async def test_problems_against_the_project_stop_the_scenario_before_it_runs(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: confused
        flow: deal-aproval
        expect: { status: succeeded }
        """, store_url=store_url)
    assert [str(problem) for problem in result.problems] == [
        f"scenarios/s.yaml:2:7: no flow named 'deal-aproval' in {project.root / 'flows'} "
        "(did you mean 'deal-approval'?)"]
    assert (result.passed, result.mismatches, result.document) == (False, (), None)


async def test_inputs_event_types_and_step_names_are_checked_against_the_flow(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: confused
        flow: deal-approval
        inputs: { dael: {} }
        stub: { slack.post: { ts: t1 } }
        events:
          - { after: 1h, type: slack.aproval, data: {} }
          - { after_step: aks, type: slack.approval, data: {} }
        expect:
          bindings: { aproval.status: received }
        """, store_url=store_url)
    assert [str(problem) for problem in result.problems] == [
        "scenarios/s.yaml:3:9: inputs: unknown input 'dael' (did you mean 'deal'?); "
        "input 'deal' is required",
        "scenarios/s.yaml:6:24: events[0]: unknown event type 'slack.aproval' (did you mean "
        "'slack.approval'?) (declared: slack.approval, vendor.reply)",
        "scenarios/s.yaml:7:19: after_step: flow 'deal-approval' has no step 'aks' "
        "(did you mean 'ask'?)",
        "scenarios/s.yaml:9:15: bindings: flow 'deal-approval' has no step 'aproval' "
        "(did you mean 'approval'?)",
    ]


async def test_a_refused_flow_shows_its_own_problems(project: ScenarioProject,
                                                     store_url: str) -> None:
    project.write("flows/broken.yaml", "flow: broken\nstepz: []\n")
    result = await project.run_text("""\
        scenario: broken
        flow: flows/broken.yaml
        expect: { status: succeeded }
        """, store_url=store_url)
    flow_file = project.root / "flows" / "broken.yaml"
    assert [str(problem) for problem in result.problems] == [
        "scenarios/s.yaml:2:7: the flow 'flows/broken.yaml' is refused at load "
        "(its problems follow)",
        f"{flow_file}:2:1: unknown key 'stepz' at flow level (did you mean 'steps'?)",
    ]


async def test_a_flow_calling_an_action_neither_declared_nor_stubbed_is_refused(
        project: ScenarioProject, store_url: str) -> None:
    result = await project.run_text("""\
        scenario: unstubbed
        flow: deal-approval
        inputs: { deal: { name: ACME } }
        expect: { status: succeeded }
        """, store_url=store_url)
    flow_file = project.root / "flows" / "deal-approval.yaml"
    assert [str(problem) for problem in result.problems] == [
        "scenarios/s.yaml:2:7: the flow 'deal-approval' is refused at load "
        "(its problems follow)",
        f"{flow_file}:6:7: unknown action or key 'slack.post'",
    ]

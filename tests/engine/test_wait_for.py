"""wait_for and event delivery (SPEC 3.4, 3.5) through the real engine and store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tarry.actions import ActionContext
from tarry.model import EventState, RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """
events:
  slack.approval:
    correlate_on: [message]
    schema:
      type: object
      required: [message, approved]
      properties:
        approved: { type: boolean }
    buffer: 10m
  email.reply:
    correlate_on: [ticket]
  portal.reply:
    correlate_on: [ticket]
  form.reply:
    correlate_on: [ticket]
    buffer: 0
"""

APPROVAL = """
flow: deal-approval
inputs:
  deal: { type: object, required: true }
steps:
  - ask:
      slack.post: { channel: "#sales-ops", text: "Approve {{ deal.name }}?" }
  - approval:
      wait_for: slack.approval
      match: { message: "{{ ask.ts }}" }
      timeout: 24h
  - decided:
      if: "{{ approval.status == 'received' and approval.event.approved }}"
      exit: approved
  - expired:
      exit: no-answer
"""


def slack_post(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
    return {"ts": f"ts-{args['text']}"}


@pytest.fixture
def harness(tmp_path: Path, store_url: str) -> Iterator[Harness]:
    h = Harness(tmp_path, start=START, actions={"slack.post": slack_post},
                manifests=MANIFESTS, store_url=store_url)
    yield h
    h.close()


async def start_approval(harness: Harness, name: str = "ACME") -> str:
    run_id = harness.start(harness.flow(APPROVAL), {"deal": {"name": name}})
    await harness.run_due()
    return run_id


async def test_reply_in_time_resumes_the_run(harness: Harness) -> None:
    run_id = await start_approval(harness)
    assert harness.record(run_id).waiting_for == {
        "kind": "event", "step": "approval", "until": "2026-03-02T09:00:00.000Z",
        "event_type": "slack.approval", "match": {"message": "ts-Approve ACME?"},
        "since": "2026-03-01T09:00:00.000Z", "others": 0,
        "alternatives": [{"event_type": "slack.approval",
                          "match": {"message": "ts-Approve ACME?"}}]}
    await harness.advance(timedelta(hours=2))
    sent = harness.send("slack.approval", {"message": "ts-Approve ACME?", "approved": True})
    assert (sent.state, sent.runs) == (EventState.DELIVERED, (run_id,))
    await harness.run_due()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "approved")
    assert document["bindings"]["approval"] == {
        "status": "received", "event": {"message": "ts-Approve ACME?", "approved": True},
        "received_at": "2026-03-01T11:00:00.000Z"}


async def test_no_reply_times_out_as_a_value(harness: Harness) -> None:
    run_id = await start_approval(harness)
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert (document["status"], document["exit"]) == ("succeeded", "no-answer")
    assert document["bindings"]["approval"] == {"status": "timeout", "event": None}
    assert harness.clock.now() == START + timedelta(hours=24)


async def test_an_early_reply_is_buffered_then_consumed(harness: Harness) -> None:
    sent = harness.send("slack.approval", {"message": "ts-Approve ACME?", "approved": True})
    assert sent.state is EventState.BUFFERED
    run_id = await start_approval(harness)
    await harness.run_due()
    assert harness.record(run_id).exit == "approved"
    assert harness.engine.events()[0].state is EventState.DELIVERED


async def test_a_lapsed_buffer_is_recorded_unmatched(harness: Harness) -> None:
    harness.send("slack.approval", {"message": "nobody", "approved": True}, id="e1")
    await harness.advance(timedelta(minutes=11))
    assert [(e.id, e.state) for e in harness.engine.events()] == [("e1", EventState.UNMATCHED)]


async def test_the_same_event_id_is_delivered_once(harness: Harness) -> None:
    first, second = await start_approval(harness, "A"), await start_approval(harness, "A")
    payload = {"message": "ts-Approve A?", "approved": True}
    assert sorted(harness.send("slack.approval", payload, id="dup").runs) == sorted(
        [first, second])
    again = harness.send("slack.approval", payload, id="dup")
    assert again.state is EventState.DUPLICATE
    await harness.run_due()
    for run_id in (first, second):
        received = [e for e in harness.engine.store.history(run_id)
                    if e.kind == "event.received"]
        assert len(received) == 1


async def test_an_event_matching_two_runs_resumes_both(harness: Harness) -> None:
    runs = [await start_approval(harness, "SAME"), await start_approval(harness, "SAME")]
    sent = harness.send("slack.approval", {"message": "ts-Approve SAME?", "approved": True})
    assert sorted(sent.runs) == sorted(runs)
    await harness.run_due()
    assert [harness.record(r).exit for r in runs] == ["approved", "approved"]


@pytest.mark.parametrize("ticket", [1e20, -0.0, 1.7976931348623157e308])
async def test_a_number_correlates_whether_or_not_the_store_spelled_it_anew(
        harness: Harness, ticket: float) -> None:
    # the run's input comes back from the store as 100000000000000000000 (and 0.0, and a
    # 309-digit integer); the event's value is the float the sender wrote
    flow = harness.flow("""
flow: numbered
inputs:
  ticket: { type: number, required: true }
steps:
  - reply: { wait_for: email.reply, match: { ticket: "{{ ticket }}" }, timeout: 1h }
""")
    run_id = harness.start(flow, {"ticket": ticket})
    await harness.run_due()
    sent = harness.send("email.reply", {"ticket": ticket})
    assert sent.state is EventState.DELIVERED
    assert sent.runs == (run_id,)


async def test_a_non_matching_event_resumes_nothing(harness: Harness) -> None:
    run_id = await start_approval(harness)
    sent = harness.send("slack.approval", {"message": "other", "approved": True})
    assert sent.state is EventState.BUFFERED
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING


async def test_an_invalid_payload_is_quarantined_with_its_reasons(harness: Harness) -> None:
    run_id = await start_approval(harness)
    sent = harness.send("slack.approval", {"message": "ts-Approve ACME?", "approved": "yes"},
                        id="bad")
    assert sent.state is EventState.INVALID
    assert sent.errors == ("approved: 'yes' is not of type 'boolean'",)
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING
    fixed = harness.engine.redeliver("bad", {"message": "ts-Approve ACME?", "approved": True})
    assert (fixed.state, fixed.runs) == (EventState.DELIVERED, (run_id,))
    await harness.run_due()
    assert harness.record(run_id).exit == "approved"


async def test_any_first_alternative_wins_and_the_loser_is_gone(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: multichannel
steps:
  - reply:
      wait_for:
        any:
          - { event: email.reply, match: { ticket: "T1" } }
          - { event: portal.reply, match: { ticket: "T1" } }
      timeout: 3d
"""))
    await harness.run_due()
    harness.send("portal.reply", {"ticket": "T1", "body": "ok"})
    await harness.run_due()
    late = harness.send("email.reply", {"ticket": "T1", "body": "late"})
    assert late.state is EventState.BUFFERED
    await harness.run_until_idle()
    binding = harness.document(run_id)["bindings"]["reply"]
    assert (binding["status"], binding["type"]) == ("received", "portal.reply")


async def test_accept_rejects_and_the_wait_goes_on(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: first-valid
steps:
  - reply:
      wait_for: email.reply
      match: { ticket: "T9" }
      accept: "{{ event.body != 'spam' }}"
      timeout: 1d
"""))
    await harness.run_due()
    harness.send("email.reply", {"ticket": "T9", "body": "spam"})
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING
    harness.send("email.reply", {"ticket": "T9", "body": "yes"})
    await harness.run_due()
    assert harness.document(run_id)["bindings"]["reply"]["event"]["body"] == "yes"
    assert harness.history_kinds(run_id).count("event.rejected") == 1


async def test_reminders_repeat_and_the_deadline_never_moves(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: nudging
steps:
  - reply:
      wait_for: email.reply
      match: { ticket: "T2" }
      timeout: 14d
      remind:
        every: 3d
        steps:
          - nudge: { log: { message: "still waiting" } }
  - escalate:
      if: "{{ reply.status == 'timeout' }}"
      exit: escalated
"""))
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert record.exit == "escalated"
    assert harness.clock.now() == START + timedelta(days=14)
    assert harness.history_kinds(run_id).count("reminder.sent") == 4
    registered = [e for e in harness.engine.store.history(run_id)
                  if e.kind == "wait.registered"]
    assert len(registered) == 1


LATE_REPLY = """
flow: late-reply
steps:
  - reply:
      wait_for: email.reply
      match: { ticket: "T5" }
      timeout: 1h
  - rest:
      wait: { for: 1d }
"""


async def test_a_reply_received_at_the_deadline_loses_while_a_worker_holds_the_run(
        harness: Harness) -> None:
    run_id = harness.start(harness.flow(LATE_REPLY))
    await harness.run_due()
    harness.clock.advance(timedelta(hours=1))
    store, worker = harness.engine.store, harness.worker
    claimed = store.claim_run(run_id, harness.clock.now(), worker.name,
                              harness.clock.now() + timedelta(seconds=30))
    assert claimed is not None
    # the reply lands at the deadline while a worker is timing the wait out: too late
    late = harness.send("email.reply", {"ticket": "T5"})
    assert (late.state, late.runs) == (EventState.BUFFERED, ())
    await worker.execute(claimed, [])
    assert harness.document(run_id)["bindings"]["reply"]["status"] == "timeout"
    assert await harness.run_due() == 0
    record = harness.record(run_id)
    assert (record.status, record.due_at) == (RunStatus.WAITING,
                                              harness.clock.now() + timedelta(days=1))


async def test_a_reply_received_after_the_deadline_never_counts_whatever_the_backlog(
        harness: Harness) -> None:
    run_id = harness.start(harness.flow(LATE_REPLY.replace("email.reply", "slack.approval")
                                        .replace("ticket: \"T5\"", "message: \"m\"")))
    await harness.run_due()
    harness.clock.advance(timedelta(hours=1, minutes=36))  # no worker ran the timeout
    late = harness.send("slack.approval", {"message": "m", "approved": True}, id="late")
    assert (late.state, late.runs) == (EventState.BUFFERED, ())
    await harness.run_due()
    assert harness.document(run_id)["bindings"]["reply"] == {"status": "timeout",
                                                             "event": None}
    assert "event.received" not in harness.history_kinds(run_id)
    assert harness.engine.events()[0].state is EventState.BUFFERED


async def test_a_second_reply_before_any_worker_is_buffered_not_delivered(
        harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: first-of-two
steps:
  - reply:
      wait_for: email.reply
      match: { ticket: "T7" }
      timeout: 1d
  - rest:
      wait: { for: 1d }
"""))
    await harness.run_due()
    first = harness.send("email.reply", {"ticket": "T7", "body": "one"})
    second = harness.send("email.reply", {"ticket": "T7", "body": "two"})
    assert (first.state, first.runs) == (EventState.DELIVERED, (run_id,))
    assert (second.state, second.runs) == (EventState.BUFFERED, ())
    await harness.run_due()
    assert harness.document(run_id)["bindings"]["reply"]["event"]["body"] == "one"
    assert "event.ignored" not in harness.history_kinds(run_id)
    assert await harness.run_due() == 0
    assert {e.id: e.state for e in harness.engine.events()}[second.id] is EventState.BUFFERED


ANY_REPLY = """
flow: multichannel
steps:
  - reply:
      wait_for:
        any:
          - { event: email.reply, match: { ticket: "T1" } }
          - { event: %s, match: { ticket: "T1" } }
      timeout: 3d
  - rest:
      wait: { for: 1d }
"""


@pytest.mark.parametrize(("loser", "state"), [("portal.reply", EventState.BUFFERED),
                                               ("form.reply", EventState.UNMATCHED)])
async def test_an_any_race_decided_before_any_worker_has_one_winner(
        harness: Harness, loser: str, state: EventState) -> None:
    run_id = harness.start(harness.flow(ANY_REPLY % loser))
    await harness.run_due()
    won = harness.send("email.reply", {"ticket": "T1", "body": "first"})
    lost = harness.send(loser, {"ticket": "T1", "body": "second"})
    assert (won.state, won.runs) == (EventState.DELIVERED, (run_id,))
    assert (lost.state, lost.runs) == (state, ())
    await harness.run_due()
    binding = harness.document(run_id)["bindings"]["reply"]
    assert (binding["type"], binding["event"]["body"]) == ("email.reply", "first")
    assert "event.ignored" not in harness.history_kinds(run_id)
    assert {e.id: e.state for e in harness.engine.events()}[lost.id] is state


async def test_an_event_redelivered_to_a_settled_wait_is_not_delivered_to_it(
        harness: Harness) -> None:
    early = harness.send("form.reply", {"ticket": "T8", "body": "early"})
    assert early.state is EventState.UNMATCHED
    run_id = harness.start(harness.flow(ANY_REPLY.replace("T1", "T8") % "form.reply"))
    await harness.run_due()
    assert harness.send("email.reply", {"ticket": "T8"}).runs == (run_id,)
    again = harness.engine.redeliver(early.id)
    assert (again.state, again.runs) == (EventState.UNMATCHED, ())
    await harness.run_due()
    assert harness.document(run_id)["bindings"]["reply"]["type"] == "email.reply"


async def test_a_loser_buffered_by_an_any_race_is_taken_by_the_next_wait(
        harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: two-replies
steps:
  - reply:
      wait_for:
        any:
          - { event: email.reply, match: { ticket: "T6" } }
          - { event: portal.reply, match: { ticket: "T6" } }
      timeout: 3d
  - follow_up:
      wait_for: portal.reply
      match: { ticket: "T6" }
      timeout: 1d
"""))
    await harness.run_due()
    harness.send("email.reply", {"ticket": "T6"})
    lost = harness.send("portal.reply", {"ticket": "T6", "body": "later"})
    assert lost.state is EventState.BUFFERED
    await harness.run_until_idle()
    document = harness.document(run_id)
    assert document["bindings"]["follow_up"]["event"]["body"] == "later"
    assert {e.id: e.state for e in harness.engine.events()}[lost.id] is EventState.DELIVERED


async def test_a_rejected_reply_leaves_the_run_reachable_without_a_buffer(
        harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: first-valid-unbuffered
steps:
  - reply:
      wait_for: form.reply
      match: { ticket: "T3" }
      accept: "{{ event.body != 'spam' }}"
      timeout: 1d
"""))
    await harness.run_due()
    rejected = harness.send("form.reply", {"ticket": "T3", "body": "spam"})
    valid = harness.send("form.reply", {"ticket": "T3", "body": "yes"})  # before any worker
    assert rejected.runs == valid.runs == (run_id,)
    await harness.run_due()
    harness.send("form.reply", {"ticket": "T3", "body": "spam"})
    assert harness.document(run_id)["bindings"]["reply"]["event"]["body"] == "yes"
    assert harness.history_kinds(run_id).count("event.rejected") == 1


async def test_a_rejected_reply_stays_reachable_after_the_worker_ran(harness: Harness) -> None:
    run_id = harness.start(harness.flow("""
flow: first-valid-later
steps:
  - reply:
      wait_for: form.reply
      match: { ticket: "T4" }
      accept: "{{ event.body != 'spam' }}"
      timeout: 1d
"""))
    await harness.run_due()
    harness.send("form.reply", {"ticket": "T4", "body": "spam"})
    await harness.run_due()
    assert harness.send("form.reply", {"ticket": "T4", "body": "yes"}).runs == (run_id,)
    await harness.run_due()
    assert harness.document(run_id)["bindings"]["reply"]["event"]["body"] == "yes"


async def test_the_first_valid_of_several_buffered_replies_wins(harness: Harness) -> None:
    harness.send("slack.approval", {"message": "m", "approved": False}, id="no")
    harness.send("slack.approval", {"message": "m", "approved": True}, id="yes")
    run_id = harness.start(harness.flow("""
flow: first-valid-buffered
steps:
  - reply:
      wait_for: slack.approval
      match: { message: "m" }
      accept: "{{ event.approved }}"
      timeout: 1d
"""))
    await harness.run_due()
    await harness.run_due()
    assert harness.document(run_id)["bindings"]["reply"]["event"]["approved"] is True
    assert {e.id: e.state for e in harness.engine.events()} == {
        "no": EventState.DELIVERED, "yes": EventState.DELIVERED}

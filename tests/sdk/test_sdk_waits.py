"""ctx.wait and ctx.wait_for_event through the real engine: the run is a row while it waits,
wakes at its instant, takes delivered (or buffered) events, and times out as a value."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sdk_support import START, HarnessFor

from tarry import App, Context, EventResult
from tarry.actions import ActionRegistry
from tarry.engine.interpreter import Env
from tarry.engine.outcome import Blocked
from tarry.model import EventState, RunStatus


def approval_app() -> App:
    app = App()

    @app.flow("approval")
    async def approval(ctx: Context, message: str) -> dict[str, Any]:
        reply = await ctx.wait_for_event("reply", "slack.approval", match={"message": message},
                                         timeout="24h")
        return {"status": reply.status, "event": reply.event,
                "received_at": reply.received_at.isoformat() if reply.received_at else None}

    return app


async def test_a_timer_wait_suspends_the_run_until_its_instant(harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("cooling")
    async def flow(ctx: Context) -> str:
        await ctx.wait("cooling-off", "2d")
        return ctx.now().isoformat()

    harness = harness_for(app)
    run_id = harness.start("cooling")
    await harness.run_due()
    record = harness.record(run_id)
    assert record.status is RunStatus.WAITING
    assert record.due_at == START + timedelta(days=2)
    assert record.waiting_for == {"kind": "timer", "step": "cooling-off",
                                  "until": "2026-03-03T09:00:00.000Z", "event_type": None,
                                  "match": None, "since": "2026-03-01T09:00:00.000Z", "others": 0}
    await harness.run_until_idle()
    assert harness.record(run_id).result == (START + timedelta(days=2)).isoformat()
    assert harness.history_kinds(run_id) == [
        "created", "started", "step.started", "wait.registered", "resumed", "step.completed",
        "succeeded"]


async def test_a_wait_until_an_instant(harness_for: HarnessFor) -> None:
    app = App()
    deadline = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)

    @app.flow("until")
    async def flow(ctx: Context) -> None:
        await ctx.wait("past", until=START - timedelta(days=1))
        await ctx.wait("deadline", until=deadline)

    harness = harness_for(app)
    run_id = harness.start("until")
    await harness.run_due()
    assert harness.record(run_id).due_at == deadline
    await harness.run_until_idle()
    assert harness.record(run_id).status is RunStatus.SUCCEEDED
    assert harness.clock.now() == deadline


@pytest.mark.parametrize(("call", "message"), [
    (lambda ctx: ctx.wait("w"), "ValueError: ctx.wait needs either a duration or until=, not "
                                "both"),
    (lambda ctx: ctx.wait("w", "1h", until=START), "ValueError: ctx.wait needs either a "
                                                   "duration or until=, not both"),
    (lambda ctx: ctx.wait("w", until=datetime(2026, 5, 1)),
     "ValueError: until must be a timezone-aware datetime, such as datetime(2026, 9, 1, 9, 0, "
     "tzinfo=UTC)"),
    (lambda ctx: ctx.wait("w", "soon"),
     "ValueError: ctx.wait duration: 'soon' is not a duration (use e.g. 500ms, 30s, 15m, 24h, "
     "2d, 1w, 1h30m or ISO 8601 like PT30S)"),
    (lambda ctx: ctx.wait_for_event("w", "slack.approval", match={"message": "m"},
                                    timeout=datetime(2026, 5, 1)),
     "ValueError: timeout must be a timezone-aware datetime, such as datetime(2026, 9, 1, 9, 0, "
     "tzinfo=UTC)"),
])
async def test_wait_refusals(harness_for: HarnessFor, call: Any, message: str) -> None:
    app = App()

    @app.flow("misused")
    async def flow(ctx: Context) -> None:
        await call(ctx)

    harness = harness_for(app)
    run_id = harness.start("misused")
    await harness.run_due()
    assert harness.record(run_id).error == {"type": "exception", "message": message,
                                            "step": None}


async def test_an_event_in_time_resumes_the_run_with_it(harness_for: HarnessFor) -> None:
    harness = harness_for(approval_app())
    run_id = harness.start("approval", {"message": "M1"})
    await harness.run_due()
    assert harness.record(run_id).waiting_for == {
        "kind": "event", "step": "reply", "until": "2026-03-02T09:00:00.000Z",
        "event_type": "slack.approval", "match": {"message": "M1"},
        "since": "2026-03-01T09:00:00.000Z", "others": 0,
        "alternatives": [{"event_type": "slack.approval", "match": {"message": "M1"}}]}
    await harness.advance(timedelta(hours=2))
    sent = harness.send("slack.approval", {"message": "M1", "approved": True})
    assert (sent.state, sent.runs) == (EventState.DELIVERED, (run_id,))
    await harness.run_due()
    assert harness.record(run_id).result == {
        "status": "received", "event": {"message": "M1", "approved": True},
        "received_at": "2026-03-01T11:00:00+00:00"}
    kinds = harness.history_kinds(run_id)
    assert kinds[kinds.index("resumed"):] == ["resumed", "event.received", "step.completed",
                                              "succeeded"]


async def test_a_second_event_before_any_worker_is_buffered_not_delivered(
        harness_for: HarnessFor) -> None:
    harness = harness_for(approval_app())
    run_id = harness.start("approval", {"message": "M2"})
    await harness.run_due()
    first = harness.send("slack.approval", {"message": "M2", "approved": True})
    second = harness.send("slack.approval", {"message": "M2", "approved": False})
    assert (first.state, first.runs) == (EventState.DELIVERED, (run_id,))
    assert (second.state, second.runs) == (EventState.BUFFERED, ())
    await harness.run_due()
    assert harness.record(run_id).result["event"]["approved"] is True
    assert "event.ignored" not in harness.history_kinds(run_id)


async def test_an_event_received_after_the_deadline_never_counts_whatever_the_backlog(
        harness_for: HarnessFor) -> None:
    harness = harness_for(approval_app())
    run_id = harness.start("approval", {"message": "M1"})
    await harness.run_due()
    harness.clock.advance(timedelta(hours=24, minutes=1))  # no worker ran the timeout
    late = harness.send("slack.approval", {"message": "M1", "approved": True})
    assert (late.state, late.runs) == (EventState.BUFFERED, ())
    await harness.run_due()
    assert harness.record(run_id).result == {"status": "timeout", "event": None,
                                             "received_at": None}


async def test_no_event_times_out_as_a_value_at_the_deadline(harness_for: HarnessFor) -> None:
    harness = harness_for(approval_app())
    run_id = harness.start("approval", {"message": "M1"})
    await harness.run_until_idle()
    assert harness.record(run_id).result == {"status": "timeout", "event": None,
                                             "received_at": None}
    assert harness.clock.now() == START + timedelta(hours=24)
    assert "wait.timeout" in harness.history_kinds(run_id)


async def test_an_event_sent_before_the_wait_is_taken_from_the_buffer(
        harness_for: HarnessFor) -> None:
    app = App()

    @app.flow("late-waiter")
    async def flow(ctx: Context) -> str:
        await ctx.wait("first", "5m")
        reply = await ctx.wait_for_event("reply", "vendor.reply",
                                         match={"vendor": "acme", "round": 1}, timeout="1h")
        return reply.status

    harness = harness_for(app)
    run_id = harness.start("late-waiter")
    await harness.run_due()
    assert harness.send("vendor.reply", {"vendor": "acme", "round": 1}).state \
        is EventState.BUFFERED
    await harness.run_until_idle()
    assert harness.record(run_id).result == "received"
    assert harness.clock.now() == START + timedelta(minutes=5)


async def test_a_timeout_may_be_an_instant(harness_for: HarnessFor) -> None:
    app = App()
    deadline = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)

    @app.flow("instant")
    async def flow(ctx: Context) -> str:
        reply = await ctx.wait_for_event("reply", "slack.approval", match={"message": "x"},
                                         timeout=deadline)
        return reply.status

    harness = harness_for(app)
    run_id = harness.start("instant")
    await harness.run_until_idle()
    assert harness.record(run_id).result == "timeout"
    assert harness.clock.now() == deadline


@pytest.mark.parametrize(("event_type", "match", "message"), [
    ("slack.aproval", {"message": "m"},
     "wait_for_event 'reply': unknown event type 'slack.aproval' (did you mean "
     "'slack.approval'?)"),
    ("jira.closed", {"message": "m"},
     "wait_for_event 'reply': unknown event type 'jira.closed'; declare it under 'events:' in "
     "an event manifest (events.yaml)"),
    ("slack.approval", {"mesage": "m"},
     "wait_for_event 'reply': unknown key 'mesage' in match (did you mean 'message'?)"),
    ("vendor.reply", {"vendor": "a", "colour": "red"},
     "wait_for_event 'reply': unknown key 'colour' in match (event type 'vendor.reply' "
     "correlates on vendor, round)"),
    ("vendor.reply", {"vendor": "a"},
     "wait_for_event 'reply': missing 'round' in match (event type 'vendor.reply' correlates "
     "on vendor, round)"),
])
async def test_a_wait_for_an_undeclared_event_or_with_wrong_keys_fails_the_run(
        harness_for: HarnessFor, event_type: str, match: dict[str, str], message: str) -> None:
    app = App()

    @app.flow("wrong")
    async def flow(ctx: Context) -> None:
        await ctx.wait_for_event("reply", event_type, match=match, timeout="1h")

    harness = harness_for(app)
    run_id = harness.start("wrong")
    await harness.run_due()
    assert harness.record(run_id).error == {"type": "event", "message": message, "step": None}


def test_event_result_reads_the_recorded_outcome() -> None:
    received = EventResult.of({"status": "received", "event": {"a": 1},
                               "received_at": "2026-03-01T11:00:00.000Z"})
    assert received == EventResult("received", {"a": 1}, datetime(2026, 3, 1, 11, tzinfo=UTC))
    assert EventResult.of({"status": "timeout", "event": None, "received_at": None}) == \
        EventResult("timeout", None, None)


async def test_an_event_delivered_for_a_wait_no_longer_reached_is_consumed_and_noted() -> None:
    """A delivery that raced the wait's timeout cannot wake the run again and again."""
    app = App()

    @app.flow("napping")
    async def flow(ctx: Context) -> None:
        await ctx.wait("nap", "1h")

    async def no_checkpoint() -> None:
        raise AssertionError("nothing to checkpoint")

    program = app.programs({})["napping"]
    env = Env(run_id="r1", flow=program.definition, now=START, inputs={}, run_info={},
              actions=ActionRegistry(), checkpoint=no_checkpoint)
    env.inbox = {"reply": [{"inbox_id": "7", "id": "e1", "type": "slack.approval",
                            "data": {"message": "m"}, "received_at": "2026-03-01T09:00:00.000Z"}]}
    outcome = await program.advance(env, {})
    assert isinstance(outcome, Blocked)
    env.ignore_undelivered()  # what the executor does after every advance, YAML or Python
    assert env.consumed == ["7"]
    assert [(e.kind, e.step, e.data) for e in env.history if e.kind == "event.ignored"] == [
        ("event.ignored", "reply", {"event_id": "e1", "type": "slack.approval"})]

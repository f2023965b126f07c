"""ctx.continue_as_new through the real engine, on SQLite and PostgreSQL: the run ends
(``succeeded``, exit ``continued``) and its successor is created in the same transaction,
linked both ways; the harness follows the chain; events meant for the chain are not lost."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sdk_support import HarnessFor

from tarry import App, Context
from tarry.config import Limits
from tarry.errors import ContinueAsNewError
from tarry.model import EventState, RunStatus
from tarry.testing import Harness


def counting_app() -> App:
    """A flow that counts to ``stop`` in segments of ``every`` steps, continuing as new at
    the end of each segment."""
    app = App()

    @app.flow("counter")
    async def counter(ctx: Context, start: int = 0, stop: int = 10, every: int = 3) -> int:
        count = start
        for _ in range(min(every, stop - start)):
            count = await ctx.step(None, lambda n: n + 1, count)
        if count < stop:
            ctx.continue_as_new(start=count, stop=stop, every=every)
        return count

    return app


async def test_a_run_continues_as_a_new_run_linked_both_ways(harness_for: HarnessFor) -> None:
    harness = harness_for(counting_app())
    first = harness.engine.start("counter", {"stop": 7}, target="acme").id
    await harness.run_until_idle()

    chain = harness.chain(first)
    assert len(chain) == 3
    assert harness.latest(first) == chain[-1]
    records = [harness.record(run_id) for run_id in chain]
    assert [(r.status, r.exit) for r in records] == [
        (RunStatus.SUCCEEDED, "continued"), (RunStatus.SUCCEEDED, "continued"),
        (RunStatus.SUCCEEDED, "completed")]
    assert [r.inputs for r in records] == [{"start": 0, "stop": 7, "every": 3},
                                          {"start": 3, "stop": 7, "every": 3},
                                          {"start": 6, "stop": 7, "every": 3}]
    assert [r.target for r in records] == ["acme"] * 3
    assert [r.result for r in records] == [None, None, 7]
    assert {r.flow_digest for r in records} == {records[0].flow_digest}

    ended, middle = harness.document(chain[0]), harness.document(chain[1])
    assert (ended["continued_from"], ended["continued_as"]) == (None, chain[1])
    assert (middle["continued_from"], middle["continued_as"]) == (chain[0], chain[2])
    assert harness.document(chain[2])["continued_as"] is None
    assert [(e["kind"], e["data"]) for e in ended["history"][-2:]] == [
        ("continued", {"as": chain[1]}), ("succeeded", {"exit": "continued"})]
    assert [(e["kind"], e["data"]) for e in middle["history"][:2]] == [
        ("created", {"target": "acme", "continued_from": chain[0]}),
        ("continued", {"from": chain[0]})]
    assert len(middle["journal"]) == 3  # its own operations only: the journal starts empty


async def test_the_successor_is_created_at_the_instant_the_run_ends(
        harness_for: HarnessFor) -> None:
    harness = harness_for(counting_app())
    first = harness.start("counter", {"stop": 5})
    await harness.run_until_idle()
    [successor] = harness.chain(first)[1:]
    assert harness.record(successor).created_at == harness.record(first).updated_at


def event_app() -> App:
    app = App()

    @app.flow("rounds")
    async def rounds(ctx: Context, vendor: str, round: int = 1) -> list[Any]:
        reply = await ctx.wait_for_event("reply", "vendor.reply",
                                         match={"vendor": vendor, "round": str(round)},
                                         timeout="1h")
        if round < 2:
            await ctx.wait("pause", "5m")
            ctx.continue_as_new(vendor=vendor, round=round + 1)
        return [reply.status, reply.event]

    return app


async def test_an_event_sent_before_the_successor_waits_is_taken_by_it(
        harness_for: HarnessFor) -> None:
    harness = harness_for(event_app())
    first = harness.start("rounds", {"vendor": "v1"})
    await harness.run_due()
    harness.send("vendor.reply", {"vendor": "v1", "round": "1"})
    await harness.run_due()  # takes round 1's reply, then pauses
    early = harness.send("vendor.reply", {"vendor": "v1", "round": "2"})  # nobody waits yet
    assert early.state is EventState.BUFFERED
    await harness.advance(timedelta(minutes=5))  # continues as new; the successor waits
    successor = harness.latest(first)
    assert successor != first
    await harness.run_until_idle()
    assert harness.record(successor).result == ["received", {"vendor": "v1", "round": "2"}]
    assert harness.engine.store.get_event(early.id).runs == (successor,)


def inbox_app() -> App:
    app = App()

    @app.flow("handover")
    async def handover(ctx: Context, ticket: str, segment: int = 1) -> Any:
        if segment == 1:
            await ctx.wait_for_event("early", "slack.approval", match={"message": ticket},
                                     timeout="1h")
            await ctx.step("slow", _deliver_meanwhile, ticket)
            ctx.continue_as_new(ticket=ticket, segment=2)
        reply = await ctx.wait_for_event("late", "slack.approval", match={"message": ticket},
                                         timeout="1h")
        return reply.event

    return app


_SEND: list[Any] = []


def _deliver_meanwhile(ticket: str) -> None:
    """While the run is running, a second event of its correlation reaches its inbox (the
    run's wait is still registered): it must not be lost when the run continues as new."""
    _SEND[0]("slack.approval", {"message": ticket, "n": 2})


async def test_an_event_in_the_ended_runs_inbox_is_buffered_again_for_the_successor(
        harness_for: HarnessFor) -> None:
    harness = harness_for(inbox_app())
    _SEND[:] = [harness.send]
    first = harness.start("handover", {"ticket": "T-1"})
    await harness.run_due()
    harness.send("slack.approval", {"message": "T-1", "n": 1})
    await harness.run_due()  # takes n=1; n=2 arrives in its inbox meanwhile; continues
    successor = harness.latest(first)
    assert successor != first
    assert harness.engine.store.inbox([first]) == {}
    await harness.run_until_idle()
    assert harness.record(successor).result == {"message": "T-1", "n": 2}


def refusing_app() -> App:
    app = App()

    @app.flow("refused")
    async def refused(ctx: Context, count: int) -> None:
        ctx.continue_as_new(count="many", colour="red")

    @app.flow("branched")
    async def branched(ctx: Context) -> None:
        async def branch(ctx: Context) -> None:
            ctx.continue_as_new()

        await ctx.parallel(branch, name="fan")

    @app.flow("in-a-step")
    async def in_a_step(ctx: Context) -> None:
        await ctx.step("inner", lambda: Context.current().continue_as_new())

    @app.flow("caught")
    async def caught(ctx: Context) -> str:
        try:
            ctx.continue_as_new(unknown=1)
        except ContinueAsNewError as exc:
            return str(exc)
        return "continued"

    return app


@pytest.mark.parametrize(("flow", "inputs", "message"), [
    ("refused", {"count": 1},
     "ctx.continue_as_new: unknown input 'colour'; input 'count' must be an integer, got "
     "'many'"),
    ("branched", {},
     "ctx.continue_as_new: it was called inside branch 'fan[0]'; a run continues as new from "
     "the flow function itself, once its parallel or map has returned"),
])
async def test_a_refused_continue_as_new_fails_the_run_and_starts_nothing(
        harness_for: HarnessFor, flow: str, inputs: dict[str, Any], message: str) -> None:
    harness = harness_for(refusing_app())
    run_id = harness.start(flow, inputs)
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert record.status is RunStatus.FAILED
    assert record.error == {"type": "continue-as-new", "message": message, "step": None}
    assert harness.chain(run_id) == [run_id]


async def test_a_step_that_continues_as_new_fails_as_a_step(harness_for: HarnessFor) -> None:
    harness = harness_for(refusing_app())
    run_id = harness.start("in-a-step")
    await harness.run_until_idle()
    assert harness.record(run_id).error == {
        "type": "step-error", "step": "inner",
        "message": "step 'inner' raised ContinueAsNewError: ctx.continue_as_new: it was called "
                   "while step 'inner' is running; call it from the flow function, between "
                   "operations"}
    assert harness.chain(run_id) == [run_id]


async def test_a_flow_may_catch_the_refusal(harness_for: HarnessFor) -> None:
    harness = harness_for(refusing_app())
    run_id = harness.start("caught")
    await harness.run_until_idle()
    assert harness.record(run_id).result == (
        "ctx.continue_as_new: unknown input 'unknown': flow 'caught' declares no inputs")


async def test_inputs_over_the_value_limit_fail_the_run_and_start_nothing(
        tmp_path: Path, store_url: str) -> None:
    app = App()

    @app.flow("grows")
    async def grows(ctx: Context, blob: str = "") -> None:
        ctx.continue_as_new(blob=blob + "x" * 2000)

    harness = Harness(tmp_path, app=app, store_url=store_url, limits=Limits(value_bytes=1024))
    run_id = harness.start("grows")
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert (record.status, record.error) == (RunStatus.FAILED, {
        "type": "value", "step": None,
        "message": "the inputs of ctx.continue_as_new: 2,011 bytes as JSON is over the limit "
                   "of 1,024 bytes ([limits] value_bytes)"})
    assert harness.chain(run_id) == [run_id]
    harness.close()


async def test_a_run_that_continued_as_new_replays_to_the_same_ending(
        harness_for: HarnessFor) -> None:
    harness = harness_for(counting_app())
    first = harness.start("counter", {"stop": 5})
    await harness.run_until_idle()
    report = await harness.assert_replays(harness.chain(first))
    assert [(result.run_id, result.verdict) for result in report.results] == [
        (run_id, "ok") for run_id in harness.chain(first)]

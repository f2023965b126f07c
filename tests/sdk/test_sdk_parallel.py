"""ctx.parallel and ctx.map through the real engine: branches suspend independently on their
own events and timers, the run waits on the union, finished branches are never run again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sdk_support import START, HarnessFor

from tarry import App, Context, StepError
from tarry.engine.journal import BRANCHES
from tarry.model import EventState, RunStatus


def waits_of(harness: Any, run_id: str) -> list[tuple[str, str]]:
    """The event waits the store holds for the run: (wait id, event type)."""
    rows = harness.engine.store.history(run_id)
    registered = {(e.step, e.data["alternatives"][0]["type"]) for e in rows
                  if e.kind == "wait.registered" and e.data["kind"] == "event"}
    received = {e.step for e in rows if e.kind in ("event.received", "wait.timeout")}
    return sorted((step, kind) for step, kind in registered if step not in received)


async def test_branches_wait_on_different_events_and_timers(harness_for: HarnessFor) -> None:
    app = App()
    calls: list[str] = []

    async def approval(ctx: Context) -> str:
        reply = await ctx.wait_for_event("ask", "slack.approval", match={"message": "deal-7"},
                                         timeout="2d")
        return f"approval {reply.status}"

    async def vendor(ctx: Context) -> str:
        reply = await ctx.wait_for_event("ask", "vendor.reply",
                                         match={"vendor": "acme", "round": 1}, timeout="3d")
        return f"vendor {reply.status}"

    async def cooling(ctx: Context) -> str:
        await ctx.wait("nap", "6h")
        await ctx.step("note", lambda: calls.append("cooled"))
        return "cooled"

    @app.flow("fan")
    async def flow(ctx: Context) -> list[str]:
        return await ctx.parallel(approval, vendor, cooling, name="gather")

    harness = harness_for(app)
    run_id = harness.start("fan")
    await harness.run_due()
    record = harness.record(run_id)
    assert record.status is RunStatus.WAITING
    assert record.due_at == START + timedelta(hours=6)
    assert waits_of(harness, run_id) == [("gather[0].ask", "slack.approval"),
                                         ("gather[1].ask", "vendor.reply")]

    await harness.advance(timedelta(hours=1))
    sent = harness.send("vendor.reply", {"vendor": "acme", "round": 1})
    assert (sent.state, sent.runs) == (EventState.DELIVERED, (run_id,))
    await harness.run_due()
    assert harness.record(run_id).status is RunStatus.WAITING
    await harness.advance(timedelta(hours=6))
    assert calls == ["cooled"]
    assert harness.record(run_id).due_at == START + timedelta(days=2)

    harness.send("slack.approval", {"message": "deal-7"})
    await harness.run_until_idle()
    record = harness.record(run_id)
    assert record.result == ["approval received", "vendor received", "cooled"]
    assert calls == ["cooled"]
    assert harness.clock.now() == START + timedelta(hours=7)


async def test_map_runs_one_branch_per_item_each_with_its_own_wait(
        harness_for: HarnessFor) -> None:
    app = App()

    async def ask(ctx: Context, vendor: str) -> dict[str, Any]:
        reply = await ctx.wait_for_event("reply", "vendor.reply",
                                         match={"vendor": vendor, "round": 1}, timeout="1d")
        return {"vendor": vendor, "status": reply.status,
                "price": reply.event["price"] if reply.event else None}

    @app.flow("quotes")
    async def flow(ctx: Context, vendors: list[str]) -> list[dict[str, Any]]:
        return await ctx.map(ask, vendors, name="quotes")

    harness = harness_for(app)
    run_id = harness.start("quotes", {"vendors": ["acme", "globex", "initech"]})
    await harness.run_due()
    harness.send("vendor.reply", {"vendor": "initech", "round": 1, "price": 30})
    harness.send("vendor.reply", {"vendor": "acme", "round": 1, "price": 10})
    await harness.run_until_idle()
    assert harness.record(run_id).result == [
        {"vendor": "acme", "status": "received", "price": 10},
        {"vendor": "globex", "status": "timeout", "price": None},
        {"vendor": "initech", "status": "received", "price": 30}]
    assert harness.clock.now() == START + timedelta(days=1)


async def test_a_failing_branch_fails_the_operation_and_finished_ones_stay_recorded(
        harness_for: HarnessFor) -> None:
    app = App()
    calls: list[int] = []

    async def work(ctx: Context, item: int) -> int:
        await ctx.step("work", lambda: calls.append(item))
        if item == 1:
            await ctx.wait("slow", "1h")
            await ctx.step("fail", _fail)
        return item * 10

    @app.flow("partial")
    async def flow(ctx: Context) -> Any:
        try:
            return await ctx.map(work, [0, 1, 2])
        except StepError as error:
            return error.step

    harness = harness_for(app)
    run_id = harness.start("partial")
    await harness.run_until_idle()
    assert harness.record(run_id).result == "#1[1].fail"
    assert sorted(calls) == [0, 1, 2]
    journal = harness.engine.store.journals([run_id])[run_id]
    assert [(e.key, e.value) for e in journal if e.scope == BRANCHES] == [
        ("#1[0]", 0), ("#1[2]", 20)]


def _fail() -> None:
    raise RuntimeError("boom")


async def test_branches_nest(harness_for: HarnessFor) -> None:
    app = App()

    async def inner(ctx: Context, hours: int) -> int:
        await ctx.wait("nap", timedelta(hours=hours))
        return hours

    async def outer(ctx: Context, group: list[int]) -> int:
        return sum(await ctx.map(inner, group, name="inner"))

    @app.flow("nested")
    async def flow(ctx: Context) -> list[int]:
        return await ctx.map(outer, [[1, 2], [3]], name="outer")

    harness = harness_for(app)
    run_id = harness.start("nested")
    await harness.run_due()
    assert harness.record(run_id).waiting_for == {
        "kind": "timer", "step": "outer[0].inner[0].nap", "until": "2026-03-01T10:00:00.000Z",
        "event_type": None, "match": None, "since": "2026-03-01T09:00:00.000Z", "others": 2}
    await harness.run_until_idle()
    assert harness.record(run_id).result == [3, 3]
    assert harness.clock.now() == START + timedelta(hours=3)

"""Replaying recorded runs against changed code with no effects (``Engine.replay``, the
harness's ``replay``/``assert_replays`` and ``tarry.testing.assert_replays``): a reorder is
caught with the run and the operations named, its patched version passes and resumes the old
runs, and nothing is called or written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from sdk_support import HarnessFor, exactly

from tarry import App, CheckContext, Context, WaitStrategy
from tarry.engine.replaying import ReplayResult, replay_runs
from tarry.model import JournalEntry, RunStatus
from tarry.store.base import Store
from tarry.testing import Harness, ReplayFailed, assert_replays

REORDERED = ("the flow changed at operation 1: the run recorded step 'reserve', the code now "
             "asks for step 'charge'; its code changed while the run was in progress")


def order_app(version: str) -> App:
    """``order`` as first deployed (``v1``), with two steps swapped (``reordered``), or with
    the swap behind a patch (``patched``)."""
    app = App()

    @app.flow("order")
    async def order(ctx: Context) -> str:
        charge_first = version == "reordered" or (version == "patched"
                                                  and ctx.patched("charge-first"))
        first, second = ("charge", "reserve") if charge_first else ("reserve", "charge")
        await ctx.step(first, lambda: first)
        await ctx.step(second, lambda: second)
        await ctx.wait("pause", "1d")
        await ctx.step("ship", lambda: "shipped")
        return f"{first} first"

    return app


def _swap(previous: Harness, harness_for: HarnessFor, app: App) -> Harness:
    harness = harness_for(app)
    harness.clock.set(previous.clock.now())
    return harness


async def _waiting_runs(harness: Harness, count: int) -> list[str]:
    runs = [harness.start("order") for _ in range(count)]
    await harness.run_due()
    assert {harness.record(run).status for run in runs} == {RunStatus.WAITING}
    return runs


async def test_a_reorder_is_caught_naming_each_run_and_the_operations(
        harness_for: HarnessFor) -> None:
    first = harness_for(order_app("v1"))
    runs = await _waiting_runs(first, 2)
    second = _swap(first, harness_for, order_app("reordered"))

    report = await second.replay()

    assert sorted(report.results, key=lambda r: r.run_id) == sorted(
        (ReplayResult(run, "order", "waiting", "nondeterminism", REORDERED, "reserve")
         for run in runs), key=lambda r: r.run_id)
    with pytest.raises(ReplayFailed) as failed:
        await second.assert_replays()
    lines = str(failed.value).splitlines()
    assert lines[0] == "some runs would fail on their next resume with this code:"
    assert sorted(lines[1:3]) == sorted(
        f"{run} (order, waiting): nondeterminism at reserve: {REORDERED}" for run in runs)
    assert lines[3] == ("replayed 2 runs of Python flows: 2 would hit nondeterminism, "
                        "0 would fail otherwise")
    assert {second.record(run).status for run in runs} == {RunStatus.WAITING}


async def test_the_patched_reorder_passes_and_resumes_the_old_runs_on_their_path(
        harness_for: HarnessFor) -> None:
    first = harness_for(order_app("v1"))
    [old] = await _waiting_runs(first, 1)
    second = _swap(first, harness_for, order_app("patched"))
    [new] = await _waiting_runs(second, 1)

    report = await second.assert_replays()
    assert [(r.run_id, r.verdict) for r in sorted(report.results, key=lambda r: r.run_id != old)
            ] == [(old, "ok"), (new, "ok")]
    await second.run_until_idle()
    assert (second.record(old).result, second.record(new).result) == (
        "reserve first", "charge first")


def effects_app(marks: Path) -> App:
    """The flows of ``recorded_app`` whose every step and check leaves a file, then raises:
    a replay that called one would show."""
    app = App()

    def effect(name: str) -> Any:
        def call(*_args: Any) -> None:
            (marks / name).write_text("called")
            raise RuntimeError(f"{name} was called")
        return call

    @app.flow("timer")
    async def timer(ctx: Context) -> None:
        await ctx.step("before", effect("before"))
        await ctx.wait("pause", "1h")
        await ctx.step("after", effect("after"))

    @app.flow("poll")
    async def poll(ctx: Context) -> None:
        await ctx.wait_for_condition("settled", check=effect("check"), initial_state=False,
                                     strategy=WaitStrategy.fixed("1h"))

    @app.flow("ask")
    async def ask(ctx: Context) -> None:
        await ctx.ask("review", title="Review", outcomes=["ok"], timeout="1h")
        await ctx.step("after-review", effect("after-review"))

    @app.flow("event")
    async def event(ctx: Context) -> None:
        await ctx.wait_for_event("approval", "slack.approval", match={"message": "m"},
                                 timeout="1h")
        await ctx.step("after-event", effect("after-event"))

    return app


def recorded_app() -> App:
    """The same flows with harmless steps and checks: what recorded the runs."""
    app = App()

    @app.flow("timer")
    async def timer(ctx: Context) -> None:
        await ctx.step("before", lambda: "ok")
        await ctx.wait("pause", "1h")
        await ctx.step("after", lambda: "ok")

    def not_yet(state: bool, check: CheckContext) -> bool:
        return False

    @app.flow("poll")
    async def poll(ctx: Context) -> None:
        await ctx.wait_for_condition("settled", check=not_yet, initial_state=False,
                                     strategy=WaitStrategy.fixed("1h"))

    @app.flow("ask")
    async def ask(ctx: Context) -> None:
        await ctx.ask("review", title="Review", outcomes=["ok"], timeout="1h")
        await ctx.step("after-review", lambda: "ok")

    @app.flow("event")
    async def event(ctx: Context) -> None:
        await ctx.wait_for_event("approval", "slack.approval", match={"message": "m"},
                                 timeout="1h")
        await ctx.step("after-event", lambda: "ok")

    return app


def _stored(harness: Harness, runs: list[str]) -> dict[str, Any]:
    """Everything the store holds about ``runs``."""
    store = harness.engine.store
    return {"runs": [store.get_run(run) for run in runs],
            "history": [store.history(run) for run in runs],
            "journals": store.journals(runs),
            "tasks": store.list_tasks(state=None, limit=1000),
            "events": store.list_events(now=harness.clock.now(), limit=1000),
            "inbox": store.inbox(runs)}


async def test_a_replay_calls_nothing_and_writes_nothing(harness_for: HarnessFor,
                                                         tmp_path: Path) -> None:
    first = harness_for(recorded_app())
    runs = [first.start(flow) for flow in ("timer", "poll", "ask", "event")]
    await first.run_due()
    first.send("slack.approval", {"message": "m"})  # delivered: in the run's inbox, unread
    marks = tmp_path / "marks"
    marks.mkdir()
    second = _swap(first, harness_for, effects_app(marks))
    second.clock.set(second.clock.now() + timedelta(days=1))  # every wait is due: a resume
    before = _stored(second, runs)                            # would call the next steps

    report = await second.assert_replays()

    assert sorted((r.run_id, r.verdict) for r in report.results) == sorted(
        (run, "ok") for run in runs)
    assert list(marks.iterdir()) == []
    assert _stored(second, runs) == before


async def test_ended_runs_are_replayed_when_asked_for_and_yaml_runs_are_skipped(
        harness_for: HarnessFor) -> None:
    app = App()

    def refuse() -> None:
        raise RuntimeError("no stock")

    @app.flow("quick")
    async def quick(ctx: Context) -> str:
        await ctx.step("only", lambda: 1)
        return "done"

    @app.flow("broken")
    async def broken(ctx: Context) -> None:
        await ctx.step("refuse", refuse)

    @app.flow("order")
    async def order(ctx: Context) -> None:
        await ctx.wait("pause", "1d")

    harness = harness_for(app)
    done, failed, waiting = (harness.start(flow) for flow in ("quick", "broken", "order"))
    yaml = harness.start(harness.flow("flow: nap\nsteps:\n  - nap:\n      wait: { for: 1d }\n"))
    await harness.run_due()

    default = await harness.replay()
    assert ([r.run_id for r in default.results], default.skipped) == ([waiting], 1)
    assert default.summary() == ("replayed 1 run of Python flows: 0 would hit nondeterminism, "
                                 "0 would fail otherwise; 1 run of YAML flows skipped (a YAML "
                                 "run resumes on the definition it started with)")
    ended = await harness.replay(statuses=[RunStatus.SUCCEEDED, RunStatus.FAILED])
    assert sorted((r.run_id, r.status, r.verdict) for r in ended.results) == sorted(
        [(done, "succeeded", "ok"), (failed, "failed", "ok")])
    assert [r.run_id for r in (await harness.replay(flow="quick",
                                                    statuses=[RunStatus.SUCCEEDED])).results
            ] == [done]
    named = await harness.replay([yaml, waiting])
    assert [(r.run_id, r.verdict) for r in named.results] == [(yaml, "skipped"),
                                                              (waiting, "ok")]
    assert named.results[0].message == (
        "a YAML flow's run resumes on the definition it started with, whatever the flow files "
        "say now: there is nothing to replay")


async def test_a_flow_gone_from_the_app_or_code_that_raises_now_fails_the_replay(
        harness_for: HarnessFor) -> None:
    first = harness_for(order_app("v1"))
    [run_id] = await _waiting_runs(first, 1)
    empty = _swap(first, harness_for, App())
    assert (await empty.replay()).results == (ReplayResult(
        run_id, "order", "waiting", "failed",
        "the run's flow is the Python flow 'order', but no app is configured (set [tarry] "
        "app = \"module:attribute\")"),)

    raising = App()

    @raising.flow("order")
    async def order(ctx: Context) -> None:
        raise ValueError("the new code is broken")

    assert (await _swap(first, harness_for, raising).replay()).results == (ReplayResult(
        run_id, "order", "waiting", "failed",
        "exception: ValueError: the new code is broken"),)


async def test_assert_replays_reads_a_store_by_its_url(harness_for: HarnessFor,
                                                       store_url: str) -> None:
    first = harness_for(order_app("v1"))
    [run_id] = await _waiting_runs(first, 1)
    report = await assert_replays(order_app("patched"), store_url)
    assert [r.run_id for r in report.results] == [run_id]
    with pytest.raises(ReplayFailed, match=exactly(
            "some runs would fail on their next resume with this code:\n"
            f"{run_id} (order, waiting): nondeterminism at reserve: {REORDERED}\n"
            "replayed 1 run of Python flows: 1 would hit nondeterminism, 0 would fail "
            "otherwise")):
        await assert_replays(order_app("reordered"), store_url, runs=[run_id])


class _ChangedWhileRead:
    """The test's store, through which the first journal read lets another process change
    the run (what a worker's checkpoint between the two readings does)."""

    def __init__(self, store: Store, change: Callable[[], object]) -> None:
        self._store = store
        self._change: Callable[[], object] | None = change

    def journals(self, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        read = self._store.journals(run_ids)
        if self._change is not None:
            self._change()
            self._change = None
        return read

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


async def test_a_run_that_changes_while_it_is_read_is_read_again(
        harness_for: HarnessFor, store_factory: Callable[[], Store]) -> None:
    first = harness_for(order_app("v1"))
    [run_id] = await _waiting_runs(first, 1)
    other = store_factory()  # another process
    store = _ChangedWhileRead(first.engine.store, lambda: other.cancel(
        run_id, "ops", first.clock.now() + timedelta(seconds=1)))
    report = await replay_runs(cast(Store, store), first.engine.catalog,
                               now=first.clock.now())
    # listed waiting, read again once cancelled: replayed as it is now
    assert [(r.run_id, r.status, r.verdict) for r in report.results] == [
        (run_id, "cancelled", "ok")]

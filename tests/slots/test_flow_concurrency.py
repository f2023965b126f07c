"""A flow's ``concurrency``: at most ``limit`` runs per key past their start and not ended;
the others wait before their first step, first come first served, and are woken by the
transaction that frees a slot, however the holder ends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tarry.actions import ActionContext, StepFailure
from tarry.cli.render import short_wait
from tarry.engine.slots import flow_slot_key
from tarry.model import RunStatus, SlotClaim
from tarry.store.sqlstore import SqlStore
from tarry.testing import Harness

DEPLOY = """
flow: deploy
inputs:
  repo: { type: string, required: true }
concurrency: { key: "{{ repo }}", limit: 1 }
steps:
  - settle: { wait: { for: 1h } }
  - done: { log: { message: "deployed {{ repo }}" } }
"""


def _status(harness: Harness, run_id: str) -> RunStatus:
    return harness.record(run_id).status


async def test_one_run_per_key_and_the_next_starts_when_it_ends(tmp_path: Path,
                                                                store_url: str) -> None:
    with Harness(tmp_path, store_url=store_url) as harness:
        flow = harness.flow(DEPLOY)
        web = [harness.start(flow, {"repo": "web"}) for _ in range(3)]
        other = harness.start(flow, {"repo": "api"})
        await harness.run_due()  # claimed together: which one asks first is the worker's
        assert harness.history_kinds(other)[-1] == "wait.registered"  # another key: free
        [first] = [run for run in web if "slot.taken" in harness.history_kinds(run)]
        queued = sorted((run for run in web if run != first),
                        key=lambda run: harness.document(run)["waiting_for"]["ahead"])
        second, third = queued
        second_doc = harness.document(second)
        assert second_doc["status"] == RunStatus.WAITING
        assert {k: second_doc["waiting_for"][k] for k in ("kind", "key", "ahead", "step")} == {
            "kind": "slot", "key": "web", "ahead": 0, "step": None}
        assert harness.document(third)["waiting_for"]["ahead"] == 1
        assert harness.record(second).due_at is None  # woken by the release, never polled
        assert "started" not in harness.history_kinds(second)

        await harness.advance(timedelta(hours=1))  # first ends; second starts in its place
        assert _status(harness, first) is RunStatus.SUCCEEDED
        kinds = harness.history_kinds(second)
        assert kinds[kinds.index("slot.queued"):][:3] == ["slot.queued", "slot.taken",
                                                          "started"]
        assert _status(harness, second) is RunStatus.WAITING
        assert harness.document(second)["waiting_for"]["kind"] == "timer"
        assert harness.document(third)["waiting_for"]["ahead"] == 0

        await harness.advance(timedelta(hours=1))
        await harness.advance(timedelta(hours=1))
        assert {_status(harness, run) for run in (*web, other)} == {RunStatus.SUCCEEDED}


async def test_a_cancelled_holder_frees_its_slot_and_a_cancelled_waiter_leaves_the_queue(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, store_url=store_url) as harness:
        flow = harness.flow(DEPLOY)
        runs = [harness.start(flow, {"repo": "web"}) for _ in range(3)]
        await harness.run_due()
        first, second, third = sorted(runs, key=lambda run: (
            harness.document(run)["waiting_for"].get("ahead") or 0,
            harness.document(run)["waiting_for"]["kind"] == "slot"))
        harness.engine.cancel(second, by="ops")
        assert harness.document(third)["waiting_for"]["ahead"] == 0
        harness.engine.cancel(first, by="ops")
        assert harness.record(third).due_at is not None  # handed the slot, due now
        await harness.run_due()
        assert harness.document(third)["waiting_for"]["kind"] == "timer"


FLAKY = """
flow: flaky
concurrency: { limit: 1 }
steps:
  - work: { flaky: {} }
"""


async def test_a_failed_holder_frees_its_slot_and_a_retry_queues_again(
        tmp_path: Path, store_url: str) -> None:
    calls: list[str] = []

    async def flaky(args: dict[str, Any], ctx: ActionContext) -> dict[str, Any]:
        calls.append(ctx.run_id)
        if len(calls) == 1:
            raise StepFailure("down")
        return {}

    with Harness(tmp_path, store_url=store_url, actions={"flaky": flaky}) as harness:
        flow = harness.flow(FLAKY)
        runs = [harness.start(flow), harness.start(flow)]
        await harness.run_due()
        await harness.run_due()  # the failure handed the one slot to the other
        [first] = [run for run in runs if _status(harness, run) is RunStatus.FAILED]
        [second] = [run for run in runs if run != first]
        assert _status(harness, second) is RunStatus.SUCCEEDED
        assert calls == [first, second]
        harness.engine.retry(first, by="ops")
        await harness.run_due()
        assert _status(harness, first) is RunStatus.SUCCEEDED
        assert harness.history_kinds(first).count("slot.taken") == 2


HELD = """
flow: held
hold:
  - after: "2026-01-01T10:00:00Z"
concurrency: { limit: 1 }
steps:
  - nap: { wait: { for: 1h } }
"""


async def test_a_held_run_takes_its_slot_only_once_its_hold_clears(tmp_path: Path,
                                                                   store_url: str) -> None:
    with Harness(tmp_path, store_url=store_url,
                 start=datetime(2026, 1, 1, 9, 0, tzinfo=UTC)) as harness:
        flow = harness.flow(HELD)
        held = harness.start(flow)
        await harness.run_due()
        assert _status(harness, held) is RunStatus.HELD
        assert "slot.taken" not in harness.history_kinds(held)
        await harness.advance(timedelta(hours=1))
        kinds = harness.history_kinds(held)
        assert kinds.index("hold.cleared") < kinds.index("slot.taken") < kinds.index("started")


async def test_a_key_that_does_not_render_fails_the_run_with_a_clear_error(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, store_url=store_url) as harness:
        flow = harness.flow(DEPLOY)
        run_id = harness.start(flow, {"repo": ""})
        await harness.run_due()
        assert harness.document(run_id)["error"] == {
            "type": "expression", "step": None,
            "message": "concurrency key: the concurrency key must render to 1 to 512 "
                       "characters, got 0: {{ repo }}"}


async def test_the_explanation_names_the_key_its_queue_and_its_holders(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, store_url=store_url) as harness:
        flow = harness.flow(DEPLOY)
        runs = [harness.start(flow, {"repo": "web"}) for _ in range(2)]
        await harness.run_due()
        [second] = [run for run in runs if harness.document(run)["waiting_for"]["kind"] == "slot"]
        [first] = [run for run in runs if run != second]
        waiting = harness.document(second)["waiting_for"]
        assert waiting["holders"] == [first]
        assert waiting["explanation"] == (
            f'waiting for a slot of concurrency key "web" (0 ahead in the queue), held by '
            f"{first} since {waiting['since']}; then starts its first step once a run of the "
            "key ends")


def test_the_runs_table_says_which_key_and_how_many_are_ahead() -> None:
    assert short_wait({"kind": "slot", "key": "acme/web", "ahead": 2, "until": None,
                       "step": None}) == "slot acme/web (2 ahead)"
    assert short_wait({"kind": "slot", "key": "vendor-api", "ahead": 0, "until": None,
                       "step": "calls[3].call"}) == "slot vendor-api (0 ahead)"


async def test_a_run_failed_as_crashed_before_it_noted_its_slot_still_gives_it_back(
        tmp_path: Path, store_url: str) -> None:
    """A worker took the run's slot and died before its first checkpoint, again and again:
    the run is failed as crashed, and its slot goes to the next run all the same."""
    with Harness(tmp_path, store_url=store_url) as harness:
        flow = harness.flow(DEPLOY)
        crashing = harness.start(flow, {"repo": "web"})
        store = harness.engine.store
        now = harness.clock.now()
        assert store.take_slot(SlotClaim(flow_slot_key("deploy", "web"), crashing, 1), now
                               ).granted
        assert isinstance(store, SqlStore)
        with store._transaction(write=True) as tx:  # as the last of its dead workers left it
            tx.cursor.execute(
                "UPDATE runs SET status = 'running', lease_owner = 'dead', recoveries = 9 "
                f"WHERE id = '{crashing}'")
        waiting = harness.start(flow, {"repo": "web"})
        await harness.run_due()
        await harness.run_due()
        assert harness.document(crashing)["error"]["type"] == "crashed"
        assert harness.document(waiting)["waiting_for"]["kind"] == "timer"  # it got the slot

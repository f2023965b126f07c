"""A flow's ``concurrency``: at most ``limit`` runs per key past their start and not ended;
the others wait before their first step, first come first served, and are woken by the
transaction that frees a slot, however the holder ends."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tarry.model import RunStatus
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
        first = harness.start(flow, {"repo": "web"})
        second = harness.start(flow, {"repo": "web"})
        third = harness.start(flow, {"repo": "web"})
        other = harness.start(flow, {"repo": "api"})
        await harness.run_due()
        await harness.run_due()
        assert harness.history_kinds(first)[-1] == "wait.registered"
        assert harness.history_kinds(other)[-1] == "wait.registered"  # another key: free
        second_doc = harness.document(second)
        assert second_doc["status"] == RunStatus.WAITING
        assert second_doc["waiting_for"]["kind"] == "slot"
        assert second_doc["waiting_for"]["key"] == "web"
        assert second_doc["waiting_for"]["ahead"] == 0
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
        assert {_status(harness, run) for run in (first, second, third, other)} == {
            RunStatus.SUCCEEDED}


async def test_a_cancelled_holder_frees_its_slot_and_a_cancelled_waiter_leaves_the_queue(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, store_url=store_url) as harness:
        flow = harness.flow(DEPLOY)
        first, second, third = (harness.start(flow, {"repo": "web"}) for _ in range(3))
        await harness.run_due()
        harness.engine.cancel(second, by="ops")
        assert harness.document(third)["waiting_for"]["ahead"] == 0
        harness.engine.cancel(first, by="ops")
        assert harness.record(third).due_at is not None  # handed the slot, due now
        await harness.run_due()
        assert harness.document(third)["waiting_for"]["kind"] == "timer"

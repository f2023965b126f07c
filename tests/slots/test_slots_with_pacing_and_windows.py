"""A flow's ``concurrency`` beside a ``throttle`` or a ``window`` on the same flow: a run
waits for its throttle's turn, or for its window to open, without holding a slot of its key
(the slot is asked for once that wait is over), and a run queued for a slot never takes a
second throttle turn. On SQLite and PostgreSQL, on a virtual clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from tarry.engine.slots import flow_slot_key
from tarry.language.calendars import Calendar, parse_hours
from tarry.model import RunStatus
from tarry.store.sqlstore import SqlStore
from tarry.testing import Harness

THROTTLED = """
flow: deploy
inputs:
  repo: { type: string, required: true }
throttle: { key: "{{ repo }}", limit: 1, per: 1h }
concurrency: { key: "{{ repo }}", limit: 1 }
steps:
  - settle: { wait: { for: 3h } }
"""

WINDOWED = """
flow: deploy
inputs:
  repo: { type: string, required: true }
window: deploy
concurrency: { key: "{{ repo }}", limit: 1 }
steps:
  - settle: { wait: { for: 1h } }
"""

BERLIN = ZoneInfo("Europe/Berlin")
DEPLOY = Calendar("deploy", BERLIN, parse_hours({"tue-thu": "10:00-16:00"}))
MONDAY_NOON = datetime(2026, 12, 7, 12, 0, tzinfo=BERLIN).astimezone(UTC)
START = datetime(2026, 12, 8, 9, 0, tzinfo=UTC)


def _holders(harness: Harness, key: str) -> list[str]:
    store = harness.engine.store
    assert isinstance(store, SqlStore)
    return list(store.slot_view(flow_slot_key("deploy", key), "nobody").holders)


async def test_a_run_waiting_for_its_throttle_turn_holds_no_slot_and_takes_one_turn(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=START, store_url=store_url) as harness:
        flow = harness.flow(THROTTLED)
        first = harness.start(flow, {"repo": "web"})
        await harness.run_due()
        second = harness.start(flow, {"repo": "web"})
        await harness.run_due()
        assert harness.document(second)["waiting_for"]["kind"] == "throttle"
        assert _holders(harness, "web") == [first]  # the throttled run holds no slot

        await harness.advance(timedelta(hours=1))  # its turn: the slot is still taken
        doc = harness.document(second)
        assert (doc["status"], doc["waiting_for"]["kind"]) == (RunStatus.WAITING, "slot")
        assert harness.record(second).due_at is None

        await harness.advance(timedelta(hours=2))  # the first ends, the second starts
        assert harness.record(first).status is RunStatus.SUCCEEDED
        kinds = harness.history_kinds(second)
        assert kinds.count("throttle") == 1  # queued for the slot, it took no second turn
        assert kinds[kinds.index("slot.queued"):][:3] == ["slot.queued", "slot.taken",
                                                          "started"]
        assert _holders(harness, "web") == [second]
        await harness.advance(timedelta(hours=3))
        assert harness.record(second).status is RunStatus.SUCCEEDED
        assert _holders(harness, "web") == []


async def test_a_run_held_by_its_window_holds_no_slot_until_the_window_opens(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=MONDAY_NOON, store_url=store_url,
                 calendars={"deploy": DEPLOY}) as harness:
        flow = harness.flow(WINDOWED)
        runs = [harness.start(flow, {"repo": "web"}) for _ in range(2)]
        await harness.run_due()
        for run in runs:  # Monday: both wait for Tuesday 10:00, neither holds the slot
            assert harness.document(run)["waiting_for"]["kind"] == "window"
            assert "slot.taken" not in harness.history_kinds(run)
        assert _holders(harness, "web") == []

        await harness.advance(timedelta(hours=22))  # Tuesday 10:00: one starts, one queues
        kinds = sorted(harness.document(run)["waiting_for"]["kind"] for run in runs)
        assert kinds == ["slot", "timer"]
        [holder] = [run for run in runs if harness.document(run)["waiting_for"]["kind"]
                    == "timer"]
        assert _holders(harness, "web") == [holder]

        await harness.advance(timedelta(hours=1))  # the holder ends; the other starts
        await harness.advance(timedelta(hours=1))
        assert {harness.record(run).status for run in runs} == {RunStatus.SUCCEEDED}
        assert _holders(harness, "web") == []

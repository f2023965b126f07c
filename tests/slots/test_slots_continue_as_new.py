"""A run holding its flow's slot that continues as new ends there: the transaction that ends
it gives the slot back (handed to the oldest run waiting for it), and the successor it
creates asks for a slot of its own, behind the runs already queued. On SQLite and
PostgreSQL.

Python flows declare no ``concurrency`` today; the test gives one flow a definition with
it, so that the store's ending path of continue-as-new is proven to hand slots over."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tarry import App, Context
from tarry.language.model import Concurrency, Position
from tarry.model import RunStatus
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def serial_app() -> App:
    """``rounds``: waits an hour, then continues as new until its second round is done; at
    most one run of it past its start at a time."""
    app = App()

    @app.flow("rounds")
    async def rounds(ctx: Context, name: str, round: int = 1) -> int:
        await ctx.wait("soak", "1h")
        if round < 2:
            ctx.continue_as_new(name=name, round=round + 1)
        return round

    registered = app._flows["rounds"]
    app._flows["rounds"] = dataclasses.replace(registered, definition=dataclasses.replace(
        registered.definition, concurrency=Concurrency(None, 1, Position("rounds", 1, 1))))
    return app


async def test_a_run_continued_as_new_hands_its_slot_on_and_its_successor_queues(
        tmp_path: Path, store_url: str) -> None:
    with Harness(tmp_path, start=START, app=serial_app(), store_url=store_url) as harness:
        first = harness.start("rounds", {"name": "a"})
        await harness.run_due()
        other = harness.start("rounds", {"name": "b"})
        await harness.run_due()
        assert harness.document(other)["waiting_for"]["kind"] == "slot"

        await harness.advance(timedelta(hours=1))  # first ends as continued: b gets the slot
        record = harness.record(first)
        assert (record.status, record.exit) == (RunStatus.SUCCEEDED, "continued")
        [successor] = harness.chain(first)[1:]
        assert harness.document(other)["waiting_for"]["kind"] == "timer"
        doc = harness.document(successor)
        assert (doc["status"], doc["waiting_for"]["kind"]) == (RunStatus.WAITING, "slot")
        assert harness.record(successor).due_at is None

        await harness.advance(timedelta(hours=1))  # b continues as new: a's successor next
        [other_next] = harness.chain(other)[1:]
        assert harness.document(successor)["waiting_for"]["kind"] == "timer"
        assert harness.document(other_next)["waiting_for"]["kind"] == "slot"

        await harness.advance(timedelta(hours=1))
        await harness.advance(timedelta(hours=1))
        assert harness.record(successor).result == 2
        assert harness.record(other_next).status is RunStatus.SUCCEEDED

"""Replies of different types racing for one ``any:`` wait, sent at the same moment from
several processes' engines: one is delivered, the others are buffered (SPEC 3.5.11)."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from tarry.model import EventRecord, EventState
from tarry.testing import Harness

CHANNELS = ("email", "portal", "sms", "chat")
MANIFESTS = "events:\n" + "".join(f"  {name}.reply:\n    correlate_on: [ticket]\n"
                                  for name in CHANNELS)
FLOW = """
flow: multichannel
steps:
  - reply:
      wait_for:
        any:
""" + "".join(f"          - {{ event: {name}.reply, match: {{ ticket: \"T1\" }} }}\n"
              for name in CHANNELS) + """      timeout: 1d
"""


async def test_concurrent_replies_to_one_any_wait_deliver_one(tmp_path: Path,
                                                              store_url: str) -> None:
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    with Harness(tmp_path, start=start, manifests=MANIFESTS, store_url=store_url) as harness:
        run_id = harness.start(harness.flow(FLOW))
        await harness.run_due()
        senders = [Harness(tmp_path / name, start=start, manifests=MANIFESTS,
                           store_url=store_url) for name in CHANNELS]
        sent: list[EventRecord] = []
        barrier = threading.Barrier(len(senders))

        def send(sender: Harness, channel: str) -> None:
            barrier.wait()
            sent.append(sender.send(f"{channel}.reply", {"ticket": "T1"}))

        threads = [threading.Thread(target=send, args=pair)
                   for pair in zip(senders, CHANNELS, strict=True)]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            for sender in senders:
                sender.close()
        assert sorted((e.state, e.runs) for e in sent) == [
            (EventState.BUFFERED, ())] * 3 + [(EventState.DELIVERED, (run_id,))]
        assert len(harness.engine.store.inbox([run_id])[run_id]) == 1


def _execute(url: str, statement: str) -> None:
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            connection.execute(statement)
        return
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(statement.encode())


async def test_a_wait_registered_by_an_earlier_release_keeps_its_rule(
        tmp_path: Path, store_url: str) -> None:
    """A wait registered before the race rule (first_wins false, the column's default) still
    takes every reply, and its run goes on as it did: the first counts, the second is
    ignored."""
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    with Harness(tmp_path, start=start, manifests=MANIFESTS, store_url=store_url) as harness:
        run_id = harness.start(harness.flow(FLOW))
        await harness.run_due()
        _execute(store_url, "UPDATE event_waits SET first_wins = false")
        first = harness.send("email.reply", {"ticket": "T1", "n": 1})
        second = harness.send("portal.reply", {"ticket": "T1", "n": 2})
        assert first.runs == second.runs == (run_id,)
        await harness.run_due()
        assert harness.document(run_id)["bindings"]["reply"]["event"]["n"] == 1
        assert harness.history_kinds(run_id).count("event.ignored") == 1

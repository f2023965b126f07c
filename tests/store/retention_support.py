"""What the retention tests share: a project's worth of runs and events at known ages, and a
count of every row a run owns, read straight from the database (SQLite or PostgreSQL)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg

from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """
events:
  reply:
    correlate_on: [key]
    buffer: 90d
  note:
    correlate_on: [key]
"""

FLOWS = {
    "quick": "flow: quick\nsteps:\n  - a: { set: { x: 1 } }\n  - b: { set: { y: 2 } }\n",
    "asks": ("flow: asks\nsteps:\n  - approve:\n      ask: { title: Approve?, "
             "outcomes: [go] }\n      timeout: 365d\n"),
    "replies": ("flow: replies\ninputs: { key: {} }\nsteps:\n  - hear:\n      wait_for: reply\n"
                "      match: { key: '{{ key }}' }\n      timeout: 365d\n"),
}

RUN_TABLES = ("runs", "history", "run_journal", "tasks", "inbox", "event_waits")
"""Every table holding rows of a run (by ``id`` in runs, ``run_id`` in the others)."""


@dataclass
class Scene:
    """Runs and events created at known instants: ``old_*`` 40 days before ``now``,
    ``new_*`` at ``now``."""

    old_ended: list[str]
    new_ended: list[str]
    old_waiting: list[str]
    old_delivered: list[str]
    old_buffered: str
    old_unmatched: str
    old_invalid: str
    new_unmatched: str
    now: datetime


async def stage(harness: Harness, ended: int = 5) -> Scene:
    """Create the scene on ``harness`` (its clock ends 40 days after :data:`START`)."""
    flows = {name: harness.flow(text) for name, text in FLOWS.items()}
    old_ended = [harness.start(flows["quick"]) for _ in range(ended)]
    old_waiting = [harness.start(flows["asks"]), harness.start(flows["replies"], {"key": "w"})]
    delivered_to = [harness.start(flows["replies"], {"key": f"d{i}"}) for i in range(2)]
    await harness.run_due()
    delivered = [harness.send("reply", {"key": f"d{i}"}).id for i in range(2)]
    await harness.run_due()
    buffered = harness.send("reply", {"key": "nobody-yet"}).id  # buffered 90 days
    unmatched = harness.send("note", {"key": "nobody"}).id
    invalid = harness.send("note", {"wrong": 1}).id
    await harness.advance(timedelta(days=40))
    new_ended = [harness.start(flows["quick"]) for _ in range(2)]
    new_unmatched = harness.send("note", {"key": "nobody"}).id
    await harness.run_due()
    return Scene(old_ended + delivered_to, new_ended, old_waiting, delivered, buffered,
                 unmatched, invalid, new_unmatched, harness.clock.now())


def row_counts(url: str, run_ids: Iterable[str]) -> dict[str, int]:
    """How many rows each table of :data:`RUN_TABLES` holds for ``run_ids``."""
    ids = list(run_ids)
    mark = "?" if url.startswith("sqlite") else "%s"
    marks = ", ".join([mark] * len(ids))
    counts = {}
    for table in RUN_TABLES:
        column = "id" if table == "runs" else "run_id"
        counts[table] = _scalar(url, f"SELECT count(*) FROM {table} WHERE {column} IN ({marks})",
                                ids)
    return counts


def history_per_run(url: str, run_ids: Iterable[str]) -> dict[str, int]:
    """For each of ``run_ids`` that still has a row, how many history entries it has."""
    wanted = set(run_ids)
    found = _rows(url, "SELECT runs.id, (SELECT count(*) FROM history WHERE run_id = runs.id) "
                       "FROM runs", [])
    return {str(run_id): int(str(count)) for run_id, count in found if run_id in wanted}


def event_ids(url: str) -> set[str]:
    """The ids of every stored event."""
    return {str(row[0]) for row in _rows(url, "SELECT id FROM events", [])}


def _scalar(url: str, sql: str, params: list[str]) -> int:
    return int(_rows(url, sql, params)[0][0])


def _rows(url: str, sql: str, params: list[str]) -> list[tuple[object, ...]]:
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            return connection.execute(sql, params).fetchall()
    with psycopg.connect(url) as connection:
        return connection.execute(sql.encode(), params).fetchall()

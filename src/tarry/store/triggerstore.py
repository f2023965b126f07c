"""Triggers over named queries, the same statements on every SQL backend.

- **Runs an event starts** are inserted in the transaction that records the event, so an
  event is never recorded without its starts nor a start made for an event that was not
  recorded; a duplicate event (same id) starts nothing, as it delivers nothing.
- **Schedules** are rows due at their next occurrence. Firing one advances its
  ``handled_until`` only from the value the worker read (compare and set), and every
  occurrence has a unique key, so across any number of workers each occurrence is created
  once. A held occurrence still held when the next one is created is refused
  ``hold-superseded`` in that same transaction.

A held start goes through the hold markers like any held start (``holdstore``): a sibling of
the same flow and target that is held, or cleared recently, supersedes it, and it is inserted
refused instead. Every function runs inside the caller's transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from tarry.clock import from_millis, to_millis
from tarry.model import HistoryEntry, NewRun, RunStatus, ScheduleFiring, ScheduleRecord
from tarry.store import holdstore, rows, runstore

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["SUPERSEDED", "due", "fire", "insert_starts", "note_started", "sync"]

SUPERSEDED = "hold-superseded"
"""The refusal token of a held start that a sibling supersedes."""

Start = tuple[NewRun, Sequence[HistoryEntry]]


def insert_starts(tx: Tx, starts: Sequence[Start], now: datetime,
                  recent_since: datetime) -> list[str]:
    """Insert each run (a held one unless a sibling supersedes it: then refused); the ids."""
    for run, history in starts:
        if run.status is RunStatus.HELD:
            sibling = holdstore.create_held(tx, run, list(history), recent_since)
            if sibling is not None:
                runstore.insert_runs(tx, [_superseded(run, history, sibling, now)])
        else:
            runstore.insert_runs(tx, [(run, history)])
    return [run.id for run, _ in starts]


def note_started(tx: Tx, event_type: str, event_id: str, run_ids: Sequence[str]) -> None:
    """Record on the event which runs it started."""
    if run_ids:
        tx.many("set_event_started", [{"type": event_type, "id": event_id,
                                       "started": json.dumps(list(run_ids))}])


def sync(tx: Tx, schedules: Sequence[tuple[str, str, datetime]], now: datetime) -> None:
    """Make the stored schedules exactly ``schedules`` (key, flow, first occurrence): new
    ones are handled up to ``now``; those no flow declares any more are dropped."""
    wanted = {key for key, _, _ in schedules}
    for row in tx.all("schedule_keys"):
        if row["key"] not in wanted:
            tx.run("drop_schedule", {"key": row["key"]})
    tx.many("add_schedule", [{"key": key, "flow": flow, "handled_until": to_millis(now),
                              "next_at": to_millis(next_at)}
                             for key, flow, next_at in schedules])


def due(tx: Tx, now: datetime, limit: int) -> list[ScheduleRecord]:
    """The schedules whose next occurrence is at or before ``now``, earliest first."""
    return [ScheduleRecord(key=row["key"], flow=row["flow"],
                           handled_until=from_millis(row["handled_until"]),
                           next_at=from_millis(row["next_at"]))
            for row in tx.all("due_schedules", {"now": to_millis(now), "limit": limit})]


def fire(tx: Tx, firing: ScheduleFiring, now: datetime) -> bool:
    """Advance the schedule (as read) and create the firing's starts, oldest first, each
    superseding the occurrences still held before it; False, changing nothing, when
    another worker advanced the schedule first."""
    schedule = firing.schedule
    advanced = tx.run("advance_schedule", {"key": schedule.key,
                                           "expected": to_millis(schedule.handled_until),
                                           "handled_until": to_millis(firing.handled_until),
                                           "next_at": to_millis(firing.next_at)})
    if advanced == 0:
        return False
    for start in firing.starts:
        _supersede_held(tx, schedule.key, start.run.id, now)
        insert_starts(tx, [(start.run, start.history)], now, firing.supersede_since)
        tx.run("insert_occurrence", {"key": start.occurrence, "schedule": schedule.key,
                                     "run_id": start.run.id,
                                     "scheduled_at": to_millis(start.scheduled_at)})
    return True


def _supersede_held(tx: Tx, schedule: str, successor: str, now: datetime) -> None:
    """Refuse the occurrences of ``schedule`` still held: ``successor`` takes their place."""
    for row in tx.all("held_occurrences", {"schedule": schedule}):
        if tx.run("refuse_held_run", {"id": row["run_id"], "reason": SUPERSEDED,
                                      "now": to_millis(now)}):
            entry = HistoryEntry(now, "refused", None, {"reason": SUPERSEDED,
                                                        "successor": successor})
            tx.insert("insert_history", rows.history_params(row["run_id"], [entry]))


def _superseded(run: NewRun, history: Sequence[HistoryEntry], sibling: str,
                now: datetime) -> Start:
    """``run`` refused because ``sibling`` holds its place."""
    refused = replace(run, status=RunStatus.REFUSED, due_at=None, waiting_for=None,
                      reason=SUPERSEDED)
    entry = HistoryEntry(now, "refused", None, {"reason": SUPERSEDED, "sibling": sibling})
    return refused, [*history, entry]

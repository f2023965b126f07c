"""Pacing starts over named queries, the same statements on every SQL backend.

Both decisions hold across the whole fleet because they are made in the store, under a lock
per key (PostgreSQL: an advisory lock; SQLite: its one writer):

- **Throttle turns.** A run of a throttled flow takes its turn (:func:`take_turn`) before
  its first step: the key's latest turns are read under the key's lock, the next one is
  computed (:func:`tarry.pacing.throttle_turn`) and stored. Turns older than the period
  are forgotten at the same time, so a key keeps at most ``limit`` rows that matter.
- **Debounced bursts.** An event of a debounced trigger is gathered, in the transaction
  that records it, into its key's open burst (:func:`debounce`): the burst's run, still
  pending and not yet due, takes the event's inputs and target and is put off; when there
  is no such run (none yet, or it started already), the event opens a burst with a new
  pending run due ``period`` later. The run starts like any due run: claimed once, by one
  worker, at its instant.

Every function runs inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from tarry.clock import from_millis, iso, to_millis
from tarry.model import DebouncedStart, DebounceRecord, HistoryEntry, ThrottleKey
from tarry.pacing import debounce_fire_at, throttle_turn
from tarry.store import rows, runstore

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["DEBOUNCED", "debounce", "lock_debounces", "pending_debounces", "take_turn"]

DEBOUNCED = "debounced"
"""The history entry of a pending run that a later event of its burst put off."""


def take_turn(tx: Tx, throttle: ThrottleKey, run_id: str, now: datetime) -> datetime:
    """Take the next turn of the ``throttle`` key for ``run_id``: the instant it may run its
    first step (``now`` when fewer than its limit of turns fell within its period)."""
    params = {"flow": throttle.flow, "key": throttle.key}
    tx.take("lock_throttle_key", [params])
    tx.run("forget_throttle_turns", {**params, "before": to_millis(now - throttle.per)})
    recent = [from_millis(row["turn"]) for row in tx.all("recent_throttle_turns",
                                                         {**params, "limit": throttle.limit})]
    turn = throttle_turn(recent, throttle.limit, throttle.per, now)
    tx.run("insert_throttle_turn", {**params, "turn": to_millis(turn), "run_id": run_id})
    return turn


def lock_debounces(tx: Tx, starts: Iterable[DebouncedStart]) -> None:
    """Lock the burst of each of ``starts``, sorted (queued: they go out with the next read),
    so that two transactions gathering events of the same keys never deadlock."""
    tx.take("lock_debounce_key", [{"trigger": trigger, "key": key} for trigger, key in sorted(
        {(start.trigger, start.key) for start in starts})])


def debounce(tx: Tx, start: DebouncedStart, received_at: datetime, now: datetime) -> str:
    """Gather the event received at ``received_at`` into its key's open burst, or open one;
    the id of the burst's run."""
    key = {"trigger": start.trigger, "key": start.key}
    tx.take("lock_debounce_key", [key])
    found = tx.one("find_debounce", key)
    if found is not None:
        burst = record_from_row(found)
        fire_at = debounce_fire_at(burst.first_at, received_at, start.period,
                                   start.max_delay)
        if tx.run("debounce_run", {"id": burst.run_id, "inputs": rows.json_text(
                start.run.inputs if start.run.inputs_json is None else start.run.inputs_json),
                                   "target": start.run.target, "due_at": to_millis(fire_at),
                                   "now": to_millis(now),
                                   "received_at": to_millis(received_at)}):
            _save(tx, replace(burst, last_at=received_at, fire_at=fire_at,
                              events=burst.events + 1))
            entry = HistoryEntry(now, DEBOUNCED, None, {
                **{name: value for name, value in start.history[0].data.items()
                   if name in ("event_type", "event_id")},
                "until": iso(fire_at), "events": burst.events + 1})
            tx.insert("insert_history", rows.history_params(burst.run_id, [entry]))
            return burst.run_id
    fire_at = debounce_fire_at(received_at, received_at, start.period, start.max_delay)
    run = replace(start.run, due_at=fire_at)
    runstore.insert_runs(tx, [(run, start.history)])
    _save(tx, DebounceRecord(trigger=start.trigger, key=start.key, flow=run.flow,
                             run_id=run.id, first_at=received_at, last_at=received_at,
                             fire_at=fire_at, events=1))
    return run.id


def pending_debounces(tx: Tx, now: datetime, limit: int) -> list[DebounceRecord]:
    """The bursts whose run starts after ``now``, soonest first."""
    return [record_from_row(row)
            for row in tx.all("pending_debounces", {"now": to_millis(now), "limit": limit})]


def _save(tx: Tx, burst: DebounceRecord) -> None:
    tx.run("save_debounce", {"trigger": burst.trigger, "key": burst.key, "flow": burst.flow,
                             "run_id": burst.run_id, "first_at": to_millis(burst.first_at),
                             "last_at": to_millis(burst.last_at),
                             "fire_at": to_millis(burst.fire_at), "events": burst.events})


def record_from_row(row: rows.Row) -> DebounceRecord:
    """A ``debounces`` row as a :class:`DebounceRecord`."""
    return DebounceRecord(trigger=row["trigger"], key=row["key"], flow=row["flow"],
                          run_id=row["run_id"], first_at=from_millis(row["first_at"]),
                          last_at=from_millis(row["last_at"]),
                          fire_at=from_millis(row["fire_at"]), events=int(row["events"]))

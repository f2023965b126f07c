"""Event delivery over named queries, the same statements on every SQL backend.

Every function runs inside the caller's transaction, so an event's record, its delivery into
run inboxes and the wake of those runs commit together. Delivery and wait registration take
the same per-correlation lock first (``lock_keys``), so an event and a wait that
arrive at the same moment always meet: one of them sees the other.

A race has one winner: a branch whose wait is settled by its first event
(``EventWait.first_wins``) and already holds one is not delivered another; that event is
handled as if the wait had ended (buffered or unmatched). The event index keeps the rule with
each wait (``first_wins``); a wait registered by an earlier release keeps the rule it was
registered with (it takes every reply).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tarry.clock import from_millis, to_millis
from tarry.errors import EventNotFound, EventStateError
from tarry.model import (
    EventRecord,
    EventState,
    EventWait,
    InboxEvent,
    NewEvent,
    RunUpdate,
    TriggerStarts,
)
from tarry.store import holdstore, pacingstore, triggerstore
from tarry.store.rows import Row, json_text, stored_value

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["WaitChanges", "deliver_new", "discard", "find_by_id", "inbox_event", "inbox_of",
           "lock_correlations", "plan_wait_changes", "rebuffer_inbox", "record_from_row",
           "redeliver", "register_waits", "settle_inbox"]

_REDELIVERABLE = frozenset({EventState.INVALID, EventState.UNMATCHED, EventState.BUFFERED})


def deliver_new(tx: Tx, events: Sequence[tuple[NewEvent, TriggerStarts | None]],
                now: datetime) -> list[EventRecord]:
    """Record each new event in order (or recognise a duplicate: of an event stored before,
    or of one earlier in ``events``) and deliver it; a valid new one also starts the runs of
    its ``starts``. The records, in order.

    Every lock comes first, in one global order (the event ids, then the correlations, then
    the targets of held trigger starts, each sorted), before anything is written, and goes
    out in one flight with the two reads, of the stored ids and of the waiting branches of
    every correlation (a duplicate's too, unused): two flights to the server with the
    commit, however many events (a held trigger start adds its own).
    """
    news = [event for event, _ in events]
    _lock(tx, event_ids=[(event.type, event.id) for event in news],  # a resend waits
          correlations=_matches(news))
    holdstore.lock_targets(tx, [run for _, starts in events if starts is not None
                                for run, _ in starts.runs])
    pacingstore.lock_debounces(tx, [start for _, starts in events if starts is not None
                                    for start in starts.debounced])
    stored, waiting = _stored_and_waiting(tx, news)
    settled = _settled_branches(waiting)
    known = {(row["type"], row["id"]): record_from_row(row) for row in stored}
    records = []
    for event, starts in events:
        key = (event.type, event.id)
        if key in known:
            records.append(replace(known[key], state=EventState.DUPLICATE))
            continue
        state, runs = _deliver(tx, event, now, waiting.get(_correlation(event), []), settled)
        params = _event_params(event, state, runs, now)
        tx.many("insert_event", [params])
        known[key] = _inserted(event, params, _start(tx, event, starts, now))
        records.append(known[key])
    return records


def _inserted(event: NewEvent, params: Mapping[str, Any], started: tuple[str, ...]) -> EventRecord:
    """The record of an event inserted with ``params``, as a read would return it: no read
    is needed, so the insert goes out with the commit."""
    buffer_until = params["buffer_until"]
    return EventRecord(id=event.id, type=event.type, state=EventState(params["state"]),
                       data=stored_value(params["data"]),
                       received_at=from_millis(params["received_at"]),
                       runs=tuple(json.loads(params["runs"])), errors=tuple(event.errors),
                       buffer_until=None if buffer_until is None else from_millis(buffer_until),
                       started=started)


def redeliver(tx: Tx, event: NewEvent, now: datetime,
              starts: TriggerStarts | None = None) -> EventRecord:
    """Deliver a stored invalid, unmatched or buffered event again with ``event``'s data;
    an invalid one corrected also starts the runs of ``starts`` (a valid one started its
    runs when it was first recorded)."""
    stored = _locked(tx, event.id)
    if stored.state not in _REDELIVERABLE:
        raise EventStateError(event.id, stored.state.value,
                              f"event '{event.id}' is {stored.state}; only invalid, unmatched "
                              "or buffered events can be redelivered")
    _lock(tx, correlations=_matches([event]))
    waiting = _waiting_branches(tx, [event])
    branches = waiting.get(_correlation(event), [])
    state, runs = _deliver(tx, event, now, branches, _settled_branches(waiting))
    row = tx.one("replace_event", _event_params(event, state, runs, now))
    if stored.state is EventState.INVALID and _start(tx, event, starts, now):
        row = tx.one("find_event", {"type": event.type, "id": event.id})
    assert row is not None
    return record_from_row(row)


def _start(tx: Tx, event: NewEvent, starts: TriggerStarts | None,
           now: datetime) -> tuple[str, ...]:
    """Start the runs the valid ``event``'s triggers ask for (gather it into the burst of
    each debounced one), and note them on it; their ids."""
    if starts is None or event.errors or not (starts.runs or starts.debounced):
        return ()
    started = triggerstore.insert_starts(tx, starts.runs, now, starts.supersede_since)
    started += [pacingstore.debounce(tx, start, event.received_at, now)
                for start in starts.debounced]
    triggerstore.note_started(tx, event.type, event.id, started)
    return tuple(started)


def discard(tx: Tx, event_id: str, now: datetime) -> EventRecord:
    """Mark a stored invalid, unmatched or buffered event discarded."""
    stored = _locked(tx, event_id)
    if stored.state not in _REDELIVERABLE:
        raise EventStateError(event_id, stored.state.value,
                              f"event '{event_id}' is {stored.state}; only invalid, unmatched "
                              "or buffered events can be discarded")
    row = tx.one("set_event_state", {"type": stored.type, "id": event_id,
                                     "state": EventState.DISCARDED.value,
                                     "runs": json.dumps(list(stored.runs)),
                                     "now": to_millis(now)})
    assert row is not None
    return record_from_row(row)


def _locked(tx: Tx, event_id: str) -> EventRecord:
    """The stored event, read again once its id is locked: two operators redelivering (or
    discarding) one event at once act one after the other, and the second sees the first."""
    stored = find_by_id(tx, event_id)
    _lock(tx, event_ids=[(stored.type, event_id)])  # goes out with the read
    return find_by_id(tx, event_id)


def find_by_id(tx: Tx, event_id: str) -> EventRecord:
    """The one stored event with ``event_id``."""
    rows = tx.all("events_with_id", {"id": event_id})
    if not rows:
        raise EventNotFound(event_id)
    if len(rows) > 1:
        raise EventStateError(event_id, "ambiguous",
                              f"several event types have an event with id '{event_id}'")
    return record_from_row(rows[0])


def inbox_of(tx: Tx, run_ids: list[str]) -> dict[str, list[InboxEvent]]:
    """The inboxes of ``run_ids``, oldest first."""
    found: dict[str, list[InboxEvent]] = {}
    for row in tx.all("inbox_of_runs", {"ids": json.dumps(run_ids)}):
        found.setdefault(row["run_id"], []).append(inbox_event(row))
    return found


def rebuffer_inbox(tx: Tx, run_id: str, now: datetime, until: datetime) -> None:
    """Buffer again every event in the inbox of ``run_id`` (a run that just ended by
    continuing as new, its waits gone) for its successor, until ``until`` at least, and empty
    that inbox: an event the ended run was handed but did not take in is the successor's to
    take when it registers its wait."""
    held = tx.all("inbox_of_runs", {"ids": json.dumps([run_id])})
    tx.many("rebuffer_event", [{"type": row["event_type"], "id": row["event_id"],
                                "now": to_millis(now), "until": to_millis(until)}
                               for row in held])
    if held:
        tx.many("delete_run_inbox", [{"run_id": run_id}])


def inbox_event(row: Row) -> InboxEvent:
    """An ``inbox`` row as an :class:`InboxEvent`."""
    return InboxEvent(inbox_id=str(row["seq"]), wait_id=row["wait_id"],
                      event_id=row["event_id"], type=row["event_type"],
                      data=stored_value(row["data"]), received_at=from_millis(row["received_at"]))


def lock_correlations(tx: Tx, run_ids: list[str]) -> None:
    """Lock, in one global order, every correlation the runs wait on: a transaction that
    changes runs' waits does this before it writes anything.

    A delivery holds its correlation's lock while it deletes waits and wakes runs, so a
    writer that took the lock only after touching those rows would deadlock with it
    (PostgreSQL; under SQLite's one writer the locks are no-ops).
    """
    held = tx.all("waits_of_runs", {"ids": json.dumps(run_ids)}) if run_ids else []
    _lock(tx, correlations=[(row["type"], row["match_key"]) for row in held])


_WaitKey = tuple[str, str, str]
"""A registered wait: (wait_id, type, match_key)."""


@dataclass(frozen=True)
class WaitChanges:
    """How one checkpoint changes a run's registered event waits."""

    removed: frozenset[_WaitKey] = frozenset()
    added: tuple[EventWait, ...] = ()


def plan_wait_changes(tx: Tx, updates: list[RunUpdate]) -> dict[str, WaitChanges]:
    """Compare the waits the releasing ``updates`` want with those registered, and lock the
    correlations of every change, in one global order, before anything is written.

    Only changes are written: a run with a thousand waiting branches of which one moved
    costs a handful of statements, not thousands. A delivery holds its correlation's lock
    while it deletes waits and wakes runs, so the locks come first or the two deadlock
    (PostgreSQL; under SQLite's one writer the locks are no-ops).
    """
    releasing = [update for update in updates if update.release]
    if not releasing:
        return {}
    registered: dict[str, set[_WaitKey]] = {}
    looked_up = [update.run_id for update in releasing if update.had_waits]
    for row in tx.all("registered_waits", {"ids": json.dumps(looked_up)}) if looked_up else ():
        registered.setdefault(row["run_id"], set()).add(
            (row["wait_id"], row["type"], row["match_key"]))
    plans: dict[str, WaitChanges] = {}
    for update in releasing:
        wanted = {(w.wait_id, w.type, w.match_key): w for w in update.waits}
        held = registered.get(update.run_id, set())
        plans[update.run_id] = WaitChanges(
            removed=frozenset(held - wanted.keys()),
            added=tuple(wait for key, wait in wanted.items() if key not in held))
    changed = {(key[1], key[2]) for plan in plans.values() for key in plan.removed}
    changed |= {(w.type, w.match_key) for plan in plans.values() for w in plan.added}
    _lock(tx, correlations=changed)
    return plans


def settle_inbox(tx: Tx, update: RunUpdate, now: datetime, changes: WaitChanges) -> None:
    """Apply one checkpoint's event side: consumed entries, wait changes, wake.

    A wait that stays registered is offered the next buffered event when it turned one down
    in this advance (``update.rescan``): the first valid reply wins, however many came early.
    """
    tx.many("delete_inbox", [{"seq": int(seq)} for seq in update.consumed])
    if not update.release:
        return
    tx.many("delete_wait", [{"run_id": update.run_id, "wait_id": wait_id, "type": event_type,
                             "match_key": match_key}
                            for wait_id, event_type, match_key in sorted(changes.removed)])
    register_waits(tx, update.run_id, changes.added, now)
    rescan = set(update.rescan)
    kept = tuple(wait for wait in update.waits
                 if wait.wait_id in rescan and wait not in changes.added)
    for wait in kept:
        _take_buffered(tx, update.run_id, wait, now)
    could_have_inbox = (update.had_waits or update.had_tasks or changes.added
                        or update.awaits_children)
    if update.status.value == "waiting" and could_have_inbox and tx.one(
            "run_has_inbox", {"run_id": update.run_id}):
        tx.many("wake_run_now", [{"run_id": update.run_id, "now": to_millis(now)}])


def register_waits(tx: Tx, run_id: str, waits: tuple[EventWait, ...], now: datetime) -> None:
    """Register waits; a wait that matches a buffered event also takes it, at once.

    A wait stays registered while its run waits, delivered events or not, so that an event
    turned down by ``accept`` never leaves the run unreachable for the next one.
    The caller holds each wait's correlation lock (:func:`plan_wait_changes` took it).
    """
    for wait in waits:
        tx.many("insert_wait", [{"run_id": run_id, "wait_id": wait.wait_id,
                                 "type": wait.type, "match_key": wait.match_key,
                                 "until": to_millis(wait.until),
                                 "first_wins": wait.first_wins}])
        _take_buffered(tx, run_id, wait, now)


def _take_buffered(tx: Tx, run_id: str, wait: EventWait, now: datetime) -> None:
    """Move the oldest buffered event that counts for ``wait`` into its branch's inbox,
    unless the branch already has one to look at (both read in one flight)."""
    has_inbox, oldest = tx.reads(
        ("branch_has_inbox", {"run_id": run_id, "wait_id": wait.wait_id}),
        ("oldest_buffered", {"type": wait.type, "match_key": wait.match_key,
                             "now": to_millis(now), "until": to_millis(wait.until)}))
    if has_inbox or not oldest:
        return
    buffered = oldest[0]
    _put_in_inbox(tx, run_id, wait.wait_id, buffered)
    tx.many("set_event_state", [{"type": buffered["type"], "id": buffered["id"],
                                 "state": EventState.DELIVERED.value,
                                 "runs": json.dumps([run_id]), "now": to_millis(now)}])


def _branch_of(row: Row) -> tuple[str, bool]:
    """The step path of a registered wait's row, and whether its first event settles it."""
    return row["wait_id"], bool(row["first_wins"])


def _settled_branches(waiting: Mapping[Any, Sequence[Row]]) -> set[tuple[str, str]]:
    """The (run, path) of each ``waiting`` branch that its first event settles and that
    holds one already (read once the runs were locked: :func:`_branches_query`)."""
    settled: set[tuple[str, str]] = set()
    for rows in waiting.values():
        for row in rows:
            path, first_wins = _branch_of(row)
            if first_wins and row["settled"]:
                settled.add((row["run_id"], path))
    return settled


_Correlation = tuple[str, str, int]
"""What a valid event is delivered by: (type, match_key, received_at in milliseconds)."""


def _correlation(event: NewEvent) -> _Correlation:
    return event.type, event.match_key or "", to_millis(event.received_at)


def _matches(events: Sequence[NewEvent]) -> list[tuple[str, str]]:
    """The correlations (type, match_key) of the valid ``events``."""
    return [_correlation(event)[:2] for event in events if not event.errors]


_Key = tuple[str, str]
"""A lock's key: an event id (type, id) or a correlation (type, match_key)."""


def _lock(tx: Tx, *, event_ids: Iterable[_Key] = (), correlations: Iterable[_Key] = ()) -> None:
    """Lock each of ``event_ids`` and then each of ``correlations``, each kind sorted (the one
    global order), in one statement (queued: it goes out with the next read)."""
    keys = [*({"event_id": key} for key in sorted(set(event_ids))),
            *({"correlation": key} for key in sorted(set(correlations)))]
    if keys:
        tx.take("lock_keys", [{"keys": json.dumps(keys)}])


def _stored_and_waiting(tx: Tx, events: Sequence[NewEvent]
                        ) -> tuple[list[Row], dict[_Correlation, list[Row]]]:
    """The stored events with the ids of ``events``, and the branches waiting on each valid
    event's correlation (none: absent), in one flight."""
    stored = ("find_events", {"keys": json.dumps([{"type": event.type, "id": event.id}
                                                  for event in events])})
    branches = _branches_query(tx, events)
    if branches is None:
        return tx.all(*stored), {}
    found, waiting = tx.reads(stored, branches)
    return found, _by_correlation(waiting)


def _waiting_branches(tx: Tx, events: Sequence[NewEvent]) -> dict[_Correlation, list[Row]]:
    """The branches waiting on each valid event's correlation, in one read (none: absent)."""
    query = _branches_query(tx, events)
    return {} if query is None else _by_correlation(tx.all(*query))


def _branches_query(tx: Tx, events: Sequence[NewEvent]) -> tuple[str, dict[str, str]] | None:
    """The read of the branches waiting on the valid ``events``' correlations (None: no
    valid event), with the lock of their runs queued before it: whether a branch holds an
    event already is read once no other delivery can add one (:data:`_FIRST_WINS`)."""
    keys = sorted({_correlation(event) for event in events if not event.errors})
    if not keys:
        return None
    params = {"keys": json.dumps([{"type": key[0], "match_key": key[1],
                                   "received_at": key[2]} for key in keys])}
    tx.take("lock_waiting_runs", [params])
    return "waiting_branches", params


def _by_correlation(rows: Sequence[Row]) -> dict[_Correlation, list[Row]]:
    found: dict[_Correlation, list[Row]] = {}
    for row in rows:
        found.setdefault((row["type"], row["match_key"], int(row["received_at"])),
                         []).append(row)
    return found


def _deliver(tx: Tx, event: NewEvent, now: datetime, branches: Sequence[Row],
             settled: set[tuple[str, str]]) -> tuple[EventState, list[str]]:
    """Put a valid ``event`` in the inbox of each of its waiting ``branches`` (its
    correlation locked) and wake their runs; its state and the runs it reached. A branch
    that its first event settles takes none once it is in ``settled``, and joins it."""
    if event.errors:
        return EventState.INVALID, []
    row = {"type": event.type, "id": event.id, "data": _data_text(event),
           "received_at": to_millis(event.received_at)}
    reached: list[str] = []
    for branch in branches:
        path, first_wins = _branch_of(branch)
        if first_wins:
            if (branch["run_id"], path) in settled:
                continue
            settled.add((branch["run_id"], path))
        _put_in_inbox(tx, branch["run_id"], path, row)
        tx.many("wake_waiting_run", [{"run_id": branch["run_id"], "now": to_millis(now)}])
        reached.append(branch["run_id"])
    runs = sorted(set(reached))
    if runs:
        return EventState.DELIVERED, runs
    if event.buffer_until is not None and event.buffer_until > now:
        return EventState.BUFFERED, []
    return EventState.UNMATCHED, []


def _put_in_inbox(tx: Tx, run_id: str, wait_id: str, event: Row) -> None:
    tx.many("insert_inbox", [{"run_id": run_id, "wait_id": wait_id,
                              "event_type": event["type"], "event_id": event["id"],
                              "data": _text(event["data"]),
                              "received_at": event["received_at"]}])


def _event_params(event: NewEvent, state: EventState, runs: list[str],
                  now: datetime) -> dict[str, Any]:
    return {"id": event.id, "type": event.type, "state": state.value,
            "data": _data_text(event), "match_key": event.match_key,
            "errors": json.dumps(list(event.errors)), "runs": json.dumps(runs),
            "received_at": to_millis(event.received_at),
            "buffer_until": None if event.buffer_until is None else to_millis(event.buffer_until),
            "now": to_millis(now)}


def _data_text(event: NewEvent) -> str:
    """The event's payload as JSON text: as the check of the payload encoded it, if it did."""
    return json_text(event.data if event.data_json is None else event.data_json)


def record_from_row(row: Row) -> EventRecord:
    """The event record of a stored row."""
    buffer_until = row["buffer_until"]
    return EventRecord(id=row["id"], type=row["type"], state=EventState(row["state"]),
                       data=stored_value(row["data"]), received_at=from_millis(row["received_at"]),
                       runs=tuple(stored_value(row["runs"])),
                       errors=tuple(stored_value(row["errors"])),
                       buffer_until=None if buffer_until is None else from_millis(buffer_until),
                       started=tuple(stored_value(row["started"])))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)

"""Operating runs over named queries, the same statements on every SQL backend: cancel (with a
reason), retry, the reruns of a run, and batches.

Every function runs inside the caller's transaction. A batch works through the runs its
filter selects newest first, in pages: each page's actions, its counts and its cursor are
written in one transaction, so a batch interrupted between two pages and worked again starts
after the last page written and acts on no run twice.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tarry.clock import from_millis, to_millis
from tarry.errors import BatchNotFound
from tarry.model import (
    BatchAction,
    BatchFilter,
    BatchRecord,
    HistoryEntry,
    MovePlan,
    RetryPlan,
    RunRecord,
    RunStatus,
)
from tarry.store import childstore, eventstore, rows, runstore, slotstore
from tarry.store.rows import Row

if TYPE_CHECKING:
    from tarry.store.base import RetryPlanner
    from tarry.store.sqlstore import Tx

__all__ = ["batch_runs", "cancel_runs", "count_selected", "filter_params", "find_batch",
           "insert_batch", "move", "retry_all", "work_page", "write_batch_page"]


def cancel_runs(tx: Tx, run_ids: Sequence[str], by: str, reason: str | None,
                now: datetime, *, notify: bool = True) -> list[str]:
    """Cancel the runs of ``run_ids`` not yet ended (a running one at its next checkpoint),
    recording who and why, in a few statements whatever their number; the ids of those
    acted on (a run that has ended, or does not exist, is left alone). Locks are taken as a
    checkpoint takes them: the correlations the runs wait on, then the runs in id order.

    The live children of every run acted on are cancelled with it (recursively, ``by``
    ``parent``); a child cancelled here tells its waiting parent (unless ``notify`` is
    false: the parent gave up waiting for it)."""
    ids = json.dumps(sorted(set(run_ids)))
    slotstore.lock_keys(tx, slotstore.keys_of_runs(tx, run_ids))
    eventstore.lock_correlations(tx, sorted(set(run_ids)))
    tx.take("lock_runs", [{"ids": ids}])
    params = {"ids": ids, "by": by, "now": to_millis(now)}
    cancelled = [str(row["id"]) for row in tx.all("cancel_runs", params)]
    requested = [str(row["id"]) for row in tx.all("request_cancel_runs", params)]
    if cancelled:  # no event reaches them now, and no task of theirs stays open
        done = {"ids": json.dumps(cancelled), "now": to_millis(now)}
        tx.run("delete_waits_of_runs", done)
        tx.run("close_tasks_of_runs", done)
        slotstore.release_runs(tx, cancelled, now)  # their slots go to the next in line
    data = {"by": by, **({"reason": reason} if reason else {})}
    tx.insert("insert_history", [
        *rows.history_params_of(cancelled, HistoryEntry(now, "cancelled", None, data)),
        *rows.history_params_of(requested, HistoryEntry(now, "cancel_requested", None, data))])
    live = (childstore.ended(tx, cancelled, now) if notify
            else childstore.live_children(tx, cancelled))
    live += childstore.live_children(tx, requested)
    if live:
        cancel_runs(tx, live, "parent", _cascaded(by, reason), now)
    return cancelled + requested


def _cascaded(by: str, reason: str | None) -> str:
    """The reason recorded on a child cancelled with its parent."""
    if by == "parent":
        return reason or "its parent run was cancelled"
    return f"its parent run was cancelled by {by}" + (f": {reason}" if reason else "")


def retry_all(tx: Tx, plans: Sequence[RetryPlan], now: datetime) -> list[RunRecord | None]:
    """Make each planned run pending again, due ``now``, with its planned state and inputs,
    forgetting the journal entries of its failed work; for each, its record, or None when it
    is no longer the failed run the plan was made from (nothing written)."""
    done: list[RunRecord | None] = []
    for plan in plans:
        row = tx.one("retry_run", {"id": plan.run_id, "seen": to_millis(plan.seen),
                                   "now": to_millis(now), "state": rows.json_text(plan.state),
                                   "inputs": rows.json_text(plan.inputs)})
        if row is None:
            done.append(None)
            continue
        by_scope: dict[str, list[str]] = {}
        for scope, key in plan.forget:
            by_scope.setdefault(scope, []).append(key)
        tx.many("forget_journal", [{"run_id": plan.run_id, "scope": scope,
                                    "keys": json.dumps(keys)}
                                   for scope, keys in sorted(by_scope.items())])
        tx.insert("insert_history", rows.history_params(plan.run_id, [plan.entry]))
        done.append(rows.record_from_row(row))
    return done


def move(tx: Tx, plan: MovePlan, now: datetime) -> RunRecord | None:
    """Move the planned run to its new definition if it is still as the plan saw it (read
    under its row's lock: its status, definition and stored state, and no lease); the run as
    written, or None (nothing written)."""
    row = tx.one("get_run_for_update", {"id": plan.run_id})
    if row is None:
        return None
    seen = rows.record_from_row(row)
    if (seen.status is not plan.status or seen.flow_digest != plan.from_digest
            or seen.lease_owner is not None or seen.state != plan.seen):
        return None
    moved = tx.one("move_run", {"id": plan.run_id, "status": plan.status.value,
                                "from_digest": plan.from_digest, "to_digest": plan.to_digest,
                                "state": rows.json_text(plan.state), "now": to_millis(now),
                                "wake": 1 if plan.wake else 0})
    if moved is None:
        return None
    tx.insert("insert_history", rows.history_params(plan.run_id, [plan.entry]))
    return rows.record_from_row(moved)


# -- batches ---------------------------------------------------------------------------------


def filter_params(action: BatchAction, selected: BatchFilter) -> dict[str, Any]:
    """The parameters of ``list_runs`` (less the keyset and limit) for a batch's runs."""
    return {**rows.run_filters(selected.flow, selected.target, selected.waiting_for),
            "statuses": json.dumps([status.value for status in selected.statuses(action)])}


def count_selected(tx: Tx, action: BatchAction, selected: BatchFilter,
                   before: tuple[datetime, str]) -> int:
    """How many runs the batch's filter selects before the keyset position ``before``."""
    row = tx.one("count_runs_selected", {**filter_params(action, selected),
                                         "before_at": to_millis(before[0]),
                                         "before_id": before[1]})
    return int(row["total"]) if row else 0


def batch_runs(tx: Tx, batch: BatchRecord, limit: int) -> list[RunRecord]:
    """The next ``limit`` runs the batch selects after its cursor, newest first."""
    params = {**filter_params(batch.action, batch.filter), "limit": limit,
              "before_at": to_millis(batch.cursor[0]), "before_id": batch.cursor[1]}
    return [rows.record_from_row(row) for row in tx.all("list_runs", params)]


def insert_batch(tx: Tx, batch: BatchRecord) -> None:
    """Record a new batch."""
    tx.run("insert_batch", {
        "id": batch.id, "action": batch.action.value, "filter": _filter_text(batch.filter),
        "reason": batch.reason, "principal": batch.by, "state": "running",
        "total": batch.total, "cursor_at": to_millis(batch.cursor[0]),
        "cursor_id": batch.cursor[1], "now": to_millis(batch.created_at)})


def find_batch(tx: Tx, batch_id: str, *, lock: bool = False) -> BatchRecord:
    """The stored batch (locked for the transaction with ``lock``); raises
    ``BatchNotFound``."""
    row = tx.one("get_batch_for_update" if lock else "get_batch", {"id": batch_id})
    if row is None:
        raise BatchNotFound(batch_id)
    return _batch_from_row(row)


def work_page(tx: Tx, batch_id: str, now: datetime, *, limit: int,
              plan: RetryPlanner) -> BatchRecord:
    """Act on the next ``limit`` runs of the batch (locked meanwhile) after its cursor:
    cancel them, or retry each as ``plan`` says; then advance its counts and cursor (a short
    page: it is done). The batch as written; a batch done already, as it is."""
    batch = find_batch(tx, batch_id, lock=True)
    if batch.done:
        return batch
    page = batch_runs(tx, batch, limit)
    if batch.action is BatchAction.CANCEL:
        acted = len(cancel_runs(tx, [run.id for run in page], batch.by, batch.reason, now))
    else:
        journals = runstore.journals_of(tx, [run.id for run in page])
        plans = [plan(run, journals.get(run.id, [])) for run in page]
        acted = sum(done is not None for done in retry_all(
            tx, [each for each in plans if each is not None], now))
    cursor = (page[-1].created_at, page[-1].id) if len(page) == limit else None
    return write_batch_page(tx, batch, acted=acted, skipped=len(page) - acted, cursor=cursor,
                            now=now)


def write_batch_page(tx: Tx, batch: BatchRecord, *, acted: int, skipped: int,
                     cursor: tuple[datetime, str] | None, now: datetime) -> BatchRecord:
    """Advance the batch by one page: its counts, and its cursor (None: it is done)."""
    params = {"id": batch.id, "acted": acted, "skipped": skipped, "now": to_millis(now),
              "state": "running" if cursor is not None else "done",
              "cursor_at": to_millis((cursor or batch.cursor)[0]),
              "cursor_id": (cursor or batch.cursor)[1]}
    row = tx.one("advance_batch", params)
    assert row is not None
    return _batch_from_row(row)


def _filter_text(selected: BatchFilter) -> str:
    return rows.json_text({
        "flow": selected.flow, "status": selected.status, "waiting_for": selected.waiting_for,
        "target": selected.target,
        "created_before": (to_millis(selected.created_before)
                           if selected.created_before is not None else None)})


def _batch_from_row(row: Row) -> BatchRecord:
    stored = rows.stored_value(row["filter"])
    before = stored.get("created_before")
    selected = BatchFilter(flow=stored.get("flow"), target=stored.get("target"),
                           status=RunStatus(stored["status"]) if stored.get("status") else None,
                           waiting_for=stored.get("waiting_for"),
                           created_before=from_millis(before) if before is not None else None)
    return BatchRecord(id=row["id"], action=BatchAction(row["action"]), filter=selected,
                       reason=row["reason"], by=row["principal"], total=int(row["total"]),
                       created_at=from_millis(row["created_at"]),
                       updated_at=from_millis(row["updated_at"]),
                       cursor=(from_millis(row["cursor_at"]), row["cursor_id"]),
                       acted=int(row["acted"]), skipped=int(row["skipped"]),
                       done=row["state"] == "done")

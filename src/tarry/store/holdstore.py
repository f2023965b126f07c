"""Holds over named queries, the same statements on every SQL backend.

Two things about holds must be true across every worker sharing the store, so they live in
the database rather than in any one process:

- **Check slots.** A row per check running anywhere (``check_slots``), leased: a worker that
  dies mid-check stops counting once its lease lapses. Taking a slot locks the slot table
  first (``lock_check_slots``), so two workers can never both see the last free slot.
- **Supersede markers.** A row per held run that has a target (``hold_markers``); its
  ``cleared_at`` is set when the hold clears. A start of the same flow and target is refused
  while a marker's run is still held, or cleared recently. Starts of one flow and target are
  serialised (``lock_hold_target``), and stale markers are purged first, so a marker whose run
  was refused or cancelled never refuses anyone. The marker is stamped by the checkpoint that
  writes the run's ``hold.cleared`` entry, so the two are never apart.

Every function runs inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from tarry.clock import to_millis
from tarry.model import HOLD_CLEARED, HistoryEntry, NewRun, RunStatus, RunUpdate
from tarry.store import runstore

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["acquire_slot", "create_held", "lock_targets", "settle_hold"]


def lock_targets(tx: Tx, runs: Iterable[NewRun]) -> None:
    """Lock the flow and target of each held run of ``runs`` that has one, sorted (queued:
    they go out with the next read). A transaction that starts several held runs takes
    these locks together, before it writes, so two that start runs on the same targets in
    opposite orders never deadlock (:func:`create_held` takes its lock again: a no-op)."""
    tx.take("lock_hold_target", [{"flow": flow, "target": target} for flow, target in sorted(
        {(run.flow, run.target) for run in runs
         if run.status is RunStatus.HELD and run.target is not None})])


def create_held(tx: Tx, run: NewRun, history: list[HistoryEntry],
                recent_since: datetime) -> str | None:
    """Insert the held ``run`` (with its marker when it has a target), unless a run of the
    same flow and target is held or cleared after ``recent_since``: then insert nothing and
    return that sibling's id."""
    key = {"flow": run.flow, "target": run.target}
    if run.target is not None:
        tx.one("lock_hold_target", key)
        tx.run("purge_hold_markers", {**key, "since": to_millis(recent_since)})
        sibling = tx.one("hold_sibling", key)
        if sibling is not None:
            return str(sibling["run_id"])
    runstore.insert_runs(tx, [(run, history)])
    if run.target is not None:
        tx.run("insert_hold_marker", {"run_id": run.id, **key})
    return None


def settle_hold(tx: Tx, update: RunUpdate) -> None:
    """Stamp the marker of the run whose hold ``update`` records as cleared (a run without a
    target has no marker: nothing changes)."""
    for entry in update.history:
        if entry.kind == HOLD_CLEARED:
            tx.many("clear_hold_marker", [{"run_id": update.run_id,
                                           "now": to_millis(entry.at)}])


def acquire_slot(tx: Tx, holder: str, now: datetime, lease_until: datetime,
                 slots: int) -> bool:
    """Take (or renew) a check slot for ``holder`` when fewer than ``slots`` others are
    taken; whether it did."""
    tx.one("lock_check_slots")
    tx.run("expire_check_slots", {"now": to_millis(now)})
    taken = tx.one("other_check_slots", {"holder": holder})
    if taken is not None and taken["taken"] >= slots:
        return False
    tx.run("take_check_slot", {"holder": holder, "lease_until": to_millis(lease_until)})
    return True

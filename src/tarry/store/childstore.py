"""Child runs over named queries, the same statements on every SQL backend: a parent's
checkpoint creates the children its ``call`` steps started, and the transaction that ends a
run tells its waiting parent and cancels its own children still live.

Every function runs inside the caller's transaction. A child names its parent and the
parent's waiting step (``parent_id``, ``parent_step``), so the end of a child reaches its
parent by two key lookups, and a parent's children are one index range (``runs_parent``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from tarry.clock import to_millis
from tarry.model import RunUpdate
from tarry.store import runstore

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["children_of", "ended", "live_children", "start_children"]


def start_children(tx: Tx, update: RunUpdate) -> list[str]:
    """Insert the child runs ``update`` started; the ids of those that ended at once (a
    child refused by its hold at start), whose parents are told with the rest."""
    if not update.children:
        return []
    runstore.insert_runs(tx, update.children)
    return [run.id for run, _ in update.children if run.status.is_terminal]


def children_of(tx: Tx, run_id: str) -> list[str]:
    """The ids of the child runs of ``run_id``, oldest first."""
    return [str(row["id"]) for row in tx.all("children_of", {"id": run_id})]


def live_children(tx: Tx, run_ids: Sequence[str]) -> list[str]:
    """The ids of the children of ``run_ids`` that have not ended."""
    if not run_ids:
        return []
    return [str(row["id"]) for row in tx.all("live_children", {"ids": json.dumps(list(run_ids))})]


def ended(tx: Tx, run_ids: Sequence[str], now: datetime) -> list[str]:
    """The runs of ``run_ids`` have just ended: put each child's end in its parent's inbox
    (a parent that has not ended) and wake the parents that wait; the ids of the ended runs'
    children still live, for the caller to cancel."""
    if not run_ids:
        return []
    ids = json.dumps(sorted(set(run_ids)))
    notified, live = tx.reads(("notify_parents", {"ids": ids, "now": to_millis(now)}),
                              ("live_children", {"ids": ids}))
    parents = sorted({str(row["run_id"]) for row in notified})
    if parents:
        tx.many("wake_parents", [{"ids": json.dumps(parents), "now": to_millis(now)}])
    return [str(row["id"]) for row in live]

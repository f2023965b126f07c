"""Slots over named queries, the same statements on every SQL backend: a flow's concurrency
keys and the steps' named pools, counted in the store so that the whole fleet shares them.

- **Holders.** A row per slot taken (``slot_holders``): a run past its start holds its flow's
  key (holder ``''``) until it ends; a step holds a slot of its pool (holder: the step's path)
  while its action runs.
- **Queues.** A row per run or step denied a slot (``slot_queue``), served oldest first. The
  transaction that frees a slot hands it to the head of its key's queue at once (a holder
  row in the queued run's name) and makes that run due now, so a queued run is woken without
  anyone polling; a run being advanced when its turn comes is made due by its own checkpoint
  (:func:`settle_slots`).
- **Locks.** Every transaction that changes a key's slots locks the key first (PostgreSQL: an
  advisory lock per key, taken in sorted order before anything else the transaction locks:
  keys, then correlations, then runs), so two workers never both see the last free slot and
  never deadlock over it.

Every function runs inside the caller's transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from tarry.clock import to_millis
from tarry.model import RunUpdate, SlotClaim, SlotTurn, SlotView

if TYPE_CHECKING:
    from tarry.store.sqlstore import Tx

__all__ = ["HANDOVER_BATCH", "give_back", "keys_of_runs", "lock_keys", "release_runs",
           "settle_slots", "take", "view"]

HOLDERS_SHOWN = 20
"""How many of a key's holders a run's document lists."""

HANDOVER_BATCH = 64
"""How many queue entries one look at a key's queue reads when slots free up."""


def lock_keys(tx: Tx, keys: Iterable[str]) -> None:
    """Lock ``keys`` (sorted, each once), before anything else the transaction locks."""
    for key in sorted(set(keys)):
        tx.one("lock_slot_key", {"key": key})


def take(tx: Tx, claim: SlotClaim, now: datetime) -> SlotTurn:
    """Grant ``claim`` a slot if it holds one already (handed over while it waited), or if
    fewer than its limit are held and nobody waits before it; else queue it (once)."""
    lock_keys(tx, [claim.key])
    mine = {"key": claim.key, "run_id": claim.run_id, "holder": claim.holder}
    if tx.one("slot_held", mine) is not None:
        return SlotTurn(True)
    place = tx.one("slot_queue_place", mine)
    ahead = (_count(tx, "slot_queue_length", {"key": claim.key}) if place is None
             else _count(tx, "slot_queue_ahead", {"key": claim.key, "seq": place["seq"]}))
    if ahead == 0 and _count(tx, "count_slot_holders", {"key": claim.key}) < claim.limit:
        if place is not None:
            tx.run("leave_slot_queue", {"seq": place["seq"]})
        tx.run("take_slot", {**mine, "now": to_millis(now)})
        return SlotTurn(True)
    if place is None:
        tx.run("queue_for_slot", {**mine, "slot_limit": claim.limit, "now": to_millis(now)})
    return SlotTurn(False, ahead)


def give_back(tx: Tx, claim: SlotClaim, now: datetime) -> None:
    """Give back the slot ``claim`` holds (nothing if none), handing it to the next in line."""
    lock_keys(tx, [claim.key])
    tx.run("give_slot_back", {"key": claim.key, "run_id": claim.run_id,
                              "holder": claim.holder})
    _hand_over(tx, claim.key, now)


def keys_of_runs(tx: Tx, run_ids: Sequence[str]) -> list[str]:
    """Every key the runs of ``run_ids`` hold a slot of or wait for."""
    return [str(row["key"]) for row in tx.all("slot_keys_of_runs",
                                              {"ids": json.dumps(sorted(set(run_ids)))})]


def release_runs(tx: Tx, run_ids: Sequence[str], now: datetime) -> None:
    """The runs of ``run_ids`` ended: take them out of every queue, give back every slot
    they hold and hand each to the next in line. The caller locked their keys."""
    if not run_ids:
        return
    ids = {"ids": json.dumps(sorted(set(run_ids)))}
    tx.run("leave_slot_queues_of_runs", ids)
    for key in sorted({str(row["key"]) for row in tx.all("release_slots_of_runs", ids)}):
        _hand_over(tx, key, now)


def settle_slots(tx: Tx, update: RunUpdate, ended: bool, now: datetime) -> None:
    """What a written ``update`` means for its run's slots: an ended run gives every one
    back; a run that suspended to wait for a slot handed to it meanwhile is due now."""
    if ended:
        if update.slot_keys:
            release_runs(tx, [update.run_id], now)
        return
    for claim in update.slot_queued:
        if tx.one("slot_held", {"key": claim.key, "run_id": claim.run_id,
                                "holder": claim.holder}) is not None:
            tx.run("wake_for_slot", {"run_id": update.run_id, "now": to_millis(now)})
            return


def view(tx: Tx, key: str, run_id: str, holder: str) -> SlotView:
    """Who holds the slots of ``key`` and how many wait, before ``run_id``'s entry too."""
    place = tx.one("slot_queue_place", {"key": key, "run_id": run_id, "holder": holder})
    holders = tx.all("slot_holders_of_key", {"key": key, "limit": HOLDERS_SHOWN})
    return SlotView(
        holders=tuple(dict.fromkeys(str(row["run_id"]) for row in holders)),
        queued=_count(tx, "slot_queue_length", {"key": key}),
        ahead=None if place is None else _count(tx, "slot_queue_ahead",
                                                {"key": key, "seq": place["seq"]}))


def _hand_over(tx: Tx, key: str, now: datetime) -> None:
    """Grant the free slots of ``key`` to the oldest entries of its queue (each by its own
    limit: the limit of the flow version it runs) and make their runs due now."""
    taken = _count(tx, "count_slot_holders", {"key": key})
    while True:
        head = tx.all("slot_queue_head", {"key": key, "limit": HANDOVER_BATCH})
        for entry in head:
            if taken >= entry["slot_limit"]:
                return
            tx.run("leave_slot_queue", {"seq": entry["seq"]})
            tx.run("take_slot", {"key": key, "run_id": entry["run_id"],
                                 "holder": entry["holder"], "now": to_millis(now)})
            tx.run("wake_for_slot", {"run_id": entry["run_id"], "now": to_millis(now)})
            taken += 1
        if len(head) < HANDOVER_BATCH:
            return


def _count(tx: Tx, query: str, params: dict[str, object]) -> int:
    """The one number a counting query returns (its only column)."""
    row = tx.one(query, params)
    return 0 if row is None else int(next(iter(row.values())))

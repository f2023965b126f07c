"""A flow's ``concurrency``: the slot a run takes before its first step.

A run of a flow with ``concurrency`` renders its key once, before its first step (after its
hold, if any, has cleared, and after its throttle's turn has come: a held or throttled run
takes no slot; a run about to wait for its flow's window asks once the window is open), and
asks the store for a slot of it.
Granted, it holds the slot until it ends, however it ends, waits inside its steps included.
Denied, it suspends before its first step, ``waiting`` for ``{kind: slot, key, ahead}``
with no ``due_at``: the transaction that frees a slot of its key hands it over and makes the
run due (:mod:`tarry.store.slotstore`). The key, its limit and whether the run holds its
slot are kept in the run's state (``slot``), so a resume after a wait never asks again,
and a retried run (pending again after it failed, which gave its slot back) asks anew.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Mapping
from datetime import datetime
from typing import Any, Protocol

from tarry.clock import iso
from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, render
from tarry.language.model import Concurrency, Flow, Template
from tarry.model import (
    HistoryEntry,
    RunRecord,
    RunStatus,
    RunUpdate,
    SlotClaim,
    SlotTurn,
    SlotView,
)
from tarry.values import stored_text

__all__ = ["KEY_CHARS", "SlotTaker", "flow_slot_key", "needs_slot", "pool_slot_key",
           "slot_keys", "slot_view", "take_run_slot"]

KEY_CHARS = 512
"""The longest a rendered concurrency key may be."""

SLOT = "slot"
"""The state's key for the run's flow slot."""


class SlotTaker(Protocol):
    """Asks the store for a slot (``AsyncStore.take_slot``), or gives one back
    (``AsyncStore.give_slot_back``)."""

    def __call__(self, claim: SlotClaim, now: datetime) -> Awaitable[Any]:
        """The turn the claim got (taking), or nothing (giving back)."""
        ...


def flow_slot_key(flow: str, rendered: str) -> str:
    """The store's key of a flow's concurrency key: per flow, as each flow has its limit."""
    return f"flow:{flow}:{rendered}"


def pool_slot_key(pool: str) -> str:
    """The store's key of a pool of ``[limits.pools]``: shared by every flow naming it."""
    return f"pool:{pool}"


class SlotViewer(Protocol):
    """Reads a key's holders and queue (``Store.slot_view``)."""

    def slot_view(self, key: str, run_id: str, holder: str = "") -> SlotView:
        """The key's slots as the run sees them."""
        ...


def slot_view(store: SlotViewer, record: RunRecord) -> SlotView | None:
    """The slots the run waits for, as the store has them now (None: it waits for none)."""
    waiting = record.waiting_for
    if record.status is not RunStatus.WAITING or not waiting or waiting.get("kind") != "slot":
        return None
    step = waiting.get("step")
    key = (pool_slot_key(str(waiting.get("key"))) if step
           else flow_slot_key(record.flow, str(waiting.get("key"))))
    return store.slot_view(key, record.id, str(step or ""))


def needs_slot(flow: Flow, status: RunStatus, state: Mapping[str, Any]) -> bool:
    """Whether a run claimed in ``status`` must take its flow slot before it goes on: a run
    of a flow with concurrency that has not started yet (or was retried: pending again) or
    was queued for one."""
    if flow.concurrency is None:
        return False
    slot = state.get(SLOT)
    return (status in (RunStatus.PENDING, RunStatus.HELD) or not isinstance(slot, dict)
            or not slot.get("held"))


def slot_keys(state: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys of the slots the run's state says it holds or waits for."""
    slot = state.get(SLOT)
    return (slot["key"],) if isinstance(slot, dict) and "key" in slot else ()


def render_key(concurrency: Concurrency, record: RunRecord, at: EvalContext) -> str:
    """The rendered key of a run: the inputs, ``run`` and ``target`` in scope. Raises
    ``ExpressionError`` for a key that does not render to a bounded, non-empty text."""
    if concurrency.key is None:
        return ""
    if not isinstance(concurrency.key, Template):
        return concurrency.key
    names = {**record.inputs, "run": {"id": record.id, "target": record.target},
             "target": record.target}
    value = render(concurrency.key.source, names, at)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True,
                                                           default=str)
    if not text or len(text) > KEY_CHARS:
        raise ExpressionError(f"the concurrency key must render to 1 to {KEY_CHARS} "
                              f"characters, got {len(text)}", expression=concurrency.key.source)
    return text


async def take_run_slot(take: SlotTaker, record: RunRecord, flow: Flow, *,
                        state: dict[str, Any], now: datetime, at: EvalContext,
                        history: list[HistoryEntry]) -> RunUpdate | None:
    """Take the run's flow slot: None once it holds it (``state`` and ``history`` say so),
    else the update that queues the run. Raises ``ExpressionError`` for a key that does not
    render."""
    concurrency = flow.concurrency
    assert concurrency is not None
    slot = state.get(SLOT)
    if not isinstance(slot, dict) or "key" not in slot:
        shown = render_key(concurrency, record, at)
        slot = {"key": flow_slot_key(flow.name, shown), "shown": shown}
    slot["held"] = False
    state[SLOT] = slot
    claim = SlotClaim(slot["key"], record.id, concurrency.limit)
    turn: SlotTurn = await take(claim, now)
    if turn.granted:
        slot["held"] = True
        slot.pop("since", None)
        history.append(HistoryEntry(now, "slot.taken", None, {"key": slot["shown"]}))
        return None
    if "since" not in slot:
        slot["since"] = iso(now)
        history.append(HistoryEntry(now, "slot.queued", None,
                                    {"key": slot["shown"], "ahead": turn.ahead}))
    waiting_for = {"kind": "slot", "step": None, "key": slot["shown"], "ahead": turn.ahead,
                   "limit": concurrency.limit, "since": slot["since"], "until": None,
                   "others": 0}
    return RunUpdate(record.id, RunStatus.WAITING, state, history, due_at=None,
                     waiting_for=waiting_for, slot_keys=(claim.key,), slot_queued=(claim,))


def key_error(exc: ExpressionError) -> dict[str, Any]:
    """The error of a run whose concurrency key does not render."""
    reason = exc.reason + (f": {exc.expression}" if exc.expression else "")
    return {"type": "expression", "message": stored_text(f"concurrency key: {reason}"),
            "step": None}

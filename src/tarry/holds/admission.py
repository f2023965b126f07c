"""Starting a held run: its conditions, the refusals decided at start, and its creation.

A run is held when its flow declares ``hold:`` or its start gives ``hold_after`` (``tarry
start --hold-after``); the two together still make at most four conditions and one ``after``.
Three refusals are decided before anything is held, each recorded as a ``refused`` run with
its token and a history entry (never retried):

- ``hold-after-beyond-max``: the ``after`` lies further out than ``hold_after_max``;
- ``check-unknown``: a check the hold names is not declared in this deployment;
- ``hold-superseded``: a run of the same flow and target is held, or cleared within the last
  :data:`SUPERSEDE_WINDOW` (decided by the store, fleet-wide, in the creating transaction).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from datetime import datetime, timedelta

from tarry.clock import iso, utc
from tarry.config import Limits
from tarry.errors import InvalidRunRequest
from tarry.holds.service import Holds
from tarry.holds.state import HoldState, Refusal, Refused, undeclared, waiting_for
from tarry.language.durations import format_duration
from tarry.language.holds import MAX_CONDITIONS
from tarry.language.model import Flow
from tarry.model import HistoryEntry, NewRun, RunStatus

__all__ = ["SUPERSEDE_WINDOW", "admit", "held_run", "hold_of", "prepared", "start_refusal"]

SUPERSEDE_WINDOW = timedelta(minutes=15)
"""How long after a hold clears a sibling start is still refused ``hold-superseded``."""


def hold_of(flow: Flow, hold_after: datetime | None) -> HoldState | None:
    """The gate of a new run of ``flow`` (None: not held); raises ``InvalidRunRequest`` when
    ``hold_after`` has no zone, or would make a second ``after`` or a fifth condition."""
    if not flow.hold and hold_after is None:
        return None
    hold = HoldState.of(flow.hold)
    if hold_after is None:
        return hold
    if hold_after.tzinfo is None:
        raise InvalidRunRequest(
            f"--hold-after needs an instant with a zone (such as {hold_after.isoformat()}Z), "
            f"got {hold_after.isoformat()}")
    if hold.after is not None:
        raise InvalidRunRequest(
            f"flow '{flow.name}' already holds its runs until {iso(hold.after)}; a hold has "
            "at most one 'after', so --hold-after cannot add another")
    if len(flow.hold) >= MAX_CONDITIONS:
        raise InvalidRunRequest(
            f"flow '{flow.name}' already has {len(flow.hold)} hold conditions; a hold has "
            f"at most {MAX_CONDITIONS}, so --hold-after cannot add one")
    return replace(hold, after=utc(hold_after))


def start_refusal(hold: HoldState, declared: Collection[str], limits: Limits,
                  now: datetime) -> Refused | None:
    """The refusal a start decides by itself, if any (``hold-superseded`` is the store's)."""
    if hold.after is not None and hold.after > now + limits.hold_after_max:
        return Refused(Refusal.HOLD_AFTER_BEYOND_MAX,
                       {"after": iso(hold.after),
                        "max": format_duration(limits.hold_after_max)})
    return undeclared(hold.checks, declared)


def held_run(run: NewRun, hold: HoldState, limits: Limits) -> NewRun:
    """``run`` (built as pending) held on ``hold``: due when its ``after`` passes (at once
    when it has none or it passed), its gate in its state."""
    due = max(run.created_at, hold.after) if hold.after else run.created_at
    return replace(run, status=RunStatus.HELD, state={"hold": hold.to_json()}, due_at=due,
                   waiting_for=waiting_for(hold, due, limits))


def prepared(holds: Holds, run: NewRun, hold: HoldState,
             created: HistoryEntry) -> tuple[NewRun, list[HistoryEntry]]:
    """What a start of ``run`` (built as pending) held on ``hold`` inserts, as decided before
    the store has a say: the held run, or the run refused by its start (beyond the maximum,
    an undeclared check). ``created`` gains the hold's conditions."""
    now = run.created_at
    created = replace(created, data={**created.data, "hold": hold.conditions()})
    refusal = start_refusal(hold, holds.checks, holds.limits, now)
    if refusal is None:
        return held_run(run, hold, holds.limits), [created]
    return _refused(run, hold, refusal), [created, _refusal_entry(refusal, now)]


def admit(holds: Holds, run: NewRun, hold: HoldState, created: HistoryEntry) -> NewRun:
    """Create ``run`` (built as pending) held on ``hold`` — or refused, with its reason;
    the run as created.

    ``created`` is the run's first history entry; the hold's conditions are added to it.
    """
    now = run.created_at
    decided, history = prepared(holds, run, hold, created)
    if decided.status is RunStatus.HELD:
        sibling = holds.store.create_held_run(decided, history,
                                              recent_since=now - SUPERSEDE_WINDOW)
        if sibling is None:
            return decided
        refusal = Refused(Refusal.HOLD_SUPERSEDED, {"sibling": sibling})
        decided = _refused(run, hold, refusal)
        history = [*history, _refusal_entry(refusal, now)]
    holds.store.create_run(decided, history)
    return decided


def _refused(run: NewRun, hold: HoldState, refusal: Refused) -> NewRun:
    return replace(run, status=RunStatus.REFUSED, state={"hold": hold.to_json()},
                   due_at=None, reason=refusal.token.value)


def _refusal_entry(refusal: Refused, now: datetime) -> HistoryEntry:
    return HistoryEntry(now, "refused", None, {"reason": refusal.token.value,
                                               **refusal.detail})

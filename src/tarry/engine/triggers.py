"""The engine's triggers: the runs an event starts, and each schedule's occurrences.

Deciding is pure (:mod:`tarry.triggers`); this module turns the decisions into runs and hands
them to the store, which inserts them in the transaction that records the event or advances
the schedule. A run a trigger starts is built like any other (inputs checked, a flow's
``hold:`` admitted); a trigger whose expressions or inputs fail starts a run refused
``trigger-invalid``, with the reason in its history, so a broken trigger is seen.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from tarry.clock import Clock
from tarry.engine.catalog import FlowCatalog
from tarry.engine.starting import new_run_id, pending_run
from tarry.errors import InvalidValue, RunError
from tarry.holds.admission import SUPERSEDE_WINDOW, hold_of, prepared
from tarry.holds.service import Holds
from tarry.language.model import Flow, ScheduleTrigger
from tarry.model import (
    CREATED,
    DebouncedStart,
    HistoryEntry,
    NewEvent,
    NewRun,
    RunStatus,
    ScheduledStart,
    ScheduleFiring,
    ScheduleRecord,
    TriggerStarts,
)
from tarry.store.aio import AsyncStore
from tarry.triggers.schedule import next_occurrence, plan_firing, schedule_key
from tarry.triggers.starts import TriggeredStart, event_starts, schedule_start
from tarry.values import ValueLimits, check_key

__all__ = ["INVALID", "TRIGGERS_FRESH", "Triggers"]

logger = logging.getLogger("tarry.triggers")

INVALID = "trigger-invalid"
"""The refusal of a run whose trigger could not compute its target or inputs."""

_DUE_BATCH = 32

TRIGGERS_FRESH = timedelta(seconds=1)
"""How long the event triggers of the flows in their files are used before every file is
looked at again: an edit in place takes effect within it, a flow file added, removed or
renamed at once."""


@dataclass(frozen=True)
class _Known:
    """The flows that declare triggers, by the event type they were looked up for, as found
    at ``at`` in the flows tree ``tree``."""

    tree: object
    at: datetime
    flows: dict[str, list[Flow]]


class Triggers:
    """The triggers of one engine's flows (the YAML flows of its flows folder).

    ``scheduled`` names the flows whose schedule triggers fire (None: every flow's); a
    scenario lets only the schedules it names fire (docs/testing.md).
    """

    def __init__(self, catalog: FlowCatalog, holds: Holds, clock: Clock,
                 limits: ValueLimits, *, scheduled: Collection[str] | None = None) -> None:
        self.catalog = catalog
        self.holds = holds
        self.clock = clock
        self.limits = limits
        self.scheduled = None if scheduled is None else frozenset(scheduled)
        self._known: _Known | None = None

    def for_event(self, event: NewEvent) -> TriggerStarts | None:
        """The runs ``event`` starts (None for an invalid event, or when no trigger fires)."""
        if event.errors:
            return None
        starts = event_starts(self._triggering_flows(event.type), event.type, event.id,
                              event.data, event.received_at)
        if not starts:
            return None
        now = event.received_at
        made = [(start, self._run_of(start, now))
                for start in (self._key_checked(start) for start in starts)]
        debounced = tuple(_debounced(start, run, history) for start, (run, history) in made
                          if start.debounce is not None and run.status is RunStatus.PENDING)
        gathered = {start.run.id for start in debounced}
        return TriggerStarts(tuple(run for _, run in made if run[0].id not in gathered),
                             supersede_since=now - SUPERSEDE_WINDOW, debounced=debounced)

    def _key_checked(self, start: TriggeredStart) -> TriggeredStart:
        """``start``, with the problem of a debounce key beyond ``[limits] key_bytes`` (its
        run is then refused ``trigger-invalid``, not debounced)."""
        if start.debounce is None or start.problem is not None:
            return start
        try:
            check_key(start.debounce[1], "the debounce key", self.limits.key_bytes)
        except InvalidValue as exc:
            return replace(start, problem=str(exc), debounce=None)
        return start

    def _triggering_flows(self, event_type: str) -> list[Flow]:
        """The flows that declare triggers and may name ``event_type`` (only the files
        whose text does are parsed): looked up in every file again once the clock has moved
        :data:`TRIGGERS_FRESH` (either way: a wall clock can be set back) or a folder of the
        flows tree changed, so that a send costs a ``stat`` of each folder, not of every
        flow file."""
        now, tree = self.clock.now(), self.catalog.tree_version()
        known = self._known
        if known is None or known.tree is not tree or abs(now - known.at) >= TRIGGERS_FRESH:
            known = self._known = _Known(tree, now, {})
        flows = known.flows.get(event_type)
        if flows is None:
            flows = known.flows[event_type] = [
                flow for flow in self.catalog.available_naming(event_type) if flow.triggers]
        return flows

    def schedules(self) -> dict[str, tuple[Flow, ScheduleTrigger]]:
        """Every schedule trigger of the flows (of the ``scheduled`` ones), by its key."""
        return {schedule_key(flow.name, trigger): (flow, trigger)
                for flow in self.catalog.available()[0] for trigger in flow.triggers
                if isinstance(trigger, ScheduleTrigger)
                and (self.scheduled is None or flow.name in self.scheduled)}

    async def sync(self, store: AsyncStore) -> None:
        """Store exactly the schedules the flows declare (a new one starts from now)."""
        now = self.clock.now()
        await store.sync_schedules([(key, flow.name, next_occurrence(trigger, now))
                                    for key, (flow, trigger) in self.schedules().items()], now)

    async def fire_due(self, store: AsyncStore) -> datetime | None:
        """Create the runs of every schedule occurrence due now; the next instant one falls
        due (None without schedules). Occurrences are the cron's, whichever worker creates
        them, so that instant is exact without asking the store."""
        now = self.clock.now()
        known = self.schedules()
        for record in await store.due_schedules(now, _DUE_BATCH) if known else []:
            firing = self._firing(record, known.get(record.key), now)
            if firing is not None:
                await store.fire_schedule(firing, now)
        return min((next_occurrence(trigger, now) for _, trigger in known.values()),
                   default=None)

    def _firing(self, record: ScheduleRecord, declared: tuple[Flow, ScheduleTrigger] | None,
                now: datetime) -> ScheduleFiring | None:
        """What to do for the due ``record``; None for a schedule this worker's flows do not
        declare (another version's: it syncs its own)."""
        if declared is None:
            logger.warning("schedule %s is due but no flow here declares it; left to the "
                           "worker whose flows do", record.key)
            return None
        flow, trigger = self.catalog.remember(declared[0]), declared[1]
        plan = plan_firing(trigger, record.handled_until, now)
        if plan.skipped:
            logger.info("schedule %s of flow %s: %d missed occurrence(s) not created "
                        "(catch_up: %s)", record.key, flow.name, plan.skipped,
                        trigger.catch_up)
        starts = tuple(self._scheduled(flow, trigger, record.key, at, now) for at in plan.fire)
        return ScheduleFiring(record, handled_until=now, next_at=plan.next_at, starts=starts,
                              supersede_since=now - SUPERSEDE_WINDOW)

    def _scheduled(self, flow: Flow, trigger: ScheduleTrigger, key: str, at: datetime,
                   now: datetime) -> ScheduledStart:
        start = schedule_start(flow, trigger, key, at, now)
        run, history = self._run_of(start, now)
        assert start.key is not None
        return ScheduledStart(run, history, occurrence=start.key, scheduled_at=at)

    def _run_of(self, start: TriggeredStart, now: datetime
                ) -> tuple[NewRun, tuple[HistoryEntry, ...]]:
        """The run ``start`` inserts: pending, held (or refused by its hold), or refused
        ``trigger-invalid``."""
        flow = self.catalog.remember(start.flow)
        origin = start.origin
        try:
            if start.problem is not None:
                raise RunError(start.problem)
            run, created = pending_run(flow, start.inputs, start.target, now,
                                       run_id=new_run_id(), limits=self.limits,
                                       origin=origin)
        except (RunError, InvalidValue) as exc:
            return _invalid(flow, start, now, str(exc))
        hold = hold_of(flow, None)
        if hold is None:
            return run, (created,)
        decided, history = prepared(self.holds, run, hold, created)
        return decided, tuple(history)


def _debounced(start: TriggeredStart, run: NewRun,
               history: tuple[HistoryEntry, ...]) -> DebouncedStart:
    """The start of a debounced trigger, for the store to gather into its key's burst."""
    assert start.debounce is not None
    trigger, key, debounce = start.debounce
    created = replace(history[0], data={**history[0].data, "debounce": {"key": key}})
    return DebouncedStart(run, (created, *history[1:]), trigger, key, debounce.period,
                          debounce.max_delay)


def _invalid(flow: Flow, start: TriggeredStart, now: datetime,
             reason: str) -> tuple[NewRun, tuple[HistoryEntry, ...]]:
    """A run refused because its trigger could not make a valid start of ``flow``."""
    details: Mapping[str, Any] = {**({"target": start.target} if start.target else {}),
                                  **start.origin}
    run = NewRun(id=new_run_id(), flow=flow.name, flow_digest=flow.digest,
                 status=RunStatus.REFUSED, inputs={}, target=start.target, created_at=now,
                 due_at=None, reason=INVALID)
    return run, (HistoryEntry(now, CREATED, None, dict(details)),
                 HistoryEntry(now, "refused", None, {"reason": INVALID, "message": reason}))


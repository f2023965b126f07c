"""The runs a scenario's triggers started, named and ordered for ``expect.runs``. Pure.

A run a trigger started says so in its ``created`` history entry (``trigger: event`` with the
event's type and id, or ``trigger: schedule`` with the occurrence's instant). It is named by
its flow, its target and (for a schedule occurrence) that instant; what started it is the
scripted event that did, when one did.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tarry.clock import from_iso
from tarry.language.model import EventTrigger, Flow
from tarry.model import CREATED, EventState
from tarry.scenarios.model import RunIdentity, describe_identity

__all__ = ["StartedRun", "event_triggered", "started_none", "started_runs"]


@dataclass(frozen=True)
class StartedRun:
    """A run a trigger started: its name (flow, target, occurrence), its run document, and
    what started it (``events[0] (github.issues)``, ``its schedule``)."""

    identity: RunIdentity
    document: Mapping[str, Any]
    cause: str

    def describe(self) -> str:
        """``deploy acme/web#7, started by events[0] (github.issues)``."""
        return f"{describe_identity(self.identity)}, started by {self.cause}"


def started_runs(documents: Iterable[Mapping[str, Any]],
                 causes: Mapping[str, str]) -> tuple[StartedRun, ...]:
    """The runs of ``documents`` (run documents with history) that a trigger started, in the
    order they were created; ``causes`` names, by run id, the scripted event that started
    each run it started, in the order the events were sent."""
    order = {run_id: index for index, run_id in enumerate(causes)}
    started = [(document, origin) for document in documents
               if (origin := _origin(document)) is not None]
    started.sort(key=lambda pair: (pair[0]["created_at"], order.get(pair[0]["id"], len(order)),
                                   pair[1].get("scheduled_at", ""), pair[0]["id"]))
    return tuple(StartedRun(_identity(document, origin), document,
                            causes.get(document["id"]) or _cause(origin))
                 for document, origin in started)


def _origin(document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``created`` entry's data, when a trigger started the run."""
    history = document["history"]
    created = history[0]["data"] if history and history[0]["kind"] == CREATED else {}
    return created if created.get("trigger") in ("event", "schedule") else None


def _identity(document: Mapping[str, Any], origin: Mapping[str, Any]) -> RunIdentity:
    scheduled_at = origin.get("scheduled_at") if origin["trigger"] == "schedule" else None
    return (document["flow"], document["target"],
            from_iso(scheduled_at) if scheduled_at is not None else None)


def _cause(origin: Mapping[str, Any]) -> str:
    """What started a run no scripted event started: its schedule, or an event a run sent."""
    if origin["trigger"] == "schedule":
        return "its schedule"
    return f"event '{origin['event_id']}' ({origin['event_type']}), which a run sent"


def event_triggered(flows: Iterable[Flow]) -> dict[str, set[str]]:
    """The flows with an event trigger on each event type, by type."""
    triggered: dict[str, set[str]] = {}
    for flow in flows:
        for trigger in flow.triggers:
            if isinstance(trigger, EventTrigger):
                triggered.setdefault(trigger.event, set()).add(flow.name)
    return triggered


def started_none(event: str, event_type: str, state: EventState,
                 triggered: Collection[str]) -> str:
    """Why the scripted ``event`` (``events[1] (github.issues)``) started no run, given its
    state and the flows with a trigger on its type."""
    if state is EventState.INVALID:
        why = "it was invalid (quarantined, it starts nothing)"
    elif state is EventState.DUPLICATE:
        why = "it was a duplicate (an event id starts its runs once)"
    elif not triggered:
        why = f"no flow has a trigger on {event_type}"
    else:
        flows = ", ".join(f"'{flow}'" for flow in sorted(triggered))
        why = f"the 'if' of every trigger on {event_type} (of {flows}) was false for it"
    return f"{event} started no run: {why}"

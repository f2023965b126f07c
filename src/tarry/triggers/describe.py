"""How a trigger is shown: one document per trigger, the same for the CLI, the API and the
dashboard (``tarry triggers``, ``GET /v1/flows``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from tarry.clock import iso
from tarry.language.durations import format_duration
from tarry.language.model import Debounce, EventTrigger, Flow, Template, Trigger
from tarry.model import DebounceRecord
from tarry.triggers.schedule import next_occurrence, schedule_key
from tarry.triggers.starts import trigger_id

__all__ = ["PENDING_SHOWN", "trigger_document", "trigger_summary"]

PENDING_SHOWN = 1000
"""The most pending debounced bursts a listing shows, soonest first."""


def trigger_document(flow: Flow, trigger: Trigger, now: datetime,
                     pending: Iterable[DebounceRecord] = ()) -> dict[str, Any]:
    """``{flow, kind, …}``: an event trigger's type and condition (and its ``debounce``,
    with the bursts of ``pending`` that are this trigger's), or a schedule's cron, zone,
    catch-up policy, key and next fire time after ``now``."""
    common = {"flow": flow.name, "target": _written(trigger.target),
              "inputs": trigger.inputs, "line": trigger.pos.line}
    if isinstance(trigger, EventTrigger):
        document = {**common, "kind": "event", "event": trigger.event,
                    "if": _written(trigger.condition)}
        if trigger.debounce is not None:
            document["debounce"] = _debounce(trigger.debounce, [
                burst for burst in pending if burst.trigger == trigger_id(flow, trigger)])
        return document
    return {**common, "kind": "schedule", "schedule": trigger.cron,
            "timezone": trigger.timezone, "catch_up": trigger.catch_up,
            "key": schedule_key(flow.name, trigger),
            "next_at": iso(next_occurrence(trigger, now))}


def trigger_summary(document: dict[str, Any]) -> str:
    """One line: ``on each forge.label event if {{ … }}`` or ``0 9 * * mon-fri in
    Europe/Berlin (catch up: latest), next 2026-10-26T08:00:00.000Z``."""
    if document["kind"] == "event":
        condition = document["if"]
        when = f" if {condition}" if isinstance(condition, str) else ""
        return f"on each {document['event']} event{when}{_debounced(document.get('debounce'))}"
    return (f"{document['schedule']} in {document['timezone']} (catch up: "
            f"{document['catch_up']}), next {document['next_at']}")


def _debounce(debounce: Debounce, bursts: list[DebounceRecord]) -> dict[str, Any]:
    return {"key": _written(debounce.key), "period": format_duration(debounce.period),
            "max": None if debounce.max_delay is None else format_duration(debounce.max_delay),
            "pending": [{"key": burst.key, "run": burst.run_id, "fire_at": iso(burst.fire_at),
                         "events": burst.events, "first_at": iso(burst.first_at),
                         "last_at": iso(burst.last_at)} for burst in bursts]}


def _debounced(debounce: Any) -> str:
    """``, debounced 5m (at most 30m) by {{ event.repo }}; pending: acme/web at …``."""
    if debounce is None:
        return ""
    longest = f" (at most {debounce['max']})" if debounce["max"] else ""
    key = f" by {debounce['key']}" if debounce["key"] else ""
    pending = "; ".join(f"'{burst['key']}' starts at {burst['fire_at']} "
                        f"({burst['events']} event{'s' if burst['events'] > 1 else ''})"
                        for burst in debounce["pending"])
    return f", debounced {debounce['period']}{longest}{key}" + (
        f"; pending: {pending}" if pending else "")


def _written(value: Template | str | bool | None) -> str | bool | None:
    """A template as its source, other values as they are."""
    return value.source if isinstance(value, Template) else value


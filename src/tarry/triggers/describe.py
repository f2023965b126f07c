"""How a trigger is shown: one document per trigger, the same for the CLI, the API and the
dashboard (``tarry triggers``, ``GET /v1/flows``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tarry.clock import iso
from tarry.language.model import EventTrigger, Flow, Template, Trigger
from tarry.triggers.schedule import next_occurrence, schedule_key

__all__ = ["trigger_document", "trigger_summary"]


def trigger_document(flow: Flow, trigger: Trigger, now: datetime) -> dict[str, Any]:
    """``{flow, kind, …}``: an event trigger's type and condition, or a schedule's cron,
    zone, catch-up policy, key and next fire time after ``now``."""
    common = {"flow": flow.name, "target": _written(trigger.target),
              "inputs": trigger.inputs, "line": trigger.pos.line}
    if isinstance(trigger, EventTrigger):
        return {**common, "kind": "event", "event": trigger.event,
                "if": _written(trigger.condition)}
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
        return f"on each {document['event']} event{when}"
    return (f"{document['schedule']} in {document['timezone']} (catch up: "
            f"{document['catch_up']}), next {document['next_at']}")


def _written(value: Template | str | bool | None) -> str | bool | None:
    """A template as its source, other values as they are."""
    return value.source if isinstance(value, Template) else value


"""Which runs a trigger starts, and with what: pure evaluation of ``on:`` against an occasion.

An *occasion* is what a trigger's expressions see as ``event``: an event's payload for an
event trigger, ``{scheduled_at, schedule, timezone}`` for a schedule occurrence. Evaluating a
trigger gives a :class:`TriggeredStart` (the flow, inputs, target and where it came from) —
or nothing, when its ``if`` is false. An expression that fails (a payload without the field
the target reads, say) still gives a start, carrying the problem: the engine records it as a
failed run, so a broken trigger is seen rather than silently starting nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tarry.clock import iso
from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, render
from tarry.language.model import (
    Debounce,
    EventTrigger,
    Flow,
    ScheduleTrigger,
    Template,
    Trigger,
)

__all__ = ["TriggeredStart", "event_starts", "occurrence", "schedule_start", "trigger_id"]


@dataclass(frozen=True)
class TriggeredStart:
    """A run a trigger asks for. ``origin`` is recorded in the run's ``created`` entry;
    ``problem``, when set, is why the trigger's expressions could not be evaluated."""

    flow: Flow
    inputs: dict[str, Any]
    target: str | None
    origin: dict[str, Any]
    problem: str | None = None
    key: str | None = field(default=None)
    """For a schedule occurrence: its unique key (the store creates it at most once)."""
    debounce: tuple[str, str, Debounce] | None = None
    """For a debounced event trigger: the trigger (``flow#index``), the event's key and the
    trigger's ``debounce``."""


def event_starts(flows: Iterable[Flow], event_type: str, event_id: str, data: Any,
                 now: datetime) -> list[TriggeredStart]:
    """The starts an event of ``event_type`` asks for across ``flows``, one per matching
    trigger (a flow with two matching triggers starts two runs)."""
    origin = {"trigger": "event", "event_type": event_type, "event_id": event_id}
    return [start for flow in flows for index, trigger in enumerate(flow.triggers)
            if isinstance(trigger, EventTrigger) and trigger.event == event_type
            and (start := _evaluate(flow, trigger, data, now,
                                    {**origin, "index": index})) is not None]


def occurrence(trigger: ScheduleTrigger, scheduled_at: datetime) -> dict[str, Any]:
    """What a schedule trigger's expressions see as ``event`` for one occurrence."""
    return {"scheduled_at": iso(scheduled_at), "schedule": trigger.cron,
            "timezone": trigger.timezone}


def schedule_start(flow: Flow, trigger: ScheduleTrigger, schedule_key: str,
                   scheduled_at: datetime, now: datetime) -> TriggeredStart:
    """The start of one occurrence of a schedule (its ``if``-less trigger always fires)."""
    origin = {"trigger": "schedule", "schedule": schedule_key,
              "scheduled_at": iso(scheduled_at)}
    start = _evaluate(flow, trigger, occurrence(trigger, scheduled_at), now, origin)
    assert start is not None  # a schedule trigger has no condition
    return TriggeredStart(start.flow, start.inputs, start.target, start.origin, start.problem,
                          key=f"{schedule_key}@{iso(scheduled_at)}")


def _evaluate(flow: Flow, trigger: Trigger, occasion: Any, now: datetime,
              origin: dict[str, Any]) -> TriggeredStart | None:
    scope = {"event": occasion}
    context = EvalContext(now=now, timezone=flow.timezone)
    try:
        condition = trigger.condition if isinstance(trigger, EventTrigger) else True
        if not _holds(condition, scope, context):
            return None
        inputs = render(trigger.inputs, scope, context)
        target = _target(trigger.target, scope, context)
        debounce = _debounce(flow, trigger, scope, context)
    except ExpressionError as exc:
        return TriggeredStart(flow, {}, None, origin, problem=f"trigger at line "
                              f"{trigger.pos.line}: {exc}")
    return TriggeredStart(flow, dict(inputs), target, origin, debounce=debounce)


def _debounce(flow: Flow, trigger: Trigger, scope: Mapping[str, Any], context: EvalContext
              ) -> tuple[str, str, Debounce] | None:
    """The burst a debounced event trigger's start joins: (``flow#index``, key)."""
    if not isinstance(trigger, EventTrigger) or trigger.debounce is None:
        return None
    key = trigger.debounce.key
    value = "" if key is None else render(key.source, scope, context)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ExpressionError(f"a debounce's 'key' must give a string or a number, got "
                              f"{value!r}", expression="" if key is None else key.source)
    return trigger_id(flow, trigger), str(value), trigger.debounce


def trigger_id(flow: Flow, trigger: Trigger) -> str:
    """How the store names one trigger of a flow (a debounced one's bursts): ``flow#index``,
    its place in the flow's ``on:``."""
    return f"{flow.name}#{flow.triggers.index(trigger)}"


def _holds(condition: Template | bool, scope: Mapping[str, Any], context: EvalContext) -> bool:
    """The truth of ``if``, as a step's ``if`` is read."""
    if isinstance(condition, bool):
        return condition
    return bool(render(condition.source, scope, context))


def _target(target: Template | str | None, scope: Mapping[str, Any],
            context: EvalContext) -> str | None:
    if target is None or isinstance(target, str):
        return target
    value = render(target.source, scope, context)
    if not isinstance(value, str | int) or isinstance(value, bool) or value == "":
        raise ExpressionError(f"'target' must give a non-empty string, got {value!r}",
                              expression=target.source)
    return str(value)

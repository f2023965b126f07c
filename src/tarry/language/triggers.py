"""Reading a flow's ``on:`` triggers: the events and schedules that start its runs.

An event trigger's expressions (``if``, ``target``, ``inputs``) see ``event``, the payload of
the event that arrived; a schedule trigger's see ``event`` too, as the occurrence
``{scheduled_at, schedule, timezone}``. Triggers are checked as strictly as steps: the event
type must be declared, the cron expression must parse, the zone must exist, and the inputs a
trigger gives must be the flow's own, covering every required one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from zoneinfo import available_timezones

from cronsim import CronSim, CronSimError

from tarry._suggest import did_you_mean
from tarry.language.context import LoadContext
from tarry.language.durations import parse_zone
from tarry.language.eventcheck import check_event_type
from tarry.language.fields import (
    Fields,
    holds_template,
    read_choice,
    read_if,
    read_mapping,
    read_name,
    read_text,
)
from tarry.language.model import (
    CatchUp,
    EventTrigger,
    InputSpec,
    Position,
    ScheduleTrigger,
    Template,
    Trigger,
    Value,
)
from tarry.language.pacing import read_debounce
from tarry.language.yamlsource import YamlMap, YamlNode, YamlSeq, describe

__all__ = ["CATCH_UP_POLICIES", "TRIGGER_NEAR_MISSES", "read_triggers"]

CATCH_UP_POLICIES: tuple[CatchUp, ...] = ("latest", "none", "all")
"""What a schedule creates after downtime; the first is the default."""

_ON = ": a flow's triggers are 'on:', a list of '- event: <type>' or '- schedule: <cron>'"
TRIGGER_NEAR_MISSES: Mapping[str, str] = dict.fromkeys(
    ("trigger", "triggers", "on_event", "on_events", "cron", "schedule", "schedules", "when"),
    _ON)
"""Flow-level keys people write for ``on:``, and the hint each gets."""

_EVENT_KEYS = ("event", "if", "target", "inputs", "debounce")
_SCHEDULE_KEYS = ("schedule", "timezone", "catch_up", "target", "inputs")
_ENTRY_NEAR_MISSES = {
    "cron": " (did you mean 'schedule'?)",
    "on_event": " (did you mean 'event'?)",
    "type": " (did you mean 'event'?)",
    "tz": " (did you mean 'timezone'?)",
    "zone": " (did you mean 'timezone'?)",
    "when": " (did you mean 'if'?)",
    "condition": " (did you mean 'if'?)",
    "filter": " (did you mean 'if'?)",
    "debounced": " (did you mean 'debounce'?)",
    "throttle": " (a throttle paces the flow's starts: write it at flow level)",
}
_KINDS = {"event": (_EVENT_KEYS, "in an event trigger"),
          "schedule": (_SCHEDULE_KEYS, "in a schedule trigger")}
_TRIGGER_SCOPE = frozenset({"event"})
_CRON_PROBE = datetime(2026, 1, 1, tzinfo=UTC)


def read_triggers(ctx: LoadContext, node: YamlNode, key: str,
                  inputs: Mapping[str, InputSpec]) -> tuple[Trigger, ...]:
    """The triggers of ``on:``; ``inputs`` are the flow's declared inputs."""
    if not isinstance(node, YamlSeq) or not node.items:
        got = "an empty list" if isinstance(node, YamlSeq) else describe(node)
        ctx.report(node.pos, f"'on' must be a non-empty list of triggers, each '- event: "
                             f"<type>' or '- schedule: <cron>', got {got}")
        return ()
    scoped = replace(ctx, visible=_TRIGGER_SCOPE,
                     scope_hint=" (a trigger's expressions see only 'event')")
    return tuple(trigger for item in node.items
                 if (trigger := _read_trigger(scoped, item, inputs)) is not None)


def _read_trigger(ctx: LoadContext, node: YamlNode,
                  inputs: Mapping[str, InputSpec]) -> Trigger | None:
    if not isinstance(node, YamlMap):
        ctx.report(node.pos, f"a trigger is a mapping with 'event' or 'schedule', "
                             f"got {describe(node)}")
        return None
    kinds = [kind for kind in ("event", "schedule") if node.get(kind) is not None]
    if len(kinds) == 2:
        ctx.report(node.pos, "a trigger has either 'event' or 'schedule', not both")
        return None
    if not kinds:
        Fields(ctx, node, "in a trigger", allowed=(*_EVENT_KEYS, *_SCHEDULE_KEYS),
               near_misses=_ENTRY_NEAR_MISSES)
        ctx.report(node.pos, "a trigger needs 'event: <type>' or 'schedule: <cron>'")
        return None
    allowed: tuple[str, ...]
    allowed, where = _KINDS[kinds[0]]
    if kinds == ["schedule"] and (debounce := node.get("debounce")) is not None:
        ctx.report(debounce.key_pos, "'debounce' applies to event triggers only (a schedule "
                                     "fires once per occurrence: nothing to debounce)")
        allowed = (*allowed, "debounce")
    fields = Fields(ctx, node, where, allowed=allowed, near_misses=_ENTRY_NEAR_MISSES)
    target = fields.read("target", _read_target, None)
    no_inputs: dict[str, Value] = {}
    given = fields.read("inputs", _read_inputs, no_inputs)
    _check_inputs(ctx, node, given, inputs)
    if kinds == ["event"]:
        always: Template | bool = True
        return EventTrigger(event=fields.read("event", _read_event_type, ""), pos=node.pos,
                            condition=fields.read("if", read_if, always), target=target,
                            inputs=given, debounce=fields.read("debounce", read_debounce, None))
    return ScheduleTrigger(cron=fields.read("schedule", _read_cron, ""),
                           timezone=_read_required_zone(ctx, node),
                           pos=node.pos,
                           catch_up=_catch_up(fields.read("catch_up",
                                                          read_choice(CATCH_UP_POLICIES),
                                                          "latest")),
                           target=target, inputs=given)


def _read_event_type(ctx: LoadContext, node: YamlNode, key: str) -> str:
    name = read_name(ctx, node, key)
    check_event_type(ctx, node)
    return name


def _read_cron(ctx: LoadContext, node: YamlNode, key: str) -> str:
    expression = read_text(ctx, node, key)
    if not expression:
        return expression
    try:
        CronSim(expression, _CRON_PROBE)
    except CronSimError as exc:
        ctx.report(node.pos, f"'schedule' is not a cron expression ({exc}): '{expression}' "
                             "(five fields: minute hour day-of-month month day-of-week, "
                             "such as '0 9 * * mon-fri')")
    return expression


def _read_required_zone(ctx: LoadContext, node: YamlMap) -> str:
    entry = node.get("timezone")
    if entry is None:
        ctx.report(node.pos, "missing 'timezone' in a schedule trigger (an IANA zone such as "
                             "Europe/Berlin: a schedule fires at local times)")
        return "UTC"
    name = read_text(ctx, entry.value, "timezone")
    try:
        parse_zone(name)
    except ValueError:
        hint = (did_you_mean(name, available_timezones())
                or " (use an IANA name such as Europe/Berlin)")
        ctx.report(entry.value.pos, f"unknown timezone '{name}'{hint}")
        return "UTC"
    return name


def _catch_up(name: str) -> CatchUp:
    return next((policy for policy in CATCH_UP_POLICIES if policy == name), "latest")


def _read_target(ctx: LoadContext, node: YamlNode, key: str) -> Template | str:
    if holds_template(node):
        return ctx.template(str(node.value), node.pos)
    return read_text(ctx, node, key)


def _read_inputs(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, Value]:
    mapping = read_mapping(ctx, node, key, " of input name to value")
    if mapping is None:
        return {}
    return {entry.key: ctx.value(entry.value) for entry in mapping.entries}


def _check_inputs(ctx: LoadContext, node: YamlMap, given: Mapping[str, Value],
                  declared: Mapping[str, InputSpec]) -> None:
    """Report inputs the flow does not declare, and required ones the trigger leaves out."""
    entry = node.get("inputs")
    positions: dict[str, Position] = {}
    if entry is not None and isinstance(entry.value, YamlMap):
        positions = {item.key: item.key_pos for item in entry.value.entries}
    for name in given:
        if name not in declared:
            ctx.report(positions.get(name, node.pos),
                       f"the flow has no input '{name}'{did_you_mean(name, declared)}")
    missing = [name for name, spec in declared.items() if spec.required and name not in given]
    if missing:
        names = ", ".join(f"'{name}'" for name in missing)
        ctx.report(node.pos, f"this trigger gives no value for the required input(s) {names} "
                             "(add them under 'inputs:')")

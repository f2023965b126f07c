"""Loading a scenario file into a validated :class:`~tarry.scenarios.model.Scenario`.

Scenario files are read as strictly as flows, with the same YAML reading and the same field
readers: an unknown key (with a suggestion when one is close), a bad duration, a zone-less
``start`` — every problem in the file is reported at once, as ``file:line:column: message``,
in a :class:`~tarry.errors.LoadError`. Whether the named flow exists, takes the inputs and
waits for the event types is decided later, against the project (``resolve``).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

from tarry._suggest import did_you_mean
from tarry.clock import iso
from tarry.errors import LoadError, Problem
from tarry.files import FILE_BYTES, read_source
from tarry.language.context import IDENTIFIER_PATTERN, LoadContext
from tarry.language.fields import (
    Fields,
    read_choice,
    read_duration,
    read_instant,
    read_items,
    read_mapping,
    read_name,
    read_positive_duration,
    read_text,
)
from tarry.language.model import Position
from tarry.language.yamlsource import (
    YamlMap,
    YamlNode,
    YamlScalar,
    YamlSeq,
    describe,
    read_yaml,
    to_plain,
)
from tarry.scenarios.checks import read_checks
from tarry.scenarios.expectations import RUN_KINDS, read_expect, read_runs
from tarry.scenarios.model import (
    DEFAULT_HORIZON,
    DEFAULT_START,
    Answer,
    Downtime,
    Expectation,
    FlowStub,
    Scenario,
    ScriptedEvent,
    ScriptedTask,
    Stub,
    StubFailure,
)

__all__ = ["FLOW_SUFFIXES", "STEP_PATH_PATTERN", "load_scenario", "parse_scenario"]

FLOW_SUFFIXES = (".yaml", ".yml")
"""A ``flow:`` ending in one of these is a file path; anything else is a flow name."""

STEP_PATH_PATTERN = rf"{IDENTIFIER_PATTERN}(?:\[\d+\])?(?:\.{IDENTIFIER_PATTERN}(?:\[\d+\])?)*"
"""A step's path as history records it: ``ask``, ``review.ask``, ``polls[2].check``."""
_STEP_PATH = re.compile(STEP_PATH_PATTERN)

_SCENARIO_KEYS = ("scenario", "description", "flow", "inputs", "target", "start", "horizon",
                  "stub", "stub_flows", "checks", "schedules", "downtime", "events", "tasks",
                  "expect")
_DOWNTIME_KEYS = ("from", "until")
_SCENARIO_NEAR_MISSES = {
    "runs": " ('runs' is an expectation: write it under 'expect')",
    "triggers": " (an event's triggers fire when the scenario sends it under 'events'; "
                "'schedules' lists the flows whose schedule triggers fire)",
    "holds": " (did you mean 'checks'? the hold checks a scenario stubs or runs)",
}
_OWN_RUN = ("needs 'flow:': without it the scenario starts no run of its own (its runs are "
            "those triggers start)")
_EVENT_KEYS = ("type", "data", "id", "after", "after_step")
_TASK_KEYS = ("task", "outcome", "data", "as", "after")
_FAILURE_KEYS = ("fail", "type")
_ANSWER_SHAPE = "a result mapping, null, or { fail: message }"

_READ_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (FileNotFoundError, "file not found"),
    (IsADirectoryError, "is a directory, not a scenario file"),
    (UnicodeDecodeError, "the file is not UTF-8 text"),
)


def load_scenario(path: Path, max_bytes: int = FILE_BYTES) -> Scenario:
    """Read and validate the scenario file at ``path`` (refused before it is read if it is
    over ``max_bytes``); ``LoadError`` lists every problem."""
    try:
        text = read_source(path, max_bytes)
    except (OSError, UnicodeDecodeError) as exc:
        message = next((why for kind, why in _READ_ERRORS if isinstance(exc, kind)),
                       f"cannot read the file ({getattr(exc, 'strerror', exc)})")
        raise LoadError([Problem(str(path), 1, 1, message)]) from None
    return parse_scenario(text, str(path))


def parse_scenario(text: str, path: str) -> Scenario:
    """Validate the scenario source ``text``; ``path`` is used in positions."""
    ctx = LoadContext(file=path, actions=frozenset())
    root, problems = read_yaml(text, path)
    ctx.problems.extend(problems)
    scenario = None
    if isinstance(root, YamlMap):
        scenario = _read_scenario(ctx, root)
    elif root is not None:
        ctx.report(root.pos, "a scenario file must be a mapping (scenario:, flow:, expect:, "
                             f"…), got {describe(root)}")
    elif not problems:
        ctx.problems.append(Problem(path, 1, 1, "the file is empty; a scenario needs at least "
                                                "'scenario:', 'flow:' (or 'events' that start "
                                                "runs) and 'expect:'"))
    if scenario is None or ctx.problems:
        raise LoadError(sorted(dict.fromkeys(ctx.problems),
                               key=lambda problem: (problem.line, problem.column)))
    return scenario


def _read_scenario(ctx: LoadContext, root: YamlMap) -> Scenario:
    fields = Fields(ctx, root, "at scenario level", allowed=_SCENARIO_KEYS,
                    required={"scenario": " (the scenario's name)",
                              "expect": " (what the run must come to)"},
                    near_misses=_SCENARIO_NEAR_MISSES)
    flow, inputs = fields.entry("flow"), fields.entry("inputs")
    stubs: tuple[Stub, ...] = fields.read("stub", _read_stubs, ())
    flow_stubs: tuple[FlowStub, ...] = fields.read("stub_flows", _read_flow_stubs, ())
    events: tuple[ScriptedEvent, ...] = fields.read("events", _read_events, ())
    tasks: tuple[ScriptedTask, ...] = fields.read("tasks", _read_tasks, ())
    expectations: tuple[Expectation, ...] = fields.read("expect", read_expect, ())
    expect, schedules = fields.entry("expect"), fields.entry("schedules")
    start: datetime | None = fields.read("start", read_instant, None)
    horizon = fields.read("horizon", read_positive_duration, DEFAULT_HORIZON)
    runs = expect.value.get("runs") if expect and isinstance(expect.value, YamlMap) else None
    _check_counted_calls(ctx, expectations, stubs)
    _check_event_states(ctx, expectations, events)
    if flow is None and not fields.suggested("flow"):
        _check_without_flow(ctx, root, expectations, events)
    if schedules is not None and fields.entry("horizon") is None:
        ctx.report(schedules.key_pos, "'schedules' needs 'horizon' (how long the schedules "
                                      "fire, such as 7d)")
    return Scenario(
        name=fields.read("scenario", read_name, ""),
        path=ctx.file,
        flow=fields.read("flow", _read_flow_ref, None),
        flow_pos=flow.value.pos if flow else root.pos,
        expectations=expectations,
        description=fields.read("description", read_text, ""),
        inputs=fields.read("inputs", _read_inputs, {}),
        inputs_pos=inputs.value.pos if inputs else None,
        target=fields.read("target", read_text, None),
        start=start,
        horizon=horizon,
        stubs=stubs,
        flow_stubs=flow_stubs,
        events=events,
        tasks=tasks,
        checks=fields.read("checks", read_checks, ()),
        schedules=fields.read("schedules", _read_schedules, {}),
        downtime=_checked_downtime(ctx, fields.read("downtime", _read_downtime, ()),
                                   start or DEFAULT_START, horizon),
        runs=read_runs(ctx, runs.value, "runs") if runs else (),
        runs_pos=runs.key_pos if runs else None,
    )


def _read_flow_ref(ctx: LoadContext, node: YamlNode, key: str) -> str:
    text = read_text(ctx, node, key)
    return text if text.endswith(FLOW_SUFFIXES) else read_name(ctx, node, key)


def _read_inputs(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, object]:
    mapping = read_mapping(ctx, node, key, " of input name to value")
    return {} if mapping is None else dict(to_plain(mapping))


def _read_schedules(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, Position]:
    if not isinstance(node, YamlSeq):
        ctx.report(node.pos, f"'{key}' must be a list of the flows whose schedule triggers "
                             f"fire, such as [report], got {describe(node)}")
        return {}
    if not node.items:
        ctx.report(node.pos, f"'{key}' must name at least one flow")
    named: dict[str, Position] = {}
    for index, item in enumerate(node.items):
        name = read_name(ctx, item, f"{key}[{index}]")
        if name in named:
            ctx.report(item.pos, f"'{key}' names flow '{name}' twice")
        named.setdefault(name, item.pos)
    return named


def _read_downtime(ctx: LoadContext, node: YamlNode, key: str) -> tuple[Downtime, ...]:
    return read_items(ctx, node, key, "spans such as '- { from: 2026-10-23T18:00:00Z, until: "
                                      "2026-10-26T10:00:00Z }'", _read_span)


def _read_span(ctx: LoadContext, node: YamlNode, where: str) -> Downtime | None:
    mapping = read_mapping(ctx, node, where, " such as { from: 2026-10-23T18:00:00Z, until: "
                                             "2026-10-26T10:00:00Z }")
    if mapping is None:
        return None
    fields = Fields(ctx, mapping, f"in {where}", allowed=_DOWNTIME_KEYS,
                    required={"from": " (the instant every worker stops)",
                              "until": " (the instant the workers are back)"})
    begins, ends = fields.read("from", read_instant, None), fields.read("until", read_instant, None)
    if begins is None or ends is None:
        return None
    if ends <= begins:
        ctx.report(mapping.pos, f"{where} must end after it begins")
    return Downtime(begins, ends, mapping.pos)


def _checked_downtime(ctx: LoadContext, spans: tuple[Downtime, ...], start: datetime,
                      horizon: timedelta) -> tuple[Downtime, ...]:
    """The spans lie between the start and the horizon, each after the one before it."""
    for index, span in enumerate(spans):
        if span.begins < start:
            ctx.report(span.pos, f"downtime[{index}] begins before the scenario's start "
                                 f"({iso(start)})")
        if span.ends > start + horizon:
            ctx.report(span.pos, f"downtime[{index}] ends past the horizon "
                                 f"({iso(start + horizon)})")
        if index and span.begins < spans[index - 1].ends:
            ctx.report(span.pos, f"downtime[{index}] begins before downtime[{index - 1}] ends")
    return spans


# --- stubs ------------------------------------------------------------------------------------

def _read_stubs(ctx: LoadContext, node: YamlNode, key: str) -> tuple[Stub, ...]:
    mapping = read_mapping(ctx, node, key, " of action name to its result")
    if mapping is None:
        return ()
    return tuple(Stub(entry.key, _read_answers(ctx, entry.value, f"stub '{entry.key}'"))
                 for entry in mapping.entries)


def _read_flow_stubs(ctx: LoadContext, node: YamlNode, key: str) -> tuple[FlowStub, ...]:
    mapping = read_mapping(ctx, node, key, " of flow name to the outcome of its child runs")
    if mapping is None:
        return ()
    return tuple(_read_flow_stub(ctx, entry.key, entry.value) for entry in mapping.entries)


def _read_flow_stub(ctx: LoadContext, name: str, node: YamlNode) -> FlowStub:
    where = f"stub_flows '{name}'"
    outcome = read_mapping(ctx, node, where, " such as { exit: approved } or "
                                             "{ status: failed, message: declined }")
    if outcome is None:
        return FlowStub(name, node.pos)
    fields = Fields(ctx, outcome, f"in {where}",
                    allowed=("status", "exit", "result", "message"))
    status = fields.read("status", read_choice(("succeeded", "failed")), "succeeded")
    given = {key for key in ("exit", "result", "message") if fields.entry(key) is not None}
    if status == "succeeded" and given >= {"exit", "result"}:
        ctx.report(outcome.pos, f"{where} gives 'exit' or 'result', not both (a flow "
                                "that returns a result exits 'completed')")
    if status == "succeeded" and "message" in given:
        ctx.report(outcome.pos, f"{where}: 'message' is the failure's; add status: failed")
    if status == "failed" and given & {"exit", "result"}:
        ctx.report(outcome.pos, f"{where}: a failed child has no 'exit' or 'result'")
    result = fields.entry("result")
    return FlowStub(name, node.pos, status=status, exit=fields.read("exit", read_name, None),
                    result=None if result is None else to_plain(result.value),
                    message=fields.read("message", read_text, "stubbed failure"
                                        if status == "failed" else None))


def _read_answers(ctx: LoadContext, node: YamlNode, where: str) -> tuple[Answer, ...]:
    """A single answer for every call, or a list of answers, one per call."""
    if not isinstance(node, YamlSeq):
        return (_read_answer(ctx, node, where),)
    if not node.items:
        ctx.report(node.pos, f"{where} must list at least one answer")
    return tuple(_read_answer(ctx, item, f"{where}[{index}]")
                 for index, item in enumerate(node.items))


def _read_answer(ctx: LoadContext, node: YamlNode, where: str) -> Answer:
    if isinstance(node, YamlScalar) and node.value is None:
        return None
    if not isinstance(node, YamlMap):
        ctx.report(node.pos, f"{where} must be {_ANSWER_SHAPE}, got {describe(node)}")
        return None
    if node.get("fail") is None:
        return dict(to_plain(node))
    fields = Fields(ctx, node, f"in the failing answer of {where}", allowed=_FAILURE_KEYS)
    return StubFailure(fields.read("fail", read_text, ""),
                       fields.read("type", read_name, StubFailure("").type))


# --- events -----------------------------------------------------------------------------------

def _read_events(ctx: LoadContext, node: YamlNode, key: str) -> tuple[ScriptedEvent, ...]:
    return read_items(ctx, node, key, "events such as '- { after: 2h, type: …, data: {…} }'",
                      _read_event)


def _read_event(ctx: LoadContext, node: YamlNode, where: str) -> ScriptedEvent | None:
    mapping = read_mapping(ctx, node, where, " such as { after: 2h, type: …, data: {…} }")
    if mapping is None:
        return None
    fields = Fields(ctx, mapping, f"in {where}", allowed=_EVENT_KEYS,
                    required={"type": " (the event type)", "data": " (the payload, a mapping)"})
    step = fields.entry("after_step")
    if fields.entry("after") is None and step is None:
        ctx.report(mapping.pos, f"{where} needs 'after' (a duration from the start) or "
                                "'after_step' (a step whose completion it follows)")
    type_entry = fields.entry("type")
    return ScriptedEvent(
        type=fields.read("type", read_name, ""),
        data=fields.read("data", _read_data, {}),
        pos=mapping.pos,
        type_pos=type_entry.value.pos if type_entry else mapping.pos,
        after=fields.read("after", read_duration, timedelta(0)),
        after_step=fields.read("after_step", _read_step_path, None),
        after_step_pos=step.value.pos if step else None,
        id=fields.read("id", _read_event_id, None),
    )


def _read_data(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, object]:
    mapping = read_mapping(ctx, node, key, " (the event's payload)")
    return {} if mapping is None else dict(to_plain(mapping))


def _read_step_path(ctx: LoadContext, node: YamlNode, key: str) -> str:
    text = read_text(ctx, node, key)
    if text and not _STEP_PATH.fullmatch(text):
        ctx.report(node.pos, f"'{key}' must be a step path such as ask or polls[2].check, "
                             f"got {describe(node)}")
    return text


def _read_event_id(ctx: LoadContext, node: YamlNode, key: str) -> str:
    text = read_text(ctx, node, key)
    if isinstance(node, YamlScalar) and isinstance(node.value, str) and not text.strip():
        ctx.report(node.pos, f"'{key}' must not be empty")
    return text


# --- tasks ------------------------------------------------------------------------------------

def _read_tasks(ctx: LoadContext, node: YamlNode, key: str) -> tuple[ScriptedTask, ...]:
    return read_items(ctx, node, key, "answers such as '- { task: review, after: 2h, outcome: "
                                      "accept }'", _read_task)


def _read_task(ctx: LoadContext, node: YamlNode, where: str) -> ScriptedTask | None:
    mapping = read_mapping(ctx, node, where, " such as { task: review, after: 2h, "
                                             "outcome: accept }")
    if mapping is None:
        return None
    fields = Fields(ctx, mapping, f"in {where}", allowed=_TASK_KEYS,
                    required={"task": " (the path of the ask step)",
                              "outcome": " (the decision, one of the task's outcomes)"})
    return ScriptedTask(
        step=fields.read("task", _read_step_path, ""),
        outcome=fields.read("outcome", read_text, ""),
        pos=mapping.pos,
        by=fields.read("as", _read_event_id, None),
        after=fields.read("after", read_duration, timedelta(0)),
        data=fields.read("data", _read_answer_data, {}),
    )


def _read_answer_data(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, object]:
    mapping = read_mapping(ctx, node, key, " (what the task's form asks for)")
    return {} if mapping is None else dict(to_plain(mapping))


# --- checks across sections -------------------------------------------------------------------

def _check_without_flow(ctx: LoadContext, root: YamlMap, expectations: tuple[Expectation, ...],
                        events: tuple[ScriptedEvent, ...]) -> None:
    """A scenario without a run of its own has triggers start its runs, and says only what
    needs no run of its own."""
    if root.get("events") is None and root.get("schedules") is None:
        ctx.report(root.pos, "missing 'flow' at scenario level (a flow name or a path such as "
                             "flows/x.yaml; without one, 'events' or 'schedules' must start "
                             "runs through their triggers)")
        return
    for key in ("inputs", "target", "tasks"):
        if (entry := root.get(key)) is not None:
            ctx.report(entry.key_pos, f"'{key}' {_OWN_RUN}")
    for event in events:
        if event.after_step is not None:
            ctx.report(event.after_step_pos or event.pos, f"'after_step' {_OWN_RUN}")
    for kind in dict.fromkeys(e.kind for e in expectations if e.kind in RUN_KINDS):
        pos = next(e.pos for e in expectations if e.kind == kind)
        ctx.report(pos, f"'{kind}' {_OWN_RUN}; expect those under 'runs'")


def _check_counted_calls(ctx: LoadContext, expectations: tuple[Expectation, ...],
                         stubs: tuple[Stub, ...]) -> None:
    """``expect.calls`` may only count stubbed actions: only their calls are recorded."""
    stubbed = {stub.action for stub in stubs}
    for expectation in expectations:
        if expectation.kind == "calls" and expectation.key not in stubbed:
            ctx.report(expectation.pos, f"calls: '{expectation.key}' is not stubbed; only the "
                                        "calls of stubbed actions are counted"
                                        + _stubbed_hint(expectation.key or "", stubbed))


def _stubbed_hint(action: str, stubbed: set[str]) -> str:
    return did_you_mean(action, stubbed) or (
        f" (stubbed: {', '.join(sorted(stubbed))})" if stubbed else " (nothing is stubbed)")


def _check_event_states(ctx: LoadContext, expectations: tuple[Expectation, ...],
                        events: tuple[ScriptedEvent, ...]) -> None:
    """``expect.events`` gives one state per scripted event."""
    for expectation in expectations:
        if (expectation.kind == "events" and expectation.expected is not None
                and len(expectation.expected) != len(events)):
            states = _count(len(expectation.expected), "state")
            ctx.report(expectation.pos, f"'events' gives {states} but the scenario sends "
                                        f"{_count(len(events), 'event')}")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"

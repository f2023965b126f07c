"""Loading a scenario file into a validated :class:`~tarry.scenarios.model.Scenario`.

Scenario files are read as strictly as flows, with the same YAML reading and the same field
readers: an unknown key (with a suggestion when one is close), a bad duration, a zone-less
``start`` — every problem in the file is reported at once, as ``file:line:column: message``,
in a :class:`~tarry.errors.LoadError`. Whether the named flow exists, takes the inputs and
waits for the event types is decided later, against the project (``resolve``).
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

from tarry._suggest import did_you_mean
from tarry.errors import LoadError, Problem
from tarry.language.context import IDENTIFIER_PATTERN, LoadContext
from tarry.language.fields import (
    Fields,
    read_duration,
    read_instant,
    read_mapping,
    read_name,
    read_positive_duration,
    read_text,
)
from tarry.language.yamlsource import (
    YamlMap,
    YamlNode,
    YamlScalar,
    YamlSeq,
    describe,
    read_yaml,
    to_plain,
)
from tarry.scenarios.expectations import read_expect
from tarry.scenarios.model import (
    DEFAULT_HORIZON,
    Answer,
    Expectation,
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
                  "stub", "events", "tasks", "expect")
_EVENT_KEYS = ("type", "data", "id", "after", "after_step")
_TASK_KEYS = ("task", "outcome", "data", "as", "after")
_FAILURE_KEYS = ("fail", "type")
_ANSWER_SHAPE = "a result mapping, null, or { fail: message }"

_READ_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (FileNotFoundError, "file not found"),
    (IsADirectoryError, "is a directory, not a scenario file"),
    (UnicodeDecodeError, "the file is not UTF-8 text"),
)


def load_scenario(path: Path) -> Scenario:
    """Read and validate the scenario file at ``path``; ``LoadError`` lists every problem."""
    try:
        text = path.read_text(encoding="utf-8")
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
                                                "'scenario:', 'flow:' and 'expect:'"))
    if scenario is None or ctx.problems:
        raise LoadError(sorted(dict.fromkeys(ctx.problems),
                               key=lambda problem: (problem.line, problem.column)))
    return scenario


def _read_scenario(ctx: LoadContext, root: YamlMap) -> Scenario:
    fields = Fields(ctx, root, "at scenario level", allowed=_SCENARIO_KEYS,
                    required={"scenario": " (the scenario's name)",
                              "flow": " (a flow name or a path such as flows/x.yaml)",
                              "expect": " (what the run must come to)"})
    flow, inputs = fields.entry("flow"), fields.entry("inputs")
    stubs: tuple[Stub, ...] = fields.read("stub", _read_stubs, ())
    events: tuple[ScriptedEvent, ...] = fields.read("events", _read_events, ())
    tasks: tuple[ScriptedTask, ...] = fields.read("tasks", _read_tasks, ())
    expectations: tuple[Expectation, ...] = fields.read("expect", read_expect, ())
    _check_counted_calls(ctx, expectations, stubs)
    _check_event_states(ctx, expectations, events)
    return Scenario(
        name=fields.read("scenario", read_name, ""),
        path=ctx.file,
        flow=fields.read("flow", _read_flow_ref, ""),
        flow_pos=flow.value.pos if flow else root.pos,
        expectations=expectations,
        description=fields.read("description", read_text, ""),
        inputs=fields.read("inputs", _read_inputs, {}),
        inputs_pos=inputs.value.pos if inputs else None,
        target=fields.read("target", read_text, None),
        start=fields.read("start", read_instant, None),
        horizon=fields.read("horizon", read_positive_duration, DEFAULT_HORIZON),
        stubs=stubs,
        events=events,
        tasks=tasks,
    )


def _read_flow_ref(ctx: LoadContext, node: YamlNode, key: str) -> str:
    text = read_text(ctx, node, key)
    return text if text.endswith(FLOW_SUFFIXES) else read_name(ctx, node, key)


def _read_inputs(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, object]:
    mapping = read_mapping(ctx, node, key, " of input name to value")
    return {} if mapping is None else dict(to_plain(mapping))


# --- stubs ------------------------------------------------------------------------------------

def _read_stubs(ctx: LoadContext, node: YamlNode, key: str) -> tuple[Stub, ...]:
    mapping = read_mapping(ctx, node, key, " of action name to its result")
    if mapping is None:
        return ()
    return tuple(Stub(entry.key, _read_answers(ctx, entry.value, f"stub '{entry.key}'"))
                 for entry in mapping.entries)


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
    if not isinstance(node, YamlSeq):
        ctx.report(node.pos, f"'{key}' must be a list of events such as "
                             f"'- {{ after: 2h, type: …, data: {{…}} }}', got {describe(node)}")
        return ()
    events = (_read_event(ctx, item, f"events[{index}]") for index, item in enumerate(node.items))
    return tuple(event for event in events if event is not None)


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
    if not isinstance(node, YamlSeq):
        ctx.report(node.pos, f"'{key}' must be a list of answers such as "
                             f"'- {{ task: review, after: 2h, outcome: accept }}', got "
                             f"{describe(node)}")
        return ()
    tasks = (_read_task(ctx, item, f"tasks[{index}]") for index, item in enumerate(node.items))
    return tuple(task for task in tasks if task is not None)


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

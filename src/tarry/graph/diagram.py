"""A flow's drawing as data: nested regions of nodes, computed from the loaded flow model.

Flows are structured (no jumps), so the drawing is a tree: the flow's steps form a region,
each step is a node, and a step that holds steps (a group, a ``repeat``'s iteration, a
``for_each`` branch, a wait's reminder, a scope's ``recover`` steps) holds them as regions of
its own. Every node has an :attr:`Node.id`: the step's place, its ids and its containers'
joined by dots with loop indices left out (``quotes.request``, ``documents.remind.nudge``),
which is what :func:`~tarry.model.step_node` makes of a run's step path, so runs can be
counted per node.

This module only describes; :mod:`tarry.graph.layout` places it and the renderers draw it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from tarry.clock import iso
from tarry.language.durations import format_duration
from tarry.language.model import (
    Action,
    Ask,
    BusinessTime,
    Call,
    EventTrigger,
    Exit,
    Fail,
    Flow,
    ForEach,
    Group,
    HoldAfter,
    Remind,
    Repeat,
    Scope,
    Step,
    Template,
    Trigger,
    Wait,
    WaitFor,
)

__all__ = ["Diagram", "Node", "NodeKind", "Region", "RegionKind", "WaitKind", "diagram_of"]

NodeKind = Literal["action", "wait", "wait_for", "ask", "call", "repeat", "for_each", "group",
                   "exit", "fail"]
"""The construct a node draws."""

WaitKind = Literal["timer", "event", "task", "poll", "slot", "child"]
"""What a node waits for (the ``waiting_for.kind`` its runs show while they wait there)."""

RegionKind = Literal["flow", "group", "repeat", "for_each", "remind", "recover"]
"""What a region is: the flow's steps, a nested scope, a loop's body, a reminder, a recovery."""

_TEXT = 60
"""Longest expression or value quoted in a node's notes; the rest is cut with an ellipsis."""


@dataclass(frozen=True)
class Region:
    """Steps drawn inside a box: a scope, with the steps that recover it when one fails."""

    kind: RegionKind
    title: str
    nodes: tuple[Node, ...]
    recover: Region | None = None


@dataclass(frozen=True)
class Node:
    """One step: what it does in one line, what else to know, and the regions it holds."""

    id: str
    step: str
    kind: NodeKind
    label: str
    notes: tuple[str, ...] = ()
    wait: WaitKind | None = None
    exit: str | None = None
    regions: tuple[Region, ...] = ()
    conditional: bool = False
    ends: bool = False
    """The run never goes past this node: an exit or a fail without an ``if``."""


@dataclass(frozen=True)
class Diagram:
    """A whole flow: what starts or gates its runs, and its steps."""

    flow: str
    description: str
    start: tuple[str, ...]
    body: Region

    def nodes(self) -> Iterator[Node]:
        """Every node, each before the nodes of its regions, in the order of the file."""
        yield from _nodes(self.body)


def _nodes(region: Region) -> Iterator[Node]:
    for node in region.nodes:
        yield node
        for inner in node.regions:
            yield from _nodes(inner)
    if region.recover is not None:
        yield from _nodes(region.recover)


def diagram_of(flow: Flow) -> Diagram:
    """The drawing of ``flow``."""
    return Diagram(flow=flow.name, description=flow.description, start=_start(flow),
                   body=_region("flow", "", flow.body, ""))


def _start(flow: Flow) -> tuple[str, ...]:
    lines = [_trigger_line(trigger) for trigger in flow.triggers]
    lines += [f"hold until {iso(condition.instant)}" if isinstance(condition, HoldAfter)
              else f"hold for check {condition.name}" for condition in flow.hold]
    if flow.concurrency is not None:
        limit = flow.concurrency.limit
        runs = f"at most {limit} run{'s' if limit > 1 else ''}"
        lines.append(f"{runs} at once" if flow.concurrency.key is None
                     else f"{runs} per {_text(flow.concurrency.key)} at once")
    if flow.throttle is not None:
        throttle = flow.throttle
        key = f" per {_text(throttle.key)}" if throttle.key is not None else ""
        lines.append(f"throttle {throttle.limit} starts per "
                     f"{format_duration(throttle.per)}{key}")
    if flow.window is not None:
        lines.append(f"window: starts while calendar {flow.window} is open")
    return tuple(lines)


def _trigger_line(trigger: Trigger) -> str:
    if not isinstance(trigger, EventTrigger):
        return f"on schedule {trigger.cron} ({trigger.timezone})"
    if trigger.debounce is None:
        return f"on event {trigger.event}"
    return f"on event {trigger.event}, debounced {format_duration(trigger.debounce.period)}"


def _region(kind: RegionKind, title: str, scope: Scope, prefix: str) -> Region:
    recover = (Region("recover", "on failure", tuple(_node(step, prefix) for step in scope.recover))
               if scope.recover else None)
    return Region(kind, title, tuple(_node(step, prefix) for step in scope.steps), recover)


def _node(step: Step, prefix: str) -> Node:
    path = prefix + step.id
    node = _DRAW[type(step.construct)](step, path)
    notes = [*_modifiers(step), *node.notes]
    ends = isinstance(step.construct, Exit | Fail) and step.if_ is None
    return Node(id=path, step=step.id, kind=node.kind, label=node.label, notes=tuple(notes),
                wait=node.wait, exit=node.exit, regions=node.regions,
                conditional=step.if_ is not None, ends=ends)


def _modifiers(step: Step) -> Iterator[str]:
    if step.if_ is not None:
        yield f"if {_text(step.if_)}"
    if step.optional:
        yield "optional: a failure is a value"
    if step.retry is not None:
        yield f"retry up to {step.retry.max} times, every {format_duration(step.retry.every)}"
    if step.limit is not None:
        yield f"limit: a slot of pool {step.limit} while it runs"
    if step.window is not None:
        yield f"window: starts while calendar {step.window} is open"


def _action(step: Step, path: str) -> Node:
    assert isinstance(step.construct, Action)
    return Node(path, step.id, "action", step.construct.name,
                wait="slot" if step.limit is not None else None)


def _wait(step: Step, path: str) -> Node:
    wait = step.construct
    assert isinstance(wait, Wait)
    label = (f"timer {_when(wait.for_)}" if wait.for_ is not None
             else f"timer until {_when(wait.until)}")
    return Node(path, step.id, "wait", label, wait="timer")


def _wait_for(step: Step, path: str) -> Node:
    wait = step.construct
    assert isinstance(wait, WaitFor)
    types = [alternative.event for alternative in wait.alternatives]
    label = f"event {types[0]}" if len(types) == 1 else f"first of {len(types)} events"
    notes = [f"or {name}" if index else f"any: {name}" for index, name in enumerate(types)
             ] if wait.is_any else []
    if wait.accept is not None:
        notes.append(f"accept {_text(wait.accept)}")
    notes.append(f"deadline {_when(wait.timeout)}: goes on with status timeout")
    return Node(path, step.id, "wait_for", label, tuple(notes), wait="event",
                regions=_reminder(wait.remind, path))


def _ask(step: Step, path: str) -> Node:
    ask = step.construct
    assert isinstance(ask, Ask)
    notes = (f"outcomes {', '.join(ask.outcomes)}",
             f"deadline {_when(ask.timeout)}: goes on with status timeout")
    return Node(path, step.id, "ask", "task for a person", notes, wait="task",
                regions=_reminder(ask.remind, path))


def _call(step: Step, path: str) -> Node:
    call = step.construct
    assert isinstance(call, Call)
    notes = ["a failed child fails it: child-failed"]
    if call.timeout is not None:
        notes.append(f"deadline {_when(call.timeout)}: goes on with status timeout, the "
                     "child cancelled")
    return Node(path, step.id, "call", f"child run of {call.flow}", tuple(notes),
                wait="child")


def _reminder(remind: Remind | None, path: str) -> tuple[Region, ...]:
    if remind is None:
        return ()
    bound = f", at most {remind.max}" if remind.max is not None else ""
    title = f"remind every {_when(remind.every)}{bound}"
    return (_region("remind", title, remind.steps, f"{path}.remind."),)


def _repeat(step: Step, path: str) -> Node:
    repeat = step.construct
    assert isinstance(repeat, Repeat)
    pause = (f"every {_when(repeat.every)}" if repeat.every is not None
             else f"backoff from {format_duration(repeat.backoff.initial)}"
             if repeat.backoff is not None else "")
    notes = [f"until {_text(repeat.until)}"] if repeat.until is not None else []
    notes.append("exhausted: fails repeat-exhausted")
    title = f"each poll (at most {repeat.max})"
    return Node(path, step.id, "repeat", f"poll {pause}, max {repeat.max}", tuple(notes),
                wait="poll", regions=(_region("repeat", title, repeat.steps, f"{path}."),))


def _for_each(step: Step, path: str) -> Node:
    each = step.construct
    assert isinstance(each, ForEach)
    at_once = f", {each.concurrency} at once" if each.concurrency > 1 else ""
    notes = (f"tolerate {each.tolerate} failures",) if each.tolerate else ()
    title = f"for each {each.as_} in {_text(each.items)}{at_once}"
    return Node(path, step.id, "for_each", f"for each {each.as_}{at_once}", notes,
                regions=(_region("for_each", title, each.steps, f"{path}."),))


def _group(step: Step, path: str) -> Node:
    group = step.construct
    assert isinstance(group, Group)
    title = f"{len(group.steps.steps)} steps"
    return Node(path, step.id, "group", "group",
                regions=(_region("group", title, group.steps, f"{path}."),))


def _exit(step: Step, path: str) -> Node:
    assert isinstance(step.construct, Exit)
    return Node(path, step.id, "exit", f"exit {step.construct.name}", exit=step.construct.name)


def _fail(step: Step, path: str) -> Node:
    assert isinstance(step.construct, Fail)
    return Node(path, step.id, "fail", "fail", (_text(step.construct.message),))


_DRAW = {Action: _action, Wait: _wait, WaitFor: _wait_for, Ask: _ask, Call: _call,
         Repeat: _repeat, ForEach: _for_each, Group: _group, Exit: _exit, Fail: _fail}
"""The node of each construct."""


def _when(value: timedelta | datetime | Template | BusinessTime | None) -> str:
    if isinstance(value, BusinessTime):
        return f"{_when(value.amount)} of {value.calendar} hours"
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, datetime):
        return iso(value)
    return _text(value)


_WHOLE = re.compile(r"^\{\{(.*)\}\}$", re.DOTALL)


def _text(value: object) -> str:
    """``value`` as a note quotes it: one expression without its braces, cut to length."""
    text = value.source if isinstance(value, Template) else str(value)
    text = " ".join(text.split())
    whole = _WHOLE.match(text)
    if whole and "{{" not in whole.group(1):
        text = whole.group(1).strip()
    return text if len(text) <= _TEXT else text[:_TEXT - 1] + "…"

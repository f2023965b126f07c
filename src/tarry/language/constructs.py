"""Reading each construct of a step body: ``wait``, ``wait_for``, ``ask``, ``call``, ``repeat``,
``for_each``, groups (``steps``), ``exit``, ``fail`` and action calls.

:data:`CONSTRUCTS` is the table the step reader dispatches on: for each construct key, its
reader and the companion keys it allows beside it in the step body (``wait_for`` with
``match``, ``timeout``, ``accept``, ``remind``; loops with ``steps`` and ``recover``; …).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from tarry.language.arguments import check_arguments
from tarry.language.business import business_or
from tarry.language.context import LoadContext
from tarry.language.eventcheck import check_emit, check_event_match
from tarry.language.fields import (
    Fields,
    holds_template,
    read_choice,
    read_condition,
    read_duration,
    read_duration_or_template,
    read_instant_or_template,
    read_mapping,
    read_name,
    read_non_negative_int,
    read_positive_duration,
    read_positive_int,
    read_rate,
    read_text,
    read_timeout,
)
from tarry.language.manifests import read_schema
from tarry.language.model import (
    Action,
    Ask,
    Backoff,
    BusinessTime,
    Call,
    Construct,
    EventAlternative,
    Exit,
    Fail,
    ForEach,
    Group,
    Remind,
    Repeat,
    Scope,
    Value,
    Wait,
    WaitFor,
)
from tarry.language.yamlsource import YamlEntry, YamlMap, YamlNode, YamlScalar, YamlSeq, describe

__all__ = ["CONSTRUCTS", "Body", "ConstructSpec", "ScopeReader", "read_action"]

ScopeReader = Callable[[LoadContext, YamlNode, "YamlNode | None"], Scope]
"""Reads a nested scope: ``(ctx, steps, recover or None) -> Scope``."""

Jitter = Literal["full", "half", "none"]
_JITTERS: dict[str, Jitter] = {"none": "none", "full": "full", "half": "half"}


@dataclass(frozen=True)
class Body:
    """A step body being read: the step's id, the body mapping and its construct entry."""

    step_id: str
    node: YamlMap
    construct: YamlEntry
    read_scope: ScopeReader

    @property
    def where(self) -> str:
        """``"in step 'x'"``, to complete messages about the body's keys."""
        return f"in step '{self.step_id}'"

    def companion(self, key: str) -> YamlNode | None:
        """The value of the companion key ``key`` in the body, when present."""
        entry = self.node.get(key)
        return None if entry is None else entry.value

    def required(self, ctx: LoadContext, key: str, why: str) -> YamlNode | None:
        """The companion ``key``'s value; reported as missing (with ``why``) when absent."""
        value = self.companion(key)
        if value is None:
            ctx.report(self.node.pos, f"missing '{key}' {self.where}{why}")
        return value

    def nested(self, ctx: LoadContext) -> Scope:
        """The body's ``steps`` and ``recover`` as a scope read in ``ctx``."""
        steps = self.required(ctx, "steps", "")
        if steps is None:
            return Scope(())
        return self.read_scope(ctx, steps, self.companion("recover"))


ConstructReader = Callable[[LoadContext, Body], Construct]


@dataclass(frozen=True)
class ConstructSpec:
    """How to read one construct and which companion keys it allows in the body."""

    read: ConstructReader
    companions: tuple[str, ...] = ()


def read_wait(ctx: LoadContext, body: Body) -> Construct:
    """``wait: {for | until}``."""
    node = read_mapping(ctx, body.construct.value, "wait", " such as { for: 2d }")
    if node is None:
        return Wait(for_=timedelta(0))
    fields = Fields(ctx, node, "in 'wait'", allowed=("for", "until"))
    if (fields.entry("for") is None) == (fields.entry("until") is None):
        ctx.report(node.pos, "'wait' needs exactly one of 'for' and 'until'")
    return Wait(for_=fields.read("for", business_or(read_duration_or_template), None),
                until=fields.read("until", read_instant_or_template, None))


def read_wait_for(ctx: LoadContext, body: Body) -> Construct:
    """``wait_for: <type>`` or ``wait_for: {any: [...]}`` with match, timeout, accept, remind."""
    value = body.construct.value
    is_any = isinstance(value, YamlMap)
    alternatives = (_any_alternatives(ctx, body, value) if isinstance(value, YamlMap)
                    else (_alternative(ctx, value, body.companion("match"), "wait_for",
                                       owner=body.node, where=body.where),))
    timeout = body.required(ctx, "timeout", " (every wait_for is bounded: a duration, "
                                            "an instant or an expression)")
    accept = body.companion("accept")
    remind = body.companion("remind")
    return WaitFor(
        alternatives=alternatives,
        timeout=timedelta(0) if timeout is None else _timeout(ctx, timeout, "timeout"),
        is_any=is_any,
        accept=None if accept is None else read_condition(ctx.seeing(["event"]), accept,
                                                          "accept"),
        remind=None if remind is None else _remind(ctx, body, remind),
    )


_timeout = business_or(read_timeout)
"""A wait's or a task's ``timeout``: a duration, an instant, an expression, or business time."""


def _any_alternatives(ctx: LoadContext, body: Body,
                      node: YamlMap) -> tuple[EventAlternative, ...]:
    fields = Fields(ctx, node, "in 'wait_for'", allowed=("any",), required={"any": ""})
    step_match = body.node.get("match")
    if step_match is not None:
        ctx.report(step_match.key_pos, "with 'wait_for: { any: … }' each alternative has its "
                                       "own 'match'; remove the step's 'match'")
    entry = fields.entry("any")
    if entry is None:
        return ()
    if not isinstance(entry.value, YamlSeq) or len(entry.value.items) < 2:
        ctx.report(entry.value.pos, f"'any' must be a list of at least 2 alternatives "
                                    f"({{event, match}}), got {_count(entry.value)}")
        return ()
    return tuple(_any_item(ctx, item) for item in entry.value.items)


def _count(node: YamlNode) -> str:
    if isinstance(node, YamlSeq):
        return f"{len(node.items)}"
    return describe(node)


def _any_item(ctx: LoadContext, node: YamlNode) -> EventAlternative:
    item = read_mapping(ctx, node, "alternative", " such as { event: email.reply, match: … }")
    if item is None:
        return EventAlternative("invalid", {}, node.pos)
    fields = Fields(ctx, item, "in an 'any' alternative", allowed=("event", "match"),
                    required={"event": ""})
    event = fields.entry("event")
    if event is None:
        return EventAlternative("invalid", {}, item.pos)
    match = fields.entry("match")
    return _alternative(ctx, event.value, None if match is None else match.value, "event",
                        owner=item, where="in an 'any' alternative")


def _alternative(ctx: LoadContext, event: YamlNode, match: YamlNode | None, key: str, *,
                 owner: YamlMap, where: str) -> EventAlternative:
    alternative = EventAlternative(read_name(ctx, event, key),
                                   {} if match is None else _match(ctx, match), event.pos)
    check_event_match(ctx, event, match, owner=owner.pos, where=where)
    return alternative


def _match(ctx: LoadContext, node: YamlNode) -> dict[str, Value]:
    mapping = read_mapping(ctx, node, "match", " of correlation key to value")
    if mapping is None:
        return {}
    for entry in mapping.entries:
        if not isinstance(entry.value, YamlScalar):
            ctx.report(entry.value.pos, f"match value '{entry.key}' must be a string, number, "
                                        f"boolean or expression, got {describe(entry.value)}")
    result: dict[str, Value] = ctx.value(mapping)
    return result


def _remind(ctx: LoadContext, body: Body, node: YamlNode) -> Remind:
    mapping = read_mapping(ctx, node, "remind", " such as { every: 6h, steps: [...] }")
    if mapping is None:
        return Remind(timedelta(0), None, Scope(()))
    fields = Fields(ctx, mapping, "in 'remind'", allowed=("every", "max", "steps"),
                    required={"every": "", "steps": ""})
    steps = fields.entry("steps")
    every: timedelta | BusinessTime = timedelta(1)
    return Remind(every=fields.read("every", business_or(read_positive_duration), every),
                  max=fields.read("max", read_positive_int, None),
                  steps=Scope(()) if steps is None else body.read_scope(ctx, steps.value, None))


def read_ask(ctx: LoadContext, body: Body) -> Construct:
    """``ask: {title, details?, assign?, form?, outcomes}`` with ``timeout`` and ``remind``."""
    timeout = body.required(ctx, "timeout", " (every task is bounded: a duration, an instant "
                                            "or an expression)")
    remind = body.companion("remind")
    ask = Ask(title="", outcomes=(),
              timeout=timedelta(0) if timeout is None else _timeout(ctx, timeout, "timeout"),
              remind=None if remind is None else _remind(ctx, body, remind))
    node = read_mapping(ctx, body.construct.value, "ask",
                        " such as { title: \"Approve?\", outcomes: [approve, reject] }")
    if node is None:
        return ask
    fields = Fields(ctx, node, "in 'ask'",
                    allowed=("title", "details", "assign", "form", "outcomes"),
                    required={"title": " (what the person is asked)",
                              "outcomes": " (the decisions, one button each, such as "
                                          "[approve, reject])"})
    return dataclasses.replace(
        ask, title=fields.read("title", _read_ask_text, ""),
        details=fields.read("details", _read_ask_text, None),
        assign=fields.read("assign", _read_assign, None),
        form=fields.read("form", _read_form, None),
        outcomes=fields.read("outcomes", _read_outcomes, ()))


def _read_ask_text(ctx: LoadContext, node: YamlNode, key: str) -> str:
    text = read_text(ctx, node, key)
    ctx.value(node)
    return text


def _read_assign(ctx: LoadContext, node: YamlNode, key: str) -> object:
    """A list of principal names (each may hold expressions) or one expression giving them."""
    if holds_template(node):
        return ctx.value(node)
    names = node.items if isinstance(node, YamlSeq) else ()
    if not names or not all(isinstance(item, YamlScalar) and isinstance(item.value, str)
                            and item.value for item in names):
        ctx.report(node.pos, f"'{key}' must be a list of one or more principal names, such as "
                             f"[ops, alice], or an expression giving them, got "
                             f"{_count_or_describe(node)}")
    return ctx.value(node)


def _read_outcomes(ctx: LoadContext, node: YamlNode, key: str) -> tuple[str, ...]:
    if not isinstance(node, YamlSeq) or not node.items:
        ctx.report(node.pos, f"'{key}' must be a list of one or more outcome names, such as "
                             f"[approve, reject], got {_count_or_describe(node)}")
        return ()
    outcomes = tuple(read_name(ctx, item, "outcome") for item in node.items)
    for index, outcome in enumerate(outcomes):
        if outcome in outcomes[:index]:
            ctx.report(node.items[index].pos, f"outcome '{outcome}' is listed twice")
    return outcomes


def _count_or_describe(node: YamlNode) -> str:
    return "an empty list" if isinstance(node, YamlSeq) else describe(node)


def _read_form(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, object] | None:
    """A JSON Schema of an object: what the person fills in."""
    schema = read_schema(ctx, node, key)
    if schema is not None and schema.get("type", "object") != "object":
        ctx.report(node.pos, f"'{key}' must describe an object (type: object, with "
                             f"properties), got type {schema['type']!r}")
        return None
    return schema


def read_call(ctx: LoadContext, body: Body) -> Construct:
    """``call: {flow, inputs?, target?}`` with an optional ``timeout``. Whether the flow
    exists, and takes those inputs, is the project's to tell (``tarry validate``): a flow
    may be added after the one that calls it."""
    timeout = body.companion("timeout")
    call = Call(flow="invalid", pos=body.construct.value.pos,
                timeout=None if timeout is None else read_timeout(ctx, timeout, "timeout"))
    node = read_mapping(ctx, body.construct.value, "call",
                        " such as { flow: onboarding, inputs: { user: \"{{ user }}\" } }")
    if node is None:
        return call
    fields = Fields(ctx, node, "in 'call'", allowed=("flow", "inputs", "target"),
                    required={"flow": " (the name of the flow to run as a child)"})
    flow = fields.entry("flow")
    inputs = fields.entry("inputs")
    target = fields.entry("target")
    return dataclasses.replace(
        call, flow="invalid" if flow is None else read_name(ctx, flow.value, "flow"),
        pos=node.pos if flow is None else flow.value.pos,
        inputs={} if inputs is None else _call_inputs(ctx, inputs.value),
        target=None if target is None else _call_target(ctx, target.value))


def _call_inputs(ctx: LoadContext, node: YamlNode) -> dict[str, Value]:
    mapping = read_mapping(ctx, node, "inputs", " of the child's input names to values")
    if mapping is None:
        return {}
    inputs: dict[str, Value] = ctx.value(mapping)
    return inputs


def _call_target(ctx: LoadContext, node: YamlNode) -> Value:
    read_text(ctx, node, "target")
    return ctx.value(node)


def read_repeat(ctx: LoadContext, body: Body) -> Construct:
    """``repeat: {every | backoff, max, until}`` beside ``steps`` (and ``recover``)."""
    node = read_mapping(ctx, body.construct.value, "repeat",
                        " such as { every: 30s, max: 20, until: \"{{ … }}\" }")
    iteration = ctx.seeing(["loop"])
    steps = body.nested(iteration)
    if node is None:
        return Repeat(max=1, steps=steps)
    fields = Fields(ctx, node, "in 'repeat'", allowed=("every", "backoff", "max", "until"),
                    required={"max": " (a repeat is always bounded)",
                              "until": " (the condition that ends the polling)"})
    if (fields.entry("every") is None) == (fields.entry("backoff") is None):
        ctx.report(node.pos, "'repeat' needs exactly one of 'every' and 'backoff'")
    after_iteration = iteration.seeing(step.id for step in (*steps.steps, *steps.recover))
    until = fields.entry("until")
    return Repeat(
        max=fields.read("max", read_positive_int, 1),
        steps=steps,
        every=fields.read("every", business_or(read_duration_or_template), None),
        backoff=fields.read("backoff", _read_backoff, None),
        until=None if until is None else read_condition(after_iteration, until.value, "until"),
    )


def _read_backoff(ctx: LoadContext, node: YamlNode, key: str) -> Backoff:
    mapping = read_mapping(ctx, node, key, " such as { initial: 5s, max_delay: 5m }")
    if mapping is None:
        return Backoff(timedelta(0), timedelta(0))
    fields = Fields(ctx, mapping, "in 'backoff'",
                    allowed=("initial", "max_delay", "rate", "jitter"),
                    required={"initial": "", "max_delay": ""})
    initial = fields.read("initial", read_duration, timedelta(0))
    max_delay = fields.read("max_delay", read_duration, initial)
    if max_delay < initial:
        ctx.report(mapping.pos, "'max_delay' in 'backoff' must not be shorter than 'initial'")
    jitter = fields.read("jitter", read_choice(tuple(_JITTERS)), "none")
    return Backoff(initial=initial, max_delay=max_delay,
                   rate=fields.read("rate", read_rate, 2.0), jitter=_JITTERS[jitter])


def read_for_each(ctx: LoadContext, body: Body) -> Construct:
    """``for_each: <list or expression>`` with ``as``, ``concurrency``, ``tolerate``, ``steps``."""
    items = body.construct.value
    if not (isinstance(items, YamlSeq) or holds_template(items)):
        ctx.report(items.pos, f"'for_each' must be a list or an expression giving one, such "
                              f"as \"{{{{ vendors }}}}\", got {describe(items)}")
    as_node = body.companion("as")
    name = "item" if as_node is None else _read_as(ctx, as_node)
    iteration = ctx.claiming(name, f"the for_each name '{name}'").seeing(["loop"])
    concurrency = body.companion("concurrency")
    tolerate = body.companion("tolerate")
    return ForEach(
        items=ctx.value(items),
        steps=body.nested(iteration),
        as_=name,
        concurrency=1 if concurrency is None else read_positive_int(ctx, concurrency,
                                                                    "concurrency"),
        tolerate=0 if tolerate is None else read_non_negative_int(ctx, tolerate, "tolerate"),
    )


def _read_as(ctx: LoadContext, node: YamlNode) -> str:
    if not (isinstance(node, YamlScalar) and isinstance(node.value, str)):
        ctx.report(node.pos, f"'as' must be a name, got {describe(node)}")
        return "item"
    if node.value != "item":
        ctx.check_new_name(node.value, node.pos, "the 'as' name")
    return node.value


def read_group(ctx: LoadContext, body: Body) -> Construct:
    """A group: ``steps:`` (and ``recover:``) as a nested scope."""
    return Group(body.read_scope(ctx, body.construct.value, body.companion("recover")))


def read_exit(ctx: LoadContext, body: Body) -> Construct:
    """``exit: <name>``."""
    return Exit(read_name(ctx, body.construct.value, "exit"))


def read_fail(ctx: LoadContext, body: Body) -> Construct:
    """``fail: <message>`` (the message may hold expressions)."""
    message = read_text(ctx, body.construct.value, "fail")
    ctx.value(body.construct.value)
    return Fail(message)


def read_action(ctx: LoadContext, body: Body) -> Construct:
    """``<action>: <args>``; the arguments stay as written, their templates checked."""
    if body.construct.key == "emit":
        check_emit(ctx, body.construct.value)
    schema = ctx.arguments.get(body.construct.key)
    if schema is not None:
        check_arguments(ctx, body.construct.key, body.construct.value, schema)
    timeout = body.companion("timeout")
    return Action(body.construct.key, ctx.value(body.construct.value),
                  None if timeout is None else _read_action_timeout(ctx, timeout))


def _read_action_timeout(ctx: LoadContext, node: YamlNode) -> timedelta | None:
    """An action step's ``timeout``: a literal duration longer than zero (it bounds the
    call before any of the call's arguments are rendered, so no expression)."""
    if isinstance(node, YamlScalar) and isinstance(node.value, str) and "{{" in node.value:
        ctx.report(node.pos, "an action's 'timeout' must be a literal duration such as 30s "
                             "or 5m, not an expression")
        return None
    return read_positive_duration(ctx, node, "timeout")


CONSTRUCTS: dict[str, ConstructSpec] = {
    "wait": ConstructSpec(read_wait),
    "wait_for": ConstructSpec(read_wait_for, ("match", "timeout", "accept", "remind")),
    "ask": ConstructSpec(read_ask, ("timeout", "remind")),
    "call": ConstructSpec(read_call, ("timeout",)),
    "repeat": ConstructSpec(read_repeat, ("steps", "recover")),
    "for_each": ConstructSpec(read_for_each,
                              ("steps", "recover", "as", "concurrency", "tolerate")),
    "steps": ConstructSpec(read_group, ("recover",)),
    "exit": ConstructSpec(read_exit),
    "fail": ConstructSpec(read_fail),
}
"""Every construct key other than action names, with its reader and companion keys."""

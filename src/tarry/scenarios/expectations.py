"""Reading a scenario's ``expect:`` mapping into :class:`~tarry.scenarios.model.Expectation`\\ s.

One reader per key, in a table; each reports its problems at their position and returns the
expectations it could read, so that every problem of the file is found in one pass.

======================  =============================================================
key                     expects
======================  =============================================================
``status``              the run's status (``succeeded``, ``failed``, ``waiting``, …)
``exit``                the exit name, or null
``reason``              the refusal token, or null
``error``               null, or some of ``{type, message, step}`` of the run's error
``bindings``            a value per binding path (``approval.status``, ``polls[0].check``)
``calls``               how many times each stubbed action was called
``history``             the history kinds, exactly and in order
``history_contains``    history kinds that occur in this order, others in between
``events``              the final state of each scripted event, in order
``runs``                the runs triggers started, in order, each named by its flow and
                        its target or occurrence, with expectations of its own (the
                        run-level kinds above, and ``inputs``)
======================  =============================================================
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tarry.language.context import LoadContext
from tarry.language.fields import (
    Fields,
    read_choice,
    read_instant,
    read_items,
    read_mapping,
    read_name,
    read_non_negative_int,
    read_text,
)
from tarry.language.yamlsource import (
    YamlEntry,
    YamlMap,
    YamlNode,
    YamlScalar,
    YamlSeq,
    describe,
    to_plain,
)
from tarry.model import EventState, RunStatus
from tarry.scenarios.model import Expectation, ExpectedRun

__all__ = ["BINDING_PATH_PATTERN", "EXPECTATION_KINDS", "RUN_KINDS", "read_expect", "read_runs"]

BINDING_PATH_PATTERN = r"[^.\[\]\s]+(?:\.[^.\[\]\s]+|\[\d+\])*"
"""A path into the bindings: names joined by dots, list indexes in brackets."""
_BINDING_PATH = re.compile(BINDING_PATH_PATTERN)
_ERROR_FIELDS = ("type", "message", "step")

_Reader = Callable[[LoadContext, YamlEntry], list[Expectation]]


def read_expect(ctx: LoadContext, node: YamlNode, key: str) -> tuple[Expectation, ...]:
    """The expectations of ``expect:``, in file order (``runs`` aside: :func:`read_runs`)."""
    mapping = read_mapping(ctx, node, key, " such as { status: succeeded, exit: approved }")
    if mapping is None:
        return ()
    Fields(ctx, mapping, "in 'expect'", allowed=EXPECTATION_KINDS,
           near_misses=_EXPECT_NEAR_MISSES)
    if not mapping.entries:
        ctx.report(mapping.pos, f"'{key}' must name at least one expectation "
                                f"({', '.join(EXPECTATION_KINDS)})")
    return _expectations(ctx, mapping, EXPECTATION_KINDS)


def _expectations(ctx: LoadContext, mapping: YamlMap,
                  kinds: tuple[str, ...]) -> tuple[Expectation, ...]:
    return tuple(expectation for entry in mapping.entries
                 if entry.key in kinds and entry.key in _READERS
                 for expectation in _READERS[entry.key](ctx, entry))


def read_runs(ctx: LoadContext, node: YamlNode, key: str) -> tuple[ExpectedRun, ...]:
    """The runs of ``expect.runs``: every run triggers start, in the order they are
    created."""
    return read_items(ctx, node, key, "the runs triggers start, such as '- { flow: deploy, "
                                      "target: acme/web#7, status: succeeded }'", _read_run)


def _read_run(ctx: LoadContext, node: YamlNode, where: str) -> ExpectedRun | None:
    mapping = read_mapping(ctx, node, where, " such as { flow: deploy, target: acme/web#7, "
                                             "status: succeeded }")
    if mapping is None:
        return None
    Fields(ctx, mapping, f"in {where}", allowed=_RUN_KEYS,
           required={"flow": " (the flow of the run a trigger starts)"},
           near_misses=_RUN_NEAR_MISSES)
    flow = mapping.get("flow")
    return ExpectedRun(
        flow=read_name(ctx, flow.value, "flow") if flow else "",
        pos=mapping.pos, flow_pos=flow.value.pos if flow else mapping.pos,
        target=_read_identity(ctx, mapping, "target", read_text),
        scheduled_at=_read_identity(ctx, mapping, "scheduled_at", read_instant),
        expectations=_expectations(ctx, mapping, _RUN_KEYS))


def _read_identity(ctx: LoadContext, mapping: YamlMap, key: str,
                   read: Callable[[LoadContext, YamlNode, str], Any]) -> Any:
    entry = mapping.get(key)
    return None if entry is None else read(ctx, entry.value, key)


def _single(kind: str, read: Callable[[LoadContext, YamlNode, str], Any]) -> _Reader:
    """A reader of a key expecting one value."""
    def reader(ctx: LoadContext, entry: YamlEntry) -> list[Expectation]:
        return [Expectation(kind, read(ctx, entry.value, kind), entry.value.pos)]
    return reader


def _nullable(read: Callable[[LoadContext, YamlNode, str], Any]
              ) -> Callable[[LoadContext, YamlNode, str], Any]:
    """``read``, except that null is accepted as itself."""
    def reader(ctx: LoadContext, node: YamlNode, key: str) -> Any:
        if isinstance(node, YamlScalar) and node.value is None:
            return None
        return read(ctx, node, key)
    return reader


def _read_error(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, Any] | None:
    mapping = read_mapping(ctx, node, key, " of some of type, message, step (or null)")
    if mapping is None:
        return None
    Fields(ctx, mapping, "in 'error'", allowed=_ERROR_FIELDS)
    if not mapping.entries:
        ctx.report(mapping.pos, f"'{key}' must give at least one of "
                                f"{', '.join(_ERROR_FIELDS)} (or be null)")
    return {entry.key: _nullable(read_text)(ctx, entry.value, entry.key)
            for entry in mapping.entries if entry.key in _ERROR_FIELDS}


def _read_kinds(ctx: LoadContext, node: YamlNode, key: str) -> list[str]:
    if not isinstance(node, YamlSeq):
        ctx.report(node.pos, f"'{key}' must be a list of history kinds such as "
                             f"[started, step.started], got {describe(node)}")
        return []
    if not node.items:
        ctx.report(node.pos, f"'{key}' must list at least one history kind")
    return [read_text(ctx, item, f"{key}[{index}]") for index, item in enumerate(node.items)]


def _read_event_states(ctx: LoadContext, node: YamlNode, key: str) -> list[str] | None:
    if not isinstance(node, YamlSeq):
        ctx.report(node.pos, f"'{key}' must be a list of event states, one per scripted "
                             f"event, got {describe(node)}")
        return None
    read_state = read_choice([state.value for state in EventState])
    return [read_state(ctx, item, f"{key}[{index}]") for index, item in enumerate(node.items)]


def _read_bindings(ctx: LoadContext, entry: YamlEntry) -> list[Expectation]:
    mapping = read_mapping(ctx, entry.value, entry.key,
                           " of binding path to value, such as { approval.status: received }")
    if mapping is None:
        return []
    if not mapping.entries:
        ctx.report(mapping.pos, f"'{entry.key}' must give at least one binding path")
    for path in mapping.entries:
        if not _BINDING_PATH.fullmatch(path.key):
            ctx.report(path.key_pos, f"'{path.key}' is not a binding path (write step ids "
                                     "and keys joined by dots, list indexes as [0])")
    return [Expectation("bindings", to_plain(path.value), path.key_pos, path.key)
            for path in mapping.entries]


def _read_inputs(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, Any]:
    mapping = read_mapping(ctx, node, key, " of input name to value, such as { day: … }")
    return {} if mapping is None else dict(to_plain(mapping))


def _read_calls(ctx: LoadContext, entry: YamlEntry) -> list[Expectation]:
    mapping = read_mapping(ctx, entry.value, entry.key,
                           " of stubbed action to call count, such as { slack.post: 1 }")
    if mapping is None:
        return []
    if not mapping.entries:
        ctx.report(mapping.pos, f"'{entry.key}' must count at least one stubbed action")
    return [Expectation("calls", read_non_negative_int(ctx, action.value, action.key),
                        action.key_pos, action.key) for action in mapping.entries]


_READERS: dict[str, _Reader] = {
    "status": _single("status", read_choice([status.value for status in RunStatus])),
    "exit": _single("exit", _nullable(read_name)),
    "reason": _single("reason", _nullable(read_name)),
    "error": _single("error", _nullable(_read_error)),
    "bindings": _read_bindings,
    "calls": _read_calls,
    "history": _single("history", _read_kinds),
    "history_contains": _single("history_contains", _read_kinds),
    "events": _single("events", _read_event_states),
    "inputs": _single("inputs", _read_inputs),
}

RUN_KINDS = ("status", "exit", "reason", "error", "bindings", "history", "history_contains")
"""The expectations of one run: the scenario's own (at ``expect:``'s top), or one a trigger
started (in ``expect.runs``)."""

EXPECTATION_KINDS = ("status", "exit", "reason", "error", "bindings", "calls", "history",
                     "history_contains", "events", "runs")
"""The keys ``expect:`` may hold."""

_EXPECT_NEAR_MISSES = {
    "inputs": " (the inputs of a run a trigger started are expected in its entry of 'runs'; "
              "the scenario's own run has those it gives)",
    **dict.fromkeys(("started", "triggered", "triggered_runs"),
                    " (did you mean 'runs'? the runs triggers start)"),
}
_RUN_KEYS = ("flow", "target", "scheduled_at", "inputs", *RUN_KINDS)
_RUN_NEAR_MISSES = {
    key: f" ('{key}' counts across the scenario: write it in 'expect', not in a run)"
    for key in ("calls", "events")} | {
    "at": " (did you mean 'scheduled_at'? a schedule occurrence is named by its instant)",
    "occurrence": " (did you mean 'scheduled_at'? a schedule occurrence is named by its "
                  "instant)",
}

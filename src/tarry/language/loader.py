"""Loading a YAML flow file into a validated :class:`~tarry.language.model.Flow`.

Loading is strict: an unknown key, a misspelling, a zone-less instant, an unbounded loop or a
missing timeout refuses the whole file with :class:`~tarry.errors.LoadError`, which lists
every problem found (not just the first), sorted by position, each as
``file:line:column: message``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from zoneinfo import available_timezones

from tarry._suggest import did_you_mean
from tarry.errors import LoadError, Problem
from tarry.files import FILE_BYTES, read_source
from tarry.language.arguments import BUILTIN_ARGUMENTS
from tarry.language.business import read_calendar
from tarry.language.context import LoadContext
from tarry.language.durations import parse_zone
from tarry.language.fields import (
    Fields,
    read_bool,
    read_choice,
    read_mapping,
    read_name,
    read_optional,
    read_text,
)
from tarry.language.holds import read_hold
from tarry.language.inputs import INPUT_TYPES, type_mismatch
from tarry.language.manifests import Manifest
from tarry.language.model import (
    EventTrigger,
    Flow,
    HoldCondition,
    InputSpec,
    InputType,
    Scope,
    Trigger,
)
from tarry.language.pacing import read_throttle
from tarry.language.steps import read_scope
from tarry.language.triggers import TRIGGER_NEAR_MISSES, read_triggers
from tarry.language.yamlsource import (
    YamlMap,
    YamlNode,
    YamlScalar,
    describe,
    read_yaml,
    to_plain,
)

__all__ = ["BUILTIN_ACTIONS", "load_flow", "parse_flow"]

BUILTIN_ACTIONS: frozenset[str] = frozenset({"log", "set", "fail", "emit", "http.request",
                                             "check"})
"""The actions every project has; user actions come from the project config."""

_FLOW_KEYS = ("flow", "description", "timezone", "inputs", "hold", "window", "on", "steps",
              "recover", "throttle")
_START_GATE = ": a flow's start gate is 'hold:'"
_NEAR_MISSES = {"holds": _START_GATE, "hold_for": _START_GATE, "wait_for": _START_GATE,
                **TRIGGER_NEAR_MISSES}


def load_flow(path: Path, *, actions: Collection[str] | None = None,
              manifests: Mapping[str, Manifest] | None = None,
              max_bytes: int = FILE_BYTES, calendars: Collection[str] | None = None) -> Flow:
    """Read and validate the flow file at ``path``.

    ``actions`` names the user actions the project declares (None: only the built-ins); a
    mapping of name → the JSON Schema of the action's arguments (or None) also has each step's
    literal arguments checked (see :mod:`tarry.language.arguments`);
    ``manifests``, when given, are the declared event types the flow's ``wait_for`` and
    ``emit`` steps must use (None: not checked); ``calendars``, when given, the names of
    the configured business calendars the flow may name (None: not checked). A file over
    ``max_bytes`` is refused before it is read. Raises ``LoadError`` with every problem found.
    """
    try:
        text = read_source(path, max_bytes)
    except FileNotFoundError:
        raise _file_error(path, "file not found") from None
    except IsADirectoryError:
        raise _file_error(path, "is a directory, not a flow file") from None
    except UnicodeDecodeError:
        raise _file_error(path, "the file is not UTF-8 text") from None
    except OSError as exc:
        raise _file_error(path, f"cannot read the file ({exc.strerror})") from None
    return parse_flow(text, str(path), actions=actions, manifests=manifests,
                      calendars=calendars)


def parse_flow(text: str, path: str, *, actions: Collection[str] | None = None,
               manifests: Mapping[str, Manifest] | None = None,
               calendars: Collection[str] | None = None) -> Flow:
    """Validate the flow source ``text``; ``path`` is used in positions and kept on the Flow.

    ``actions``, ``manifests`` and ``calendars`` as for :func:`load_flow`. Raises
    ``LoadError`` with every problem found.
    """
    declared = ({name: schema for name, schema in actions.items() if isinstance(schema, Mapping)}
                if isinstance(actions, Mapping) else {})
    ctx = LoadContext(file=path, actions=BUILTIN_ACTIONS | frozenset(actions or ()),
                      manifests=manifests, arguments={**BUILTIN_ARGUMENTS, **declared},
                      calendars=None if calendars is None else frozenset(calendars))
    root, problems = read_yaml(text, path)
    ctx.problems.extend(problems)
    flow = None
    if isinstance(root, YamlMap):
        flow = _read_flow(ctx, root, text)
    elif root is not None:
        ctx.report(root.pos, "a flow file must be a mapping (flow:, steps:, …), "
                             f"got {describe(root)}")
    elif not problems:
        ctx.problems.append(Problem(path, 1, 1, "the file is empty; a flow needs at least "
                                                "'flow:' and 'steps:'"))
    if flow is None or ctx.problems:
        raise LoadError(_in_order(ctx.problems))
    return flow


def _read_flow(ctx: LoadContext, root: YamlMap, text: str) -> Flow:
    fields = Fields(ctx, root, "at flow level", allowed=_FLOW_KEYS,
                    required={"flow": " (the flow's name)", "steps": ""},
                    near_misses=_NEAR_MISSES)
    ctx = replace(ctx, timezone=fields.read("timezone", _read_timezone, None))
    inputs: dict[str, InputSpec] = read_optional(ctx, root, "inputs", _read_inputs, {})
    hold: tuple[HoldCondition, ...] = read_optional(ctx, root, "hold", read_hold, ())
    on = fields.entry("on")
    triggers = () if on is None else read_triggers(ctx, on.value, "on", inputs)
    _check_debounce_without_hold(ctx, triggers, hold)
    for name in inputs:
        ctx = ctx.claiming(name, f"the input '{name}'")
    throttle = read_optional(ctx, root, "throttle", read_throttle, None)
    steps = fields.entry("steps")
    recover = fields.entry("recover")
    return Flow(
        name=fields.read("flow", read_name, ""),
        body=(Scope(()) if steps is None
              else read_scope(ctx, steps.value, None if recover is None else recover.value)),
        source=text,
        digest=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        path=ctx.file,
        description=fields.read("description", read_text, ""),
        timezone=ctx.timezone,
        inputs=inputs,
        hold=hold,
        triggers=triggers,
        throttle=throttle,
        window=fields.read("window", read_calendar, None),
    )


def _check_debounce_without_hold(ctx: LoadContext, triggers: tuple[Trigger, ...],
                                 hold: tuple[HoldCondition, ...]) -> None:
    """A debounced trigger puts its run's start off; a flow's hold gates it: not both."""
    for trigger in triggers:
        if hold and isinstance(trigger, EventTrigger) and trigger.debounce is not None:
            ctx.report(trigger.pos, "a flow with 'hold:' cannot debounce its triggers (a "
                                    "debounced start is put off until its burst ends, a held "
                                    "one until its hold clears); drop one of them")


def _read_timezone(ctx: LoadContext, node: YamlNode, key: str) -> str | None:
    if not (isinstance(node, YamlScalar) and isinstance(node.value, str)):
        read_text(ctx, node, key)
        return None
    name = node.value
    try:
        parse_zone(name)
    except ValueError:
        hint = (did_you_mean(name, available_timezones())
                or " (use an IANA name such as Europe/Berlin)")
        ctx.report(node.pos, f"unknown timezone '{name}'{hint}")
        return None
    return name


def _read_inputs(ctx: LoadContext, node: YamlNode, key: str) -> dict[str, InputSpec]:
    mapping = read_mapping(ctx, node, key, " of name to { type, required, default }")
    if mapping is None:
        return {}
    inputs: dict[str, InputSpec] = {}
    for entry in mapping.entries:
        ctx.check_new_name(entry.key, entry.key_pos, "input")
        inputs[entry.key] = _read_input(ctx, entry.key, entry.value)
    return inputs


def _read_input(ctx: LoadContext, name: str, node: YamlNode) -> InputSpec:
    if isinstance(node, YamlScalar) and node.value is None:
        return InputSpec(name)
    spec = read_mapping(ctx, node, name, " such as { type: string, required: true }")
    if spec is None:
        return InputSpec(name)
    fields = Fields(ctx, spec, f"in input '{name}'", allowed=("type", "required", "default"))
    kind = _input_type(fields.read("type", read_choice(INPUT_TYPES), "any"))
    required = fields.read("required", read_bool, False)
    default = fields.entry("default")
    if default is None:
        return InputSpec(name, kind, required)
    if required:
        ctx.report(default.key_pos, f"input '{name}' is required, so it cannot have a default")
    value = to_plain(default.value)
    mismatch = type_mismatch(kind, value, ctx.timezone)
    if mismatch:
        ctx.report(default.value.pos, f"the default of input '{name}' {mismatch}")
    return InputSpec(name, kind, required, value, has_default=True)


def _input_type(name: str) -> InputType:
    return next((kind for kind in INPUT_TYPES if kind == name), "any")


def _file_error(path: Path, message: str) -> LoadError:
    return LoadError([Problem(str(path), 1, 1, message)])


def _in_order(problems: list[Problem]) -> list[Problem]:
    """Problems without repeats (a YAML alias can show one twice), sorted by position."""
    return sorted(dict.fromkeys(problems), key=lambda problem: (problem.line, problem.column))

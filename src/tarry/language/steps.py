"""Reading step lists and step bodies: ids, the one construct, the modifiers.

A step is a one-key mapping ``- <id>: <body>``; the body holds exactly one construct key (a
construct of :data:`~tarry.language.constructs.CONSTRUCTS` or an action name) plus the
modifiers ``if``, ``optional``, ``retry`` and ``window`` and the construct's companion keys.
"""

from __future__ import annotations

from datetime import timedelta

from tarry._suggest import did_you_mean
from tarry.language.business import read_calendar
from tarry.language.constructs import CONSTRUCTS, Body, ConstructSpec, read_action
from tarry.language.context import LoadContext
from tarry.language.fields import (
    Fields,
    read_bool,
    read_duration,
    read_if,
    read_mapping,
    read_optional,
    read_positive_int,
    read_rate,
    read_steps_node,
)
from tarry.language.model import Position, Retry, Scope, Step
from tarry.language.yamlsource import YamlEntry, YamlMap, YamlNode, YamlScalar, describe

__all__ = ["MODIFIERS", "read_scope"]

MODIFIERS = ("if", "optional", "retry", "window")
"""Keys any step body may carry beside its construct (``retry`` on action steps only)."""

_ACTION = ConstructSpec(read_action, ("timeout",))
_AN_ACTION = "an action"
"""How a message names the action steps among the constructs a companion key goes with."""
_COMPANION_OF = {
    key: (*(f"'{name}'" for name, spec in CONSTRUCTS.items() if key in spec.companions),
          *((_AN_ACTION,) if key in _ACTION.companions else ()))
    for spec in (*CONSTRUCTS.values(), _ACTION) for key in spec.companions
}


def read_scope(ctx: LoadContext, steps: YamlNode, recover: YamlNode | None) -> Scope:
    """A scope: its steps, then its recover steps, whose ids share one namespace.

    Each step sees the ids of the steps before it; recover steps also see ``error`` and
    every id of the scope (any of those steps may have completed before the failure).
    """
    ids: dict[str, Position] = {}
    body = _read_list(ctx, steps, "steps", ids)
    if recover is None:
        return Scope(body)
    return Scope(body, _read_list(ctx.seeing([*ids, "error"]), recover, "recover", ids))


def _read_list(ctx: LoadContext, node: YamlNode, key: str,
               ids: dict[str, Position]) -> tuple[Step, ...]:
    items = read_steps_node(ctx, node, key)
    steps: list[Step] = []
    for item in items.items if items else ():
        step = _read_item(ctx, item, ids)
        if step is not None:
            steps.append(step)
        ctx = ctx.seeing(ids)
    return tuple(steps)


def _read_item(ctx: LoadContext, item: YamlNode, ids: dict[str, Position]) -> Step | None:
    if not isinstance(item, YamlMap) or len(item.entries) != 1:
        ctx.report(item.pos, f"a step is written '- <id>: <body>', got {_shape(item)}")
        return None
    entry = item.entries[0]
    _check_id(ctx, entry.key, entry.key_pos, ids)
    body = entry.value
    if isinstance(body, YamlScalar) and body.value is None:
        ctx.report(entry.key_pos, f"step '{entry.key}' has an empty body")
        return None
    if not isinstance(body, YamlMap):
        ctx.report(body.pos, f"step '{entry.key}' must be a mapping of one construct plus "
                             f"modifiers, got {describe(body)}")
        return None
    return _read_body(ctx, entry.key, entry.key_pos, body)


def _shape(item: YamlNode) -> str:
    if isinstance(item, YamlMap):
        keys = ", ".join(f"'{key}'" for key in item.key_list())
        return f"{len(item.entries)} keys ({keys}); indent the body under the id"
    return describe(item)


def _check_id(ctx: LoadContext, step_id: str, pos: Position, ids: dict[str, Position]) -> None:
    ctx.check_new_name(step_id, pos, "step id")
    if step_id in ids:
        ctx.report(pos, f"duplicate step id '{step_id}' in this scope "
                        f"(first at line {ids[step_id].line})")
    else:
        ids[step_id] = pos


def _read_body(ctx: LoadContext, step_id: str, pos: Position, node: YamlMap) -> Step | None:
    constructs = _construct_entries(ctx, node)
    if len(constructs) != 1:
        _report_construct_count(ctx, step_id, node, [entry.key for entry in constructs])
        return None
    entry = constructs[0]
    spec = CONSTRUCTS.get(entry.key, _ACTION)
    _check_other_keys(ctx, node, entry.key, spec)
    return Step(id=step_id, pos=pos,
                construct=spec.read(ctx, Body(step_id, node, entry, read_scope)),
                if_=read_optional(ctx, node, "if", read_if, None),
                optional=read_optional(ctx, node, "optional", read_bool, False),
                retry=read_optional(ctx, node, "retry", _read_retry, None),
                window=read_optional(ctx, node, "window", read_calendar, None))


def _construct_entries(ctx: LoadContext, node: YamlMap) -> list[YamlEntry]:
    """The entries naming a construct or action, leaving out companions of another one."""
    found = [entry.key for entry in node.entries
             if entry.key in CONSTRUCTS or entry.key in ctx.actions]
    return [entry for entry in node.entries if entry.key in found
            and not any(entry.key in CONSTRUCTS[other].companions
                        for other in found if other in CONSTRUCTS)]


def _report_construct_count(ctx: LoadContext, step_id: str, node: YamlMap,
                            constructs: list[str]) -> None:
    if constructs:
        names = ", ".join(f"'{key}'" for key in constructs)
        ctx.report(node.pos, f"step '{step_id}' has {len(constructs)} constructs ({names}); "
                             "a step holds exactly one")
        return
    unknown = [entry for entry in node.entries
               if entry.key not in MODIFIERS and entry.key not in _COMPANION_OF]
    for entry in unknown:
        ctx.report(entry.key_pos, _unknown_key(ctx, entry.key, tuple(_COMPANION_OF)))
    if not unknown:
        ctx.report(node.pos, f"step '{step_id}' has no construct: add an action or one of "
                             f"{', '.join(CONSTRUCTS)}")


def _check_other_keys(ctx: LoadContext, node: YamlMap, key: str, spec: ConstructSpec) -> None:
    for entry in node.entries:
        if entry.key == key or entry.key in spec.companions:
            continue
        if entry.key == "retry" and spec is not _ACTION:
            ctx.report(entry.key_pos, "'retry' is only allowed on action steps")
        elif entry.key in _COMPANION_OF:
            ctx.report(entry.key_pos, f"'{entry.key}' is only allowed with "
                                      f"{_either(_COMPANION_OF[entry.key])}")
        elif entry.key not in MODIFIERS:
            ctx.report(entry.key_pos, _unknown_key(ctx, entry.key, spec.companions))


def _either(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _unknown_key(ctx: LoadContext, key: str, companions: tuple[str, ...]) -> str:
    known = [*CONSTRUCTS, *MODIFIERS, *companions, *ctx.actions]
    return f"unknown action or key '{key}'{did_you_mean(key, known)}"


def _read_retry(ctx: LoadContext, node: YamlNode, key: str) -> Retry:
    mapping = read_mapping(ctx, node, key, " such as { max: 3, every: 10s }")
    if mapping is None:
        return Retry(1, timedelta(0))
    fields = Fields(ctx, mapping, "in 'retry'", allowed=("max", "every", "backoff"),
                    required={"max": "", "every": ""})
    return Retry(max=fields.read("max", read_positive_int, 1),
                 every=fields.read("every", read_duration, timedelta(0)),
                 backoff=fields.read("backoff", read_rate, 1.0))


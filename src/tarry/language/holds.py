"""Reading a flow's ``hold:`` start gate: one to four ``after`` / ``check`` conditions."""

from __future__ import annotations

from tarry.language.context import LoadContext
from tarry.language.fields import Fields, read_instant
from tarry.language.model import HoldAfter, HoldCheck, HoldCondition, Position
from tarry.language.yamlsource import YamlMap, YamlNode, YamlScalar, YamlSeq, describe

__all__ = ["MAX_CONDITIONS", "read_hold"]

MAX_CONDITIONS = 4
"""A hold has at most this many conditions."""

_SHAPE = "'- after: <instant>' or '- check: <name>'"
_AFTER_IS_LITERAL = (
    "a hold's 'after' is a literal instant (the gate is decided before the first step, and "
    "a flow's hold is the same for every run); to hold one run until an instant it is given, "
    "start it with --hold-after INSTANT (tarry start, tarry run) or hold_after "
    "(POST /v1/runs)")


def read_hold(ctx: LoadContext, node: YamlNode, key: str) -> tuple[HoldCondition, ...]:
    """The conditions of ``hold:``; at most one ``after`` and no ``check`` named twice."""
    if not isinstance(node, YamlSeq):
        ctx.report(node.pos, f"'hold' must be a list of 1 to {MAX_CONDITIONS} conditions, "
                             f"each {_SHAPE}, got {describe(node)}")
        return ()
    if not node.items:
        ctx.report(node.pos, "'hold' needs at least one condition")
    elif len(node.items) > MAX_CONDITIONS:
        ctx.report(node.items[MAX_CONDITIONS].pos,
                   f"'hold' has {len(node.items)} conditions; at most {MAX_CONDITIONS} "
                   "are allowed")
    conditions = [condition for item in node.items
                  if (condition := _read_condition(ctx, item)) is not None]
    _check_repeats(ctx, conditions)
    return tuple(conditions)


def _read_condition(ctx: LoadContext, node: YamlNode) -> HoldCondition | None:
    if not isinstance(node, YamlMap) or not node.entries:
        ctx.report(node.pos, f"a hold condition is {_SHAPE}, got {describe(node)}")
        return None
    if len(node.entries) > 1:
        keys = ", ".join(f"'{key}'" for key in node.key_list())
        ctx.report(node.pos, "a hold condition has exactly one key, 'after' or 'check'; "
                             f"this one has {len(node.entries)} ({keys})")
        return None
    Fields(ctx, node, "in a hold condition", allowed=("after", "check"))
    entry = node.entries[0]
    if entry.key == "after":
        if isinstance(entry.value, YamlScalar) and "{{" in str(entry.value.value):
            ctx.report(entry.value.pos, _AFTER_IS_LITERAL)
            return None
        return HoldAfter(read_instant(ctx, entry.value, "after"), entry.key_pos)
    if entry.key == "check":
        return HoldCheck(_read_check_name(ctx, entry.value), entry.key_pos)
    return None


def _read_check_name(ctx: LoadContext, node: YamlNode) -> str:
    if isinstance(node, YamlScalar) and isinstance(node.value, str) and node.value.strip() \
            and "{{" not in node.value:
        return node.value
    ctx.report(node.pos, f"'check' must be the name of a check declared in the project "
                         f"config, got {describe(node)}")
    return ""


def _check_repeats(ctx: LoadContext, conditions: list[HoldCondition]) -> None:
    first_after: Position | None = None
    first_check: dict[str, Position] = {}
    for condition in conditions:
        if isinstance(condition, HoldAfter):
            if first_after is not None:
                ctx.report(condition.pos, "a hold has at most one 'after' "
                                          f"(first at line {first_after.line})")
            first_after = first_after or condition.pos
        elif condition.name in first_check:
            ctx.report(condition.pos, f"check '{condition.name}' appears twice in 'hold' "
                                      f"(first at line {first_check[condition.name].line})")
        else:
            first_check[condition.name] = condition.pos

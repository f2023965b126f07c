"""Reading the pacing of starts: a flow's ``throttle`` and an event trigger's ``debounce``.

``throttle: {key, limit, per}`` — ``key`` an expression over the flow's inputs and ``run``
(optional: one key for the flow), ``limit`` a positive integer, ``per`` a positive duration.
``debounce: {key, period, max}`` — ``key`` an expression over ``event`` (optional: one key
for the trigger), ``period`` a positive duration, ``max`` (optional) no shorter than it.
"""

from __future__ import annotations

from datetime import timedelta

from tarry.language.context import LoadContext
from tarry.language.durations import format_duration
from tarry.language.fields import (
    Fields,
    holds_template,
    read_mapping,
    read_positive_duration,
    read_positive_int,
    read_text,
)
from tarry.language.model import Debounce, Template, Throttle
from tarry.language.yamlsource import YamlNode

__all__ = ["read_debounce", "read_throttle"]

_THROTTLE_KEYS = ("key", "limit", "per")
_DEBOUNCE_KEYS = ("key", "period", "max")
_THROTTLE_NEAR_MISSES = {
    "rate": " (did you mean 'limit'?)",
    "count": " (did you mean 'limit'?)",
    "max": " (did you mean 'limit'?)",
    "period": " (did you mean 'per'?)",
    "every": " (did you mean 'per'?)",
    "window": " (did you mean 'per'?)",
    "interval": " (did you mean 'per'?)",
}
_DEBOUNCE_NEAR_MISSES = {
    "per": " (did you mean 'period'?)",
    "wait": " (did you mean 'period'?)",
    "delay": " (did you mean 'period'?)",
    "timeout": " (did you mean 'max'?)",
    "max_delay": " (did you mean 'max'?)",
    "limit": " (did you mean 'max'?)",
}
_SOME_PERIOD = timedelta(seconds=1)


def read_throttle(ctx: LoadContext, node: YamlNode, key: str) -> Throttle | None:
    """The flow's ``throttle``; ``ctx`` sees the flow's inputs (and ``run``)."""
    mapping = read_mapping(ctx, node, key, " such as { key: \"{{ customer }}\", limit: 100, "
                                           "per: 1m }")
    if mapping is None:
        return None
    fields = Fields(ctx, mapping, "in 'throttle'", allowed=_THROTTLE_KEYS,
                    required={"limit": " (how many runs may start per period, such as 100)",
                              "per": " (the period, such as 1m)"},
                    near_misses=_THROTTLE_NEAR_MISSES)
    return Throttle(key=fields.read("key", _read_key, None),
                    limit=fields.read("limit", read_positive_int, 1),
                    per=fields.read("per", read_positive_duration, _SOME_PERIOD))


def read_debounce(ctx: LoadContext, node: YamlNode, key: str) -> Debounce | None:
    """An event trigger's ``debounce``; ``ctx`` sees ``event``."""
    mapping = read_mapping(ctx, node, key, " such as { key: \"{{ event.repo }}\", period: 5m, "
                                           "max: 30m }")
    if mapping is None:
        return None
    fields = Fields(ctx, mapping, "in 'debounce'", allowed=_DEBOUNCE_KEYS,
                    required={"period": " (how long after the last event the run starts, "
                                        "such as 5m)"},
                    near_misses=_DEBOUNCE_NEAR_MISSES)
    period = fields.read("period", read_positive_duration, _SOME_PERIOD)
    entry = fields.entry("max")
    longest = None if entry is None else read_positive_duration(ctx, entry.value, "max")
    if longest is not None and entry is not None and longest < period:
        ctx.report(entry.value.pos, f"'max' ({format_duration(longest)}) must be at least "
                                    f"'period' ({format_duration(period)}) "
                                    "(the longest a start is put off cannot be shorter than "
                                    "the quiet period it waits for)")
    return Debounce(key=fields.read("key", _read_key, None), period=period,
                    max_delay=longest)


def _read_key(ctx: LoadContext, node: YamlNode, key: str) -> Template | None:
    """A key: an expression (its names checked against what ``ctx`` sees) or a literal text."""
    if holds_template(node):
        return ctx.template(str(node.value), node.pos)
    text = read_text(ctx, node, key)
    return Template(text) if text else None

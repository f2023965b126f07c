"""Typed readers for the values a flow file holds, and the key check of a mapping.

Readers never fail: on a bad value they report a problem and return a stand-in of the right
type, so that reading goes on and finds every problem in one pass. A flow with problems is
never handed out (the loader raises ``LoadError`` instead), so stand-ins are never seen.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime, timedelta
from typing import TypeGuard, TypeVar

from tarry._suggest import did_you_mean
from tarry.errors import ExpressionError
from tarry.language.context import LoadContext
from tarry.language.durations import looks_like_duration, parse_duration, parse_instant
from tarry.language.expressions import compile_template, is_template
from tarry.language.model import Template
from tarry.language.yamlsource import YamlEntry, YamlMap, YamlNode, YamlScalar, YamlSeq, describe

__all__ = [
    "BUSINESS_KEYS",
    "NAME_PATTERN",
    "Fields",
    "Reader",
    "holds_template",
    "read_bool",
    "read_choice",
    "read_condition",
    "read_duration",
    "read_duration_or_template",
    "read_if",
    "read_instant",
    "read_instant_or_template",
    "read_items",
    "read_mapping",
    "read_name",
    "read_non_negative_int",
    "read_optional",
    "read_positive_duration",
    "read_positive_int",
    "read_rate",
    "read_steps_node",
    "read_text",
    "read_timeout",
]

T = TypeVar("T")
Reader = Callable[[LoadContext, YamlNode, str], T]
"""Reads one value: ``(ctx, node, key) -> value``; reports and returns a stand-in if bad."""

NAME_PATTERN = "[a-z0-9][a-z0-9_.-]*"
_NAME = re.compile(NAME_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SOME_DURATION = timedelta(seconds=1)
"""The stand-in for a bad duration: positive, so it causes no further complaint."""
BUSINESS_KEYS = ("wait.for, the timeout of wait_for and ask, remind.every and "
                 "repeat.every")
"""Where a flow waits for a duration, so where ``{for, calendar}`` may be written."""
_DATE_LIKE = re.compile(r"\s*\d{4}-\d{2}-\d{2}")


class Fields:
    """A mapping whose keys were checked: unknown keys and missing required keys reported.

    ``where`` completes the messages (``"in 'repeat'"``); ``required`` maps each required
    key to a hint appended when it is missing (not reported when an unknown key was already
    suggested to be it); ``near_misses`` maps known mistakes to a hint that replaces the
    usual suggestion.
    """

    def __init__(self, ctx: LoadContext, node: YamlMap, where: str, *,
                 allowed: Collection[str], required: Mapping[str, str] | None = None,
                 near_misses: Mapping[str, str] | None = None) -> None:
        self.ctx = ctx
        self.node = node
        self.hints: list[str] = []
        """The suggestion given for each unknown key."""
        for entry in node.entries:
            if entry.key not in allowed:
                self.hints.append((near_misses or {}).get(entry.key)
                                  or _suggest(entry.key, allowed))
                ctx.report(entry.key_pos, f"unknown key '{entry.key}' {where}{self.hints[-1]}")
        for key, why in (required or {}).items():
            if node.get(key) is None and not self.suggested(key):
                ctx.report(node.pos, f"missing '{key}' {where}{why}")

    def suggested(self, key: str) -> bool:
        """Whether an unknown key was taken for a misspelling of ``key`` (so its absence
        need not be reported again)."""
        return did_you_mean(key, [key]) in self.hints

    def entry(self, key: str) -> YamlEntry | None:
        """The entry for ``key`` when present."""
        return self.node.get(key)

    def read(self, key: str, reader: Reader[T], default: T) -> T:
        """``key``'s value read by ``reader``, or ``default`` when the key is absent."""
        return read_optional(self.ctx, self.node, key, reader, default)


def read_optional(ctx: LoadContext, node: YamlMap, key: str, reader: Reader[T],
                  default: T) -> T:
    """``node[key]`` read by ``reader``, or ``default`` when the key is absent."""
    entry = node.get(key)
    return default if entry is None else reader(ctx, entry.value, key)


def _suggest(key: str, allowed: Collection[str]) -> str:
    return did_you_mean(key, allowed) or f" (expected one of: {', '.join(sorted(allowed))})"


def _bad(ctx: LoadContext, node: YamlNode, key: str, expected: str) -> None:
    ctx.report(node.pos, f"'{key}' must be {expected}, got {describe(node)}")


def _string(node: YamlNode) -> str | None:
    if isinstance(node, YamlScalar) and isinstance(node.value, str):
        return node.value
    return None


def read_text(ctx: LoadContext, node: YamlNode, key: str) -> str:
    """A string."""
    text = _string(node)
    if text is None:
        _bad(ctx, node, key, "a string")
        return ""
    return text


def read_name(ctx: LoadContext, node: YamlNode, key: str) -> str:
    """A name such as a flow or exit name: ``[a-z0-9][a-z0-9_.-]*``."""
    text = _string(node)
    if text is None or not _NAME.fullmatch(text):
        _bad(ctx, node, key, f"a name matching {NAME_PATTERN}")
        return "invalid"
    return text


def read_bool(ctx: LoadContext, node: YamlNode, key: str) -> bool:
    """``true`` or ``false`` (YAML 1.2: ``yes``/``on`` are strings, not booleans)."""
    if isinstance(node, YamlScalar) and isinstance(node.value, bool):
        return node.value
    _bad(ctx, node, key, "true or false")
    return False


def _integer(node: YamlNode) -> int | None:
    if isinstance(node, YamlScalar) and type(node.value) is int:
        return node.value
    return None


def read_positive_int(ctx: LoadContext, node: YamlNode, key: str) -> int:
    """An integer of at least 1 (``true``, ``2.5`` and ``"3"`` are not integers)."""
    number = _integer(node)
    if number is None or number < 1:
        _bad(ctx, node, key, "a positive integer")
        return 1
    return number


def read_non_negative_int(ctx: LoadContext, node: YamlNode, key: str) -> int:
    """An integer of at least 0."""
    number = _integer(node)
    if number is None or number < 0:
        _bad(ctx, node, key, "a non-negative integer")
        return 0
    return number


def read_rate(ctx: LoadContext, node: YamlNode, key: str) -> float:
    """A growth factor: a number of at least 1."""
    value = node.value if isinstance(node, YamlScalar) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or not (
            1 <= value < math.inf):
        _bad(ctx, node, key, "a number of at least 1")
        return 1.0
    return float(value)


def read_choice(choices: Collection[str]) -> Reader[str]:
    """A reader accepting exactly one of ``choices``."""
    def read(ctx: LoadContext, node: YamlNode, key: str) -> str:
        text = _string(node)
        if text is None or text not in choices:
            _bad(ctx, node, key, f"one of {', '.join(choices)}")
            return next(iter(choices))
        return text
    return read


def read_duration(ctx: LoadContext, node: YamlNode, key: str) -> timedelta:
    """A literal duration (``30s``, ``1h30m``, ``PT30S``); months and years refused."""
    text = _string(node)
    if isinstance(node, YamlMap) and node.get("calendar") is not None:
        ctx.report(node.pos, f"'{key}' does not wait on a calendar; business time "
                             f"({{for, calendar}}) goes on {BUSINESS_KEYS}")
        return _SOME_DURATION
    if text is None:
        _bad(ctx, node, key, "a duration such as 30s or 2d")
        return _SOME_DURATION
    try:
        return parse_duration(text)
    except ValueError as exc:
        ctx.report(node.pos, str(exc))
        return _SOME_DURATION


def read_positive_duration(ctx: LoadContext, node: YamlNode, key: str) -> timedelta:
    """A literal duration longer than zero."""
    delta = read_duration(ctx, node, key)
    if delta <= timedelta(0):
        _bad(ctx, node, key, "a duration longer than 0s")
        return _SOME_DURATION
    return delta


def read_instant(ctx: LoadContext, node: YamlNode, key: str) -> datetime:
    """A literal instant with a zone (or in the flow's ``timezone:``); impossible ones refused."""
    text = _string(node)
    if text is None:
        _bad(ctx, node, key, "an instant such as 2026-09-01T09:00:00Z")
        return _EPOCH
    try:
        return parse_instant(text, ctx.timezone)
    except ValueError as exc:
        ctx.report(node.pos, str(exc))
        return _EPOCH


def read_duration_or_template(ctx: LoadContext, node: YamlNode,
                              key: str) -> timedelta | Template:
    """A literal duration or an expression giving one."""
    return _template_of(ctx, node) or read_duration(ctx, node, key)


def read_instant_or_template(ctx: LoadContext, node: YamlNode,
                             key: str) -> datetime | Template:
    """A literal instant or an expression giving one."""
    return _template_of(ctx, node) or read_instant(ctx, node, key)


def read_timeout(ctx: LoadContext, node: YamlNode,
                 key: str) -> timedelta | datetime | Template:
    """A duration (``24h``), an instant (``2026-09-01T09:00:00Z``) or an expression."""
    template = _template_of(ctx, node)
    if template is not None:
        return template
    text = _string(node)
    if text is not None and _DATE_LIKE.match(text):
        return read_instant(ctx, node, key)
    if text is not None and looks_like_duration(text):
        return read_duration(ctx, node, key)
    _bad(ctx, node, key, "a duration such as 24h, an instant such as 2026-09-01T09:00:00Z, "
                         "or an expression")
    return timedelta(0)


def read_condition(ctx: LoadContext, node: YamlNode, key: str) -> Template:
    """A condition: one ``{{ … }}`` expression, nothing around it."""
    return _condition(ctx, node, key, "one {{ … }} expression, such as "
                                      "\"{{ check.status == 'done' }}\"") or Template("")


def read_if(ctx: LoadContext, node: YamlNode, key: str) -> Template | bool:
    """The ``if`` modifier: a condition, or a literal ``true``/``false``."""
    if isinstance(node, YamlScalar) and isinstance(node.value, bool):
        return node.value
    return _condition(ctx, node, key, "one {{ … }} expression or true/false") or False


def _condition(ctx: LoadContext, node: YamlNode, key: str, expected: str) -> Template | None:
    text = _string(node)
    if text is None or not _is_single_expression(text):
        _bad(ctx, node, key, expected)
        return None
    return ctx.template(text, node.pos)


def read_steps_node(ctx: LoadContext, node: YamlNode, key: str) -> YamlSeq | None:
    """A non-empty list (of steps); None after reporting when it is not one."""
    if isinstance(node, YamlSeq) and node.items:
        return node
    _bad(ctx, node, key, "a non-empty list of steps")
    return None


def read_mapping(ctx: LoadContext, node: YamlNode, key: str, example: str = "") -> YamlMap | None:
    """A mapping; None after reporting (with ``example`` as a hint) when it is not one."""
    if isinstance(node, YamlMap):
        return node
    _bad(ctx, node, key, f"a mapping{example}")
    return None


def read_items(ctx: LoadContext, node: YamlNode, key: str, shape: str,
               read: Callable[[LoadContext, YamlNode, str], T | None]) -> tuple[T, ...]:
    """The items of the list ``key``, each read by ``read`` as ``key[i]`` (an item it could
    not read left out); ``shape`` says what the list holds, for the message when ``node``
    is not a list (``events such as '- { after: 2h, … }'``)."""
    if not isinstance(node, YamlSeq):
        _bad(ctx, node, key, f"a list of {shape}")
        return ()
    items = (read(ctx, item, f"{key}[{index}]") for index, item in enumerate(node.items))
    return tuple(item for item in items if item is not None)


def holds_template(node: YamlNode) -> TypeGuard[YamlScalar]:
    """Whether ``node`` is a string holding ``{{``."""
    return isinstance(node, YamlScalar) and isinstance(node.value, str) and is_template(
        node.value)


def _template_of(ctx: LoadContext, node: YamlNode) -> Template | None:
    return ctx.template(str(node.value), node.pos) if holds_template(node) else None


def _is_single_expression(text: str) -> bool:
    """Whether ``text`` is one ``{{ … }}`` and nothing else (a broken one counts: its syntax
    error is reported when the template is checked)."""
    try:
        return compile_template(text).native is not None
    except ExpressionError:
        return is_template(text)

"""Reading business time in a flow: ``{for: 16h, calendar: support}`` where a flow waits, and
``window: support`` on a flow or a step.

A calendar is deployment configuration (``[calendars.NAME]``), but it decides what a flow
means, so a flow naming one that is not configured is refused at load, with a suggestion.
The load context's ``calendars`` says which exist (None: not checked, as for a stored flow a
run already started with: its calendars are looked up when it runs).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from datetime import timedelta
from typing import TypeVar

from tarry.errors import ExpressionError
from tarry.language.context import LoadContext, unknown_calendar
from tarry.language.expressions import compile_template, is_template
from tarry.language.expressions.template import calendars_named
from tarry.language.fields import Fields, read_duration_or_template, read_text
from tarry.language.model import BusinessTime, Template
from tarry.language.yamlsource import YamlMap, YamlNode, YamlScalar

__all__ = ["business_or", "calendars_used", "read_business_time", "read_calendar"]

T = TypeVar("T")

_ONE_DAY = timedelta(days=1)


def business_or(read: Callable[[LoadContext, YamlNode, str], T]) -> Callable[
        [LoadContext, YamlNode, str], T | BusinessTime]:
    """A reader of ``{for, calendar}`` (a mapping), or else of what ``read`` reads."""
    def reader(ctx: LoadContext, node: YamlNode, key: str) -> T | BusinessTime:
        if isinstance(node, YamlMap):
            return read_business_time(ctx, node, key)
        return read(ctx, node, key)
    return reader


def read_business_time(ctx: LoadContext, node: YamlMap, key: str) -> BusinessTime:
    """``{for: <duration or expression>, calendar: <name>}``."""
    fields = Fields(ctx, node, f"in '{key}'", allowed=("for", "calendar"),
                    required={"for": " (how much business time, such as 16h or 2d)",
                              "calendar": " (the name of a [calendars.NAME] table)"})
    fallback: timedelta | Template = timedelta(hours=1)
    amount = fields.read("for", _read_amount, fallback)
    calendar = fields.read("calendar", read_calendar, "")
    return BusinessTime(amount, calendar)


def _read_amount(ctx: LoadContext, node: YamlNode, key: str) -> timedelta | Template:
    """A duration of business time: whole days are business days, so hours that add up to
    a day or more are refused (``40h`` would silently read as ``1d16h``)."""
    amount = read_duration_or_template(ctx, node, key)
    if isinstance(amount, timedelta) and isinstance(node, YamlScalar):
        if amount <= timedelta(0):
            ctx.report(node.pos, f"'{key}' must be a duration longer than 0s")
        elif amount >= _ONE_DAY and _written_days(str(node.value)) * _ONE_DAY != (
                amount - amount % _ONE_DAY):
            ctx.report(node.pos, f"with a calendar a day is a business day, so '{node.value}' "
                                 f"would read as {_split(amount)}; write open hours under "
                                 "24h, or business days such as 5d")
    return amount


def _written_days(text: str) -> int:
    """The whole days a duration spells with ``d``/``w`` (``D``/``W`` in ISO 8601)."""
    factors = {"d": 1, "w": 7}
    return sum(number * factors.get(unit, 0) for number, unit in _units(text))


def _units(text: str) -> list[tuple[int, str]]:
    raw = text.strip()
    if raw[:1] in "pP":
        date_part = raw.upper().split("T")[0]
        return [(int(number), unit.lower()) for number, unit in
                re.findall(r"(\d+)([WD])", date_part)]
    return [(int(number), unit) for number, unit in re.findall(r"(\d+)(ms|s|m|h|d|w)", raw)]


def _split(amount: timedelta) -> str:
    days, rest = amount.days, amount - timedelta(days=amount.days)
    hours = rest // timedelta(hours=1)
    minutes = (rest % timedelta(hours=1)) // timedelta(minutes=1)
    parts = f"{days}d" + (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    return (f"{parts} ({days} business day{'s' if days > 1 else ''}"
            + (", then open time)" if rest else ")"))


def read_calendar(ctx: LoadContext, node: YamlNode, key: str) -> str:
    """The name of a configured calendar; an unknown one refused with a suggestion."""
    name = read_text(ctx, node, key)
    if name and ctx.calendars is not None and name not in ctx.calendars:
        ctx.report(node.pos, unknown_calendar(name, ctx.calendars))
    return name


_NOT_WALKED = frozenset({"source", "digest", "path", "pos"})
"""Fields of a flow's nodes that hold no calendar (the file's text is not an expression)."""


def calendars_used(node: object) -> set[str]:
    """Every calendar a loaded flow (or any node of one) names: in ``window``, in business
    time, and as a literal name in a ``plus``/``minus`` filter."""
    found: set[str] = set()
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, BusinessTime):
            found.add(item.calendar)
            stack.append(item.amount)
        elif isinstance(item, Template):
            stack.append(item.source)
        elif isinstance(item, str):
            if is_template(item):
                found |= _named_in(item)
        elif is_dataclass(item) and not isinstance(item, type):
            window = getattr(item, "window", None)
            if isinstance(window, str):
                found.add(window)
            stack.extend(getattr(item, each.name) for each in fields(item)
                         if each.name not in _NOT_WALKED and each.name != "window")
        elif isinstance(item, tuple | list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def _named_in(text: str) -> frozenset[str]:
    try:
        return calendars_named(compile_template(text))
    except ExpressionError:
        return frozenset()

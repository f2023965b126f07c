"""The filters (``value | name(args)``) and functions (``now()``) an expression may call.

These tables are the whole of what an expression can call: a name missing from them is refused
when the template is compiled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tarry._suggest import did_you_mean
from tarry._text import clip
from tarry.errors import ExpressionError
from tarry.language.calendars import Calendar
from tarry.language.durations import parse_duration, parse_instant
from tarry.language.expressions.context import Env
from tarry.language.expressions.limits import check_string_size
from tarry.language.expressions.values import UNDEFINED, kind_of, to_json

__all__ = ["FILTERS", "FUNCTIONS", "FilterSpec", "FunctionSpec", "check_arity"]

_MAX_ROUND_DIGITS = 100


@dataclass(frozen=True)
class FilterSpec:
    """A filter: ``apply(value, args, env)``, how many arguments it takes, whether its
    value may be undefined (only ``default`` says yes), whether it answers one of its
    inputs as it is (``picks``: ``default`` again) and whether it writes its value out
    (``writes``: ``json``, whose walk the filter node charges)."""

    apply: Callable[[Any, tuple[Any, ...], Env], Any]
    min_args: int = 0
    max_args: int = 0
    accepts_undefined: bool = False
    picks: bool = False
    writes: bool = False


@dataclass(frozen=True)
class FunctionSpec:
    """A function: ``apply(args, env)`` and how many arguments it takes."""

    apply: Callable[[tuple[Any, ...], Env], Any]
    min_args: int = 0
    max_args: int = 0


def check_arity(what: str, name: str, spec: FilterSpec | FunctionSpec, count: int) -> None:
    """Refuse a call of filter or function ``name`` with the wrong number of arguments."""
    if spec.min_args <= count <= spec.max_args:
        return
    if spec.max_args == 0:
        takes = "no arguments"
    elif spec.min_args == spec.max_args:
        takes = f"{spec.min_args} argument" + ("s" if spec.min_args > 1 else "")
    else:
        takes = f"{spec.min_args} to {spec.max_args} arguments"
    raise ExpressionError(f"{what} '{name}' takes {takes}, not {count}")


def _instant(name: str, value: Any, env: Env) -> datetime:
    """An instant, or an ISO 8601 string read as one (in the flow's timezone if zone-less)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value
    if not isinstance(value, str):
        raise ExpressionError(f"filter '{name}' needs an instant or an ISO 8601 string, "
                              f"not {kind_of(value)}")
    try:
        return parse_instant(value, env.ctx.timezone)
    except ValueError as exc:
        raise ExpressionError(f"filter '{name}': {exc}") from None


def _duration(name: str, value: Any) -> timedelta:
    """A duration, or a string spelling one (``1d``, ``PT30S``)."""
    if isinstance(value, timedelta):
        return value
    if not isinstance(value, str):
        raise ExpressionError(f"filter '{name}' needs a duration such as 1d, not "
                              f"{kind_of(value)}")
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise ExpressionError(f"filter '{name}': {exc}") from None


def _shift(name: str, sign: int) -> FilterSpec:
    """``plus`` / ``minus``: move an instant by a duration, or by business time on the
    calendar named by a second argument (``plus(2d, 'support')``)."""
    def shift(value: Any, args: tuple[Any, ...], env: Env) -> datetime:
        instant, delta = _instant(name, value, env), _duration(name, args[0])
        if len(args) > 1:
            return _shift_on(name, _calendar(name, args[1], env), instant, sign * delta)
        try:
            return instant + sign * delta
        except OverflowError:
            raise ExpressionError(f"filter '{name}': the result is out of range") from None
    return FilterSpec(shift, min_args=1, max_args=2)


def _calendar(name: str, value: Any, env: Env) -> Calendar:
    """The calendar a filter's argument names."""
    if not isinstance(value, str):
        raise ExpressionError(f"filter '{name}' takes a calendar's name as its second "
                              f"argument, not {kind_of(value)}")
    calendar = env.ctx.calendars.get(value)
    if calendar is None:
        raise ExpressionError(f"filter '{name}': unknown calendar '{clip(value, 60)}'"
                              f"{did_you_mean(value, env.ctx.calendars)}")
    return calendar


def _shift_on(name: str, calendar: Calendar, instant: datetime, delta: timedelta) -> datetime:
    """``instant`` moved by ``delta`` of business time (back when negative)."""
    try:
        return (calendar.add(instant, delta) if delta >= timedelta(0)
                else calendar.subtract(instant, -delta))
    except ValueError as exc:
        raise ExpressionError(f"filter '{name}': {exc}") from None


def _default(value: Any, args: tuple[Any, ...], _env: Env) -> Any:
    """The argument when the value is undefined or null, else the value."""
    return args[0] if value is UNDEFINED or value is None else value


def _recase(name: str, method: Callable[[str], str]) -> FilterSpec:
    """``lower`` / ``upper``."""
    def recase(value: Any, _args: tuple[Any, ...], env: Env) -> str:
        if kind_of(value) != "str":
            raise ExpressionError(f"filter '{name}' needs a str, not {kind_of(value)}")
        env.charge_text(len(value))
        result = method(value)
        check_string_size(len(result))
        return result
    return FilterSpec(recase)


def _length(value: Any, _args: tuple[Any, ...], _env: Env) -> int:
    """Characters of a string, items of a list, keys of a dict."""
    if kind_of(value) not in {"str", "list", "dict"}:
        raise ExpressionError(f"filter 'length' needs a str, list or dict, not "
                              f"{kind_of(value)}")
    return len(value)


def _json(value: Any, _args: tuple[Any, ...], env: Env) -> str:
    """Compact JSON text (the walk of a built value paid for before it is written, by the
    filter node; the text by its length)."""
    text = to_json(value)
    env.charge_text(len(text))
    return text


def _date(value: Any, _args: tuple[Any, ...], env: Env) -> datetime:
    """An ISO 8601 string read as an instant; an instant stays as it is."""
    return _instant("date", value, env)


def _round(value: Any, args: tuple[Any, ...], _env: Env) -> int | float:
    """Round like Python's ``round`` (halves to even); an int when ``ndigits`` is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExpressionError(f"filter 'round' needs a number, not {kind_of(value)}")
    ndigits = args[0] if args else 0
    if isinstance(ndigits, bool) or not isinstance(ndigits, int):
        raise ExpressionError(f"filter 'round' needs an int number of digits, not "
                              f"{kind_of(ndigits)}")
    if abs(ndigits) > _MAX_ROUND_DIGITS:
        raise ExpressionError(f"filter 'round' takes -{_MAX_ROUND_DIGITS} to "
                              f"{_MAX_ROUND_DIGITS} digits, not {ndigits}")
    return round(value) if ndigits == 0 else round(value, ndigits)


FILTERS: dict[str, FilterSpec] = {
    "minus": _shift("minus", -1),
    "plus": _shift("plus", 1),
    "default": FilterSpec(_default, min_args=1, max_args=1, accepts_undefined=True,
                          picks=True),
    "lower": _recase("lower", str.lower),
    "upper": _recase("upper", str.upper),
    "length": FilterSpec(_length),
    "json": FilterSpec(_json, writes=True),
    "date": FilterSpec(_date),
    "round": FilterSpec(_round, min_args=0, max_args=1),
}
"""Every filter, by name."""

FUNCTIONS: dict[str, FunctionSpec] = {
    "now": FunctionSpec(lambda _args, env: env.ctx.now),
}
"""Every function, by name."""

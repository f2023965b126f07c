"""The filters (minus, plus, default is in the access tests, lower, upper, length, json, date,
round) and the ``now()`` function."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from tarry.errors import ExpressionError
from tarry.language.expressions import EvalContext, compile_template

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
UTC_CTX = EvalContext(now=NOW)
BERLIN_CTX = EvalContext(now=NOW, timezone="Europe/Berlin")
SCOPE: dict[str, Any] = {
    "hire": {"start_date": "2026-03-10T09:00:00Z", "local_start": "2026-03-10T09:00:00"},
    "grace": timedelta(hours=2),
    "t": datetime(2026, 3, 1, 12, 0, 0, 250_000, tzinfo=UTC),
    "naive": datetime(2026, 3, 1, 12, 0),
}


def value_of(expression: str, ctx: EvalContext = UTC_CTX) -> Any:
    """The native value of ``{{ expression }}`` over ``SCOPE``."""
    return compile_template("{{ " + expression + " }}").render(SCOPE, ctx)


def failure(expression: str, ctx: EvalContext = UTC_CTX) -> str:
    """The reason ``{{ expression }}`` fails to evaluate."""
    with pytest.raises(ExpressionError) as caught:
        value_of(expression, ctx)
    return caught.value.reason


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    """An aware UTC datetime."""
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_a_start_date_string_minus_one_day() -> None:
    template = compile_template("{{ hire.start_date | minus(1d) }}")
    assert template.render(SCOPE, UTC_CTX) == utc(2026, 3, 9, 9, 0)


@pytest.mark.parametrize(("expression", "ctx", "expected"), [
    ("hire.start_date | minus(1d)", UTC_CTX, utc(2026, 3, 9, 9)),
    ("hire.start_date | plus(1h30m)", UTC_CTX, utc(2026, 3, 10, 10, 30)),
    ("hire.start_date | minus('1d')", UTC_CTX, utc(2026, 3, 9, 9)),
    ("hire.start_date | minus('P1D')", UTC_CTX, utc(2026, 3, 9, 9)),
    ("hire.start_date | plus(grace)", UTC_CTX, utc(2026, 3, 10, 11)),
    ("hire.local_start | minus(1d)", BERLIN_CTX, utc(2026, 3, 9, 8)),
    ("now() | plus(90m)", UTC_CTX, utc(2026, 3, 1, 13, 30)),
    ("now() | minus(-1d)", UTC_CTX, utc(2026, 3, 2, 12)),
    ("'2026-03-01T09:00:00+02:00' | plus(0s)", UTC_CTX, utc(2026, 3, 1, 7)),
    ("now() | minus(1d) | plus(1d) == now()", UTC_CTX, True),
])
def test_minus_and_plus(expression: str, ctx: EvalContext, expected: Any) -> None:
    assert value_of(expression, ctx) == expected


@pytest.mark.parametrize(("expression", "reason"), [
    ("5 | minus(1d)", "filter 'minus' needs an instant or an ISO 8601 string, not int"),
    ("naive | minus(1d)", "filter 'minus' needs an instant or an ISO 8601 string, not "
                          "datetime without timezone"),
    ("'soon' | minus(1d)", "filter 'minus': 'soon' is not an ISO 8601 instant "
                           "(e.g. 2026-09-01T09:00:00Z)"),
    ("hire.local_start | minus(1d)", "filter 'minus': instant '2026-03-10T09:00:00' has no "
                                     "timezone; add 'Z' or an offset such as +02:00, or "
                                     "declare the flow's 'timezone'"),
    ("now() | plus(5)", "filter 'plus' needs a duration such as 1d, not int"),
    ("now() | plus(null)", "filter 'plus' needs a duration such as 1d, not null"),
    ("now() | plus('soon')", "filter 'plus': 'soon' is not a duration (use e.g. 500ms, 30s, "
                             "15m, 24h, 2d, 1w, 1h30m or ISO 8601 like PT30S)"),
    ("now() | plus('1mo')", "filter 'plus': duration '1mo' uses months or years, whose "
                            "length is ambiguous; use days or weeks"),
    ("now() | plus(1d * 999999999)", "filter 'plus': the result is out of range"),
])
def test_minus_and_plus_errors(expression: str, reason: str) -> None:
    assert failure(expression) == reason


@pytest.mark.parametrize(("expression", "ctx", "expected"), [
    ("'2026-03-01T09:00:00' | date", BERLIN_CTX, utc(2026, 3, 1, 8)),
    ("'2026-07-01T09:00:00' | date", BERLIN_CTX, utc(2026, 7, 1, 7)),
    ("'2026-03-01T09:00:00Z' | date", BERLIN_CTX, utc(2026, 3, 1, 9)),
    ("'2026-03-01T09:00:00-05:00' | date", UTC_CTX, utc(2026, 3, 1, 14)),
    ("'2026-03-01 09:00' | date", BERLIN_CTX, utc(2026, 3, 1, 8)),
    ("now() | date", UTC_CTX, NOW),
    ("('2026-03-01T09:00:00Z' | date) < now()", UTC_CTX, True),
])
def test_date(expression: str, ctx: EvalContext, expected: Any) -> None:
    assert value_of(expression, ctx) == expected


@pytest.mark.parametrize(("expression", "reason"), [
    ("'2026-03-01T09:00:00' | date", "filter 'date': instant '2026-03-01T09:00:00' has no "
                                     "timezone; add 'Z' or an offset such as +02:00, or "
                                     "declare the flow's 'timezone'"),
    ("'2026-02-31T00:00:00Z' | date", "filter 'date': '2026-02-31T00:00:00Z' is not a real "
                                      "date and time (day is out of range for month)"),
    ("'tomorrow' | date", "filter 'date': 'tomorrow' is not an ISO 8601 instant "
                          "(e.g. 2026-09-01T09:00:00Z)"),
    ("20260301 | date", "filter 'date' needs an instant or an ISO 8601 string, not int"),
])
def test_date_errors(expression: str, reason: str) -> None:
    assert failure(expression) == reason


def test_date_reads_zone_less_values_in_the_flow_timezone_only() -> None:
    with_zone = EvalContext(now=NOW, timezone="America/New_York")
    assert value_of("'2026-03-01T09:00:00' | date", with_zone) == utc(2026, 3, 1, 14)
    bad_zone = EvalContext(now=NOW, timezone="Mars/Olympus")
    assert failure("'2026-03-01T09:00:00' | date", bad_zone) == (
        "filter 'date': unknown timezone 'Mars/Olympus' (use an IANA name such as "
        "Europe/Berlin)")


@pytest.mark.parametrize(("expression", "expected"), [
    ("'AbC' | lower", "abc"),
    ("'AbC' | upper", "ABC"),
    ("'straße' | upper", "STRASSE"),
    ("'abc' | length", 3),
    ("'' | length", 0),
    ("[1, [2, 3]] | length", 2),
    ("{'a': 1, 'b': 2} | length", 2),
    ("{'a': [1, true, null], 'b': 'é'} | json", '{"a":[1,true,null],"b":"é"}'),
    ("'x' | json", '"x"'),
    ("null | json", "null"),
    ("1.5 | json", "1.5"),
    ("t | json", '"2026-03-01T12:00:00.250Z"'),
    ("[1h30m] | json", '["1h30m"]'),
    ("2.567 | round", 3),
    ("2.567 | round(2)", 2.57),
    ("2.5 | round", 2),
    ("3.5 | round", 4),
    ("-2.567 | round(1)", -2.6),
    ("1234 | round(-2)", 1200),
    ("1250.0 | round(-2)", 1200.0),
    ("7 | round", 7),
    ("7 | round(0)", 7),
])
def test_string_size_and_number_filters(expression: str, expected: Any) -> None:
    result = value_of(expression)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(("expression", "reason"), [
    ("5 | lower", "filter 'lower' needs a str, not int"),
    ("null | upper", "filter 'upper' needs a str, not null"),
    ("5 | length", "filter 'length' needs a str, list or dict, not int"),
    ("t | length", "filter 'length' needs a str, list or dict, not instant"),
    ("naive | json", "cannot write a datetime without timezone as JSON"),
    ("[naive] | json", "cannot write a datetime without timezone as JSON"),
    ("'x' | round", "filter 'round' needs a number, not str"),
    ("true | round", "filter 'round' needs a number, not bool"),
    ("1.5 | round('a')", "filter 'round' needs an int number of digits, not str"),
    ("1.5 | round(1.0)", "filter 'round' needs an int number of digits, not float"),
    ("1 | round(1000)", "filter 'round' takes -100 to 100 digits, not 1000"),
    ("1 | round(-101)", "filter 'round' takes -100 to 100 digits, not -101"),
])
def test_filter_errors(expression: str, reason: str) -> None:
    assert failure(expression) == reason


def test_now_returns_the_context_instant_not_the_system_clock() -> None:
    long_ago = EvalContext(now=utc(1999, 12, 31, 23, 59))
    assert value_of("now()", long_ago) == utc(1999, 12, 31, 23, 59)
    assert value_of("now() + 1m", long_ago) == utc(2000, 1, 1, 0, 0)


def test_now_is_written_in_utc_with_z() -> None:
    offset_now = EvalContext(now=datetime(2026, 3, 1, 13, 0, tzinfo=timezone(timedelta(hours=1))))
    assert compile_template("at {{ now() }}").render({}, offset_now) == "at 2026-03-01T12:00:00Z"

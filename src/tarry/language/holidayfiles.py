"""Holidays from an iCalendar file (RFC 5545), for a calendar's ``holidays_file`` (pure: the
caller reads the file).

Every all-day ``VEVENT`` (a ``DTSTART`` that is a date, not a date-time) is a holiday: each
day from its start up to its ``DTEND`` (exclusive, as RFC 5545 says; one day without one).
An ``RRULE`` repeats it (a yearly holiday: ``FREQ=YEARLY``); its occurrences are expanded
with ``dateutil.rrule`` up to :data:`LAST_YEAR` (or the rule's own ``UNTIL``/``COUNT``), and
``EXDATE`` removes some. Events with a time of day are not holidays and are left out.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

__all__ = ["LAST_YEAR", "read_holidays"]

LAST_YEAR = 2100
"""How far a recurring holiday is expanded."""

_FREQUENCIES = frozenset({"DAILY", "WEEKLY", "MONTHLY", "YEARLY"})
_MOST_DAYS = 100_000
"""The most holiday days one file may give (a bound on what a hostile file costs)."""


def read_holidays(content: bytes) -> frozenset[date]:
    """The holidays of the iCalendar document ``content``; ``ValueError`` with the reason
    when it is not one."""
    import icalendar  # noqa: PLC0415 - only where a calendar names a file

    try:
        document = icalendar.Calendar.from_ical(content)
    except Exception as exc:  # the parser raises ValueError, KeyError, IndexError …
        raise ValueError(f"not an iCalendar file ({_reason(exc)})") from None
    if not isinstance(document, icalendar.Calendar) or document.name != "VCALENDAR":
        raise ValueError("not an iCalendar file (no VCALENDAR)")
    days: set[date] = set()
    for event in document.walk("VEVENT"):
        days.update(_event_days(event))
        if len(days) > _MOST_DAYS:
            raise ValueError(f"more than {_MOST_DAYS:,} holiday days")
    return frozenset(days)


def _reason(exc: Exception) -> str:
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__


def _event_days(event: Any) -> set[date]:
    start = event.get("DTSTART")
    first = None if start is None else start.dt
    if not isinstance(first, date) or isinstance(first, datetime):
        return set()  # no start, or a time of day: an appointment, not a holiday
    end = event.get("DTEND")
    last = end.dt if end is not None and type(end.dt) is date else first + timedelta(days=1)
    length = max((last - first).days, 1)
    starts = _occurrences(event, first)
    return {day + timedelta(days=offset) for day in starts for offset in range(length)}


def _occurrences(event: Any, first: date) -> list[date]:
    rule = event.get("RRULE")
    if rule is None:
        return [first]
    from dateutil.rrule import rrulestr  # noqa: PLC0415 - with icalendar, above

    text = rule.to_ical().decode()
    if str(rule.get("FREQ", [""])[0]).upper() not in _FREQUENCIES:
        raise ValueError(f"the RRULE '{text}' of an all-day event must repeat daily, weekly, "
                         "monthly or yearly")
    try:
        recurrence = rrulestr(text, dtstart=datetime.combine(first, datetime.min.time()),
                              ignoretz=True)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"the RRULE '{text}' cannot be read ({_reason(exc)})") from None
    excluded = _excluded(event)
    found: list[date] = []
    for occurrence in recurrence:
        if occurrence.year > LAST_YEAR:
            break
        if occurrence.date() not in excluded:
            found.append(occurrence.date())
        if len(found) > _MOST_DAYS:
            raise ValueError(f"the RRULE '{text}' gives more than {_MOST_DAYS:,} days")
    return found


def _excluded(event: Any) -> set[date]:
    values = event.get("EXDATE")
    if values is None:
        return set()
    lists = values if isinstance(values, list) else [values]
    return {item.dt if type(item.dt) is date else item.dt.date()
            for each in lists for item in each.dts}

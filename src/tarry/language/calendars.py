"""Business calendars: opening hours in a time zone, minus holidays (pure, no I/O, no clock).

A :class:`Calendar` answers four questions about instants (aware datetimes, any zone):

- :meth:`Calendar.is_open` — is the calendar open at this instant;
- :meth:`Calendar.next_open` — the first open instant at or after it;
- :meth:`Calendar.add` — the instant a business duration after it;
- :meth:`Calendar.subtract` — the instant a business duration before it.

Opening hours are read in the calendar's local wall time with :mod:`zoneinfo`, day by day, so
every answer is exact across daylight-saving changes: ``09:00-17:00`` opens at nine by the
local clock on the day the clocks change, and that day is an hour shorter or longer in UTC.

Rules, stated once:

- An open range is half-open: its opening instant is open, its closing instant closed
  (``09:00-17:00`` is open at 09:00:00 and closed at 17:00:00). ``00:00-24:00`` is the whole
  day; ranges of consecutive days that meet at midnight make one open stretch.
- A local time the clocks skip (a spring-forward gap) is read as the instant the clocks jump;
  a local time that occurs twice (clocks going back) as its first occurrence.
- A business duration has two parts (:class:`BusinessDuration`): whole **business days**,
  each moving to the same local time on the next open day (a holiday or a closed weekday
  skipped), then **open time**, counted only while the calendar is open. ``2d`` from Friday
  15:00 is Tuesday 15:00 (Monday a holiday: Wednesday 15:00); ``16h`` from Monday 09:00 on
  a ``09:00-17:00`` calendar is Tuesday 17:00. Open time that ends exactly at a closing
  instant ends there, not at the next opening.
- Every search is bounded: a calendar with no open hour within :data:`SEARCH_DAYS` days of
  where a search starts is an error (``ValueError``), never an endless loop.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

__all__ = ["MOST_DAYS", "SEARCH_DAYS", "WEEKDAYS", "BusinessDuration", "Calendar", "parse_hours",
           "parse_weekdays"]

SEARCH_DAYS = 731
"""How many days (two years) a search looks ahead (or back) for an open hour before it gives
up: a calendar closed that long is an error, not a loop."""

MOST_DAYS = 3660
"""The most business days one sum counts (ten years of them): each is a day looked at, so a
longer count is refused rather than done."""

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Weekday names as ``hours`` keys write them, Monday first (``date.weekday()`` order)."""

_DAY = timedelta(days=1)
_ZERO = timedelta(0)
_FIRST_DAY = date(1, 1, 1) + 2 * SEARCH_DAYS * timedelta(days=1)
_LAST_DAY = date(9999, 12, 31) - 2 * SEARCH_DAYS * timedelta(days=1)
_CLOCK = re.compile(r"(\d{2}):(\d{2})")
_MINUTES_PER_DAY = 24 * 60

Range = tuple[int, int]
"""An open range of one day: minutes from local midnight, start < end <= 1440."""


@dataclass(frozen=True)
class BusinessDuration:
    """``days`` business days, then ``open`` time while the calendar is open."""

    days: int = 0
    open: timedelta = _ZERO

    @classmethod
    def of(cls, delta: timedelta) -> BusinessDuration:
        """A duration read with a calendar: each whole day (24h) is a business day, the rest
        open time (``2d4h`` is two business days, then four open hours)."""
        days = abs(delta).days
        return cls(days, abs(delta) - days * _DAY)


@dataclass(frozen=True)
class Calendar:
    """Opening hours per weekday in ``zone``, closed on ``holidays`` (see the module text).

    ``hours`` has seven entries, Monday first: each day's open ranges, sorted and disjoint.
    """

    name: str
    zone: ZoneInfo
    hours: tuple[tuple[Range, ...], ...]
    holidays: frozenset[date] = frozenset()
    _days: dict[date, tuple[tuple[datetime, datetime], ...]] = field(
        default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.hours) != 7:
            raise ValueError("a calendar's hours need one entry per weekday")
        if not any(self.hours):
            raise ValueError(f"calendar '{self.name}' is never open (no opening hours)")

    # --- the questions ------------------------------------------------------------------------

    def is_open(self, instant: datetime) -> bool:
        """Whether the calendar is open at ``instant`` (opening instants open, closing closed)."""
        moment = instant.astimezone(UTC)
        return any(start <= moment < end for start, end in self._around(moment))

    def next_open(self, instant: datetime) -> datetime:
        """The first open instant at or after ``instant`` (``instant`` itself when open), UTC."""
        moment = instant.astimezone(UTC)
        for start, end in self._forward(moment):
            if moment < end:
                return max(start, moment)
        raise self._never(moment)

    def next_close(self, instant: datetime) -> datetime:
        """When the open stretch holding ``instant`` ends (``instant`` itself when closed),
        UTC; a stretch open longer than :data:`SEARCH_DAYS` days is cut there."""
        moment = instant.astimezone(UTC)
        closing, limit = moment, moment + SEARCH_DAYS * _DAY
        for start, end in self._forward(moment):
            if start > closing or closing >= limit:
                break
            closing = max(closing, end)
        return min(closing, limit)

    def add(self, instant: datetime, duration: BusinessDuration | timedelta) -> datetime:
        """The instant ``duration`` of business time after ``instant`` (UTC)."""
        spent = duration if isinstance(duration, BusinessDuration) else BusinessDuration.of(
            duration)
        moment = instant.astimezone(UTC)
        try:
            if spent.days:
                moment = self._add_days(self.next_open(moment), spent.days)
            return self._add_open(moment, spent.open)
        except OverflowError:
            raise self._out_of_range() from None

    def subtract(self, instant: datetime, duration: BusinessDuration | timedelta) -> datetime:
        """The instant ``duration`` of business time before ``instant`` (UTC): the mirror of
        :meth:`add` (open time counted back; business days to the same local time on an
        earlier open day, read as the end of an open stretch when that is where it falls)."""
        spent = duration if isinstance(duration, BusinessDuration) else BusinessDuration.of(
            duration)
        moment = instant.astimezone(UTC)
        try:
            if spent.days:
                moment = self._subtract_days(self._last_open_end(moment), spent.days)
            return self._subtract_open(moment, spent.open)
        except OverflowError:
            raise self._out_of_range() from None

    def wall_clock(self, instant: datetime) -> str:
        """``2026-12-28 10:00 Europe/Berlin``: ``instant`` on the calendar's own clock."""
        return f"{instant.astimezone(self.zone):%Y-%m-%d %H:%M} {self.zone.key}"

    def open_days_per_week(self) -> int:
        """How many weekdays have opening hours (5 for ``mon-fri``)."""
        return sum(1 for ranges in self.hours if ranges)

    # --- open time ----------------------------------------------------------------------------

    def _add_open(self, moment: datetime, left: timedelta) -> datetime:
        if left <= _ZERO:
            return moment
        for start, end in self._forward(moment):
            if end <= moment:
                continue
            begin = max(start, moment)
            if end - begin >= left:
                return begin + left
            left -= end - begin
        raise self._never(moment)

    def _subtract_open(self, moment: datetime, left: timedelta) -> datetime:
        if left <= _ZERO:
            return moment
        for start, end in self._backward(moment):
            if start >= moment:
                continue
            finish = min(end, moment)
            if finish - start >= left:
                return finish - left
            left -= finish - start
        raise self._never(moment)

    # --- business days ------------------------------------------------------------------------

    def _count(self, days: int) -> range:
        if days > MOST_DAYS:
            raise ValueError(f"calendar '{self.name}': {days} business days is more than the "
                             f"{MOST_DAYS} a calendar counts")
        return range(days)

    def _walk_days(self, day: date, days: int, step: int) -> date:
        """The ``days``-th open day after (``step`` 1) or before (-1) ``day``, looking at no
        more than twice :data:`MOST_DAYS` days in all (a sparse calendar costs that at most)."""
        start = day
        for _ in self._count(days):
            day = self._open_day_after(day, step)
            if abs((day - start).days) > 2 * MOST_DAYS:
                raise ValueError(f"calendar '{self.name}': {days} business days reach past "
                                 f"{2 * MOST_DAYS} days of the calendar")
        return day

    def _add_days(self, moment: datetime, days: int) -> datetime:
        """The same local time ``days`` open days after ``moment``'s day (then the next open
        instant, when that time is closed on the day reached)."""
        local = moment.astimezone(self.zone)
        day, clock = local.date(), local.time().replace(tzinfo=None)
        day = self._walk_days(day, days, 1)
        return self.next_open(self._instant(day, clock))

    def _subtract_days(self, moment: datetime, days: int) -> datetime:
        local = moment.astimezone(self.zone)
        day = local.date()
        clock: time | None = local.time().replace(tzinfo=None)
        if clock == time(0) and self._has_open_before(moment):
            day, clock = day - _DAY, None  # the end of the day before: 24:00
        day = self._walk_days(day, days, -1)
        reached = (self._instant(day + _DAY, time(0)) if clock is None
                   else self._instant(day, clock))
        return self._last_open_end(reached)

    def _has_open_before(self, moment: datetime) -> bool:
        return any(start < moment <= end for start, end in self._around(moment))

    def _last_open_end(self, moment: datetime) -> datetime:
        """``moment`` when the calendar was open just before it (or at it); else the end of
        the last open stretch before it."""
        for start, end in self._backward(moment):
            if start < moment:
                return min(end, moment)
            if start == moment:
                return moment
        raise self._never(moment)

    def _open_day_after(self, day: date, step: int) -> date:
        for _ in range(SEARCH_DAYS):
            day += step * _DAY
            if self._intervals(day):
                return day
        raise ValueError(f"calendar '{self.name}' has no open day within {SEARCH_DAYS} days "
                         f"of {day.isoformat()}")

    # --- intervals in UTC ---------------------------------------------------------------------

    def _out_of_range(self) -> ValueError:
        return ValueError(f"calendar '{self.name}': the result is out of range")

    def _never(self, moment: datetime) -> ValueError:
        return ValueError(f"calendar '{self.name}' has no open hour within two years of "
                          f"{moment.isoformat().replace('+00:00', 'Z')}")

    def closed_on(self, day: date) -> bool:
        """Whether ``day`` is a holiday."""
        return day in self.holidays

    def _intervals(self, day: date) -> tuple[tuple[datetime, datetime], ...]:
        """The open ranges of the local date ``day`` as UTC instants."""
        known = self._days.get(day)
        if known is None:
            ranges = () if self.closed_on(day) else self.hours[day.weekday()]
            known = tuple((self._instant(day, _clock(start)), self._instant(day, _clock(end)))
                          if end < _MINUTES_PER_DAY else
                          (self._instant(day, _clock(start)), self._instant(day + _DAY, time(0)))
                          for start, end in ranges)
            known = tuple((start, end) for start, end in known if start < end)
            if len(self._days) > 4096:
                self._days.clear()
            self._days[day] = known
        return known

    def _local_day(self, moment: datetime) -> date:
        day = moment.astimezone(self.zone).date()
        if not _FIRST_DAY <= day <= _LAST_DAY:
            raise ValueError(f"calendar '{self.name}': {day.isoformat()} is out of the range "
                             "of dates a calendar computes with")
        return day

    def _around(self, moment: datetime) -> Iterator[tuple[datetime, datetime]]:
        day = self._local_day(moment)
        for each in (day - _DAY, day, day + _DAY):
            yield from self._intervals(each)

    def _forward(self, moment: datetime) -> Iterator[tuple[datetime, datetime]]:
        """Open intervals from the day before ``moment``'s local day on, in order, for at
        most :data:`SEARCH_DAYS` days without one."""
        day = self._local_day(moment) - _DAY
        empty = 0
        while empty < SEARCH_DAYS:
            found = self._intervals(day)
            empty = 0 if found else empty + 1
            yield from found
            day += _DAY

    def _backward(self, moment: datetime) -> Iterator[tuple[datetime, datetime]]:
        """Open intervals from the day after ``moment``'s local day back, latest first."""
        day = self._local_day(moment) + _DAY
        empty = 0
        while empty < SEARCH_DAYS:
            found = self._intervals(day)
            empty = 0 if found else empty + 1
            yield from reversed(found)
            day -= _DAY

    def _instant(self, day: date, clock: time) -> datetime:
        """The local wall time ``clock`` on ``day`` as a UTC instant: a repeated time is
        its first occurrence, a skipped one the instant the clocks jump."""
        local = datetime.combine(day, clock)
        first = local.replace(tzinfo=self.zone).astimezone(UTC)
        if first.astimezone(self.zone).replace(tzinfo=None) == local:
            return first
        return _jump(self.zone, local)


def _jump(zone: ZoneInfo, local: datetime) -> datetime:
    """The instant the clocks jump over the skipped local time ``local`` (UTC)."""
    low = local.replace(tzinfo=zone, fold=1).astimezone(UTC)   # read with the offset after
    high = local.replace(tzinfo=zone, fold=0).astimezone(UTC)  # read with the offset before
    low, high = min(low, high), max(low, high)
    after = high.astimezone(zone).utcoffset()
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) / 2
        if middle.astimezone(zone).utcoffset() == after:
            high = middle
        else:
            low = middle
    return high.replace(microsecond=0)


def _clock(minutes: int) -> time:
    return time(minutes // 60, minutes % 60)


# --- reading hours -----------------------------------------------------------------------------

def parse_weekdays(text: str) -> tuple[int, ...]:
    """``mon-fri``, ``sat``, ``mon,wed,fri`` or ``fri-mon`` (wrapping) as weekday numbers;
    ``ValueError`` naming the valid words otherwise."""
    days: list[int] = []
    for part in (piece.strip().lower() for piece in text.split(",")):
        first, dash, last = part.partition("-")
        if first not in WEEKDAYS or (dash and last not in WEEKDAYS):
            raise ValueError(f"'{text}' is not a weekday or range of weekdays (use "
                             f"{', '.join(WEEKDAYS)}, e.g. mon-fri or sat)")
        start = WEEKDAYS.index(first)
        count = (WEEKDAYS.index(last) - start) % 7 + 1 if dash else 1
        days.extend((start + offset) % 7 for offset in range(count))
    return tuple(days)


def parse_ranges(text: str) -> tuple[Range, ...]:
    """``09:00-17:00`` or ``09:00-12:00, 13:00-17:00`` as minute ranges, sorted;
    ``ValueError`` for an impossible time, an empty or reversed range, or an overlap."""
    ranges = sorted(_range(part.strip(), text) for part in text.split(","))
    _check_disjoint(ranges, f"'{text}'")
    return tuple(ranges)


def _range(part: str, text: str) -> Range:
    start, dash, end = part.partition("-")
    if not dash:
        raise ValueError(f"'{text}' is not a range of hours such as 09:00-17:00")
    opens, closes = _minutes(start.strip(), text), _minutes(end.strip(), text)
    if opens >= closes:
        raise ValueError(f"'{part}' closes before it opens (a range runs within one day; "
                         "write 22:00-24:00 and 00:00-06:00 on the next day)")
    if opens == _MINUTES_PER_DAY:
        raise ValueError(f"'{part}' opens at 24:00; a range opens from 00:00 to 23:59")
    return opens, closes


def _minutes(clock: str, text: str) -> int:
    found = _CLOCK.fullmatch(clock)
    if not found:
        raise ValueError(f"'{clock}' in '{text}' is not a time of day such as 09:00")
    hours, minutes = int(found[1]), int(found[2])
    if minutes > 59 or hours > 24 or (hours == 24 and minutes):
        raise ValueError(f"'{clock}' in '{text}' is not a time of day (00:00 to 24:00)")
    return hours * 60 + minutes


def _check_disjoint(ranges: Iterable[Range], where: str) -> None:
    previous: Range | None = None
    for current in sorted(ranges):
        if previous is not None and current[0] < previous[1]:
            raise ValueError(f"{_show(previous)} and {_show(current)} overlap in {where}")
        previous = current


def _show(span: Range) -> str:
    return f"{span[0] // 60:02}:{span[0] % 60:02}-{span[1] // 60:02}:{span[1] % 60:02}"


def parse_hours(hours: Mapping[str, str]) -> tuple[tuple[Range, ...], ...]:
    """``{"mon-fri": "09:00-17:00", "sat": "10:00-14:00"}`` as seven days of ranges, Monday
    first; ``ValueError`` naming the key for any mistake or a day's ranges that overlap."""
    days: list[list[Range]] = [[] for _ in WEEKDAYS]
    for key, value in hours.items():
        try:
            ranges = parse_ranges(value)
            weekdays = parse_weekdays(key)
        except ValueError as exc:
            raise ValueError(f"'{key}': {exc}") from None
        for weekday in weekdays:
            days[weekday].extend(ranges)
    for weekday, day_ranges in enumerate(days):
        _check_disjoint(day_ranges, f"the hours of {WEEKDAYS[weekday]}")
    return tuple(tuple(sorted(day_ranges)) for day_ranges in days)

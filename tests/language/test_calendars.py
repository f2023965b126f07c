"""Business calendars (``tarry.language.calendars``): exact answers across DST changes,
holidays, boundaries, and a bound on every search; checked against a minute-stepping oracle."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tarry.language.calendars import (
    BusinessDuration,
    Calendar,
    parse_hours,
    parse_ranges,
    parse_weekdays,
)

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def calendar(hours: dict[str, str], zone: ZoneInfo = BERLIN,
             holidays: tuple[str, ...] = ()) -> Calendar:
    return Calendar("support", zone, parse_hours(hours),
                    frozenset(date.fromisoformat(day) for day in holidays))


def refusal(call: Callable[[], object]) -> str:
    """The message of the ``ValueError`` that ``call`` raises."""
    with pytest.raises(ValueError) as refused:  # noqa: PT011 - the caller checks the message
        call()
    return str(refused.value)


def local(text: str, zone: ZoneInfo = BERLIN, fold: int = 0) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=zone, fold=fold)


def shown(instant: datetime, zone: ZoneInfo = BERLIN) -> str:
    return instant.astimezone(zone).strftime("%a %Y-%m-%d %H:%M %Z")


OFFICE = calendar({"mon-fri": "09:00-17:00"}, holidays=("2026-12-25", "2026-12-28"))


# --- reading hours ----------------------------------------------------------------------------

def test_weekdays_are_single_names_ranges_lists_and_wrapping_ranges() -> None:
    assert parse_weekdays("mon-fri") == (0, 1, 2, 3, 4)
    assert parse_weekdays("sat") == (5,)
    assert parse_weekdays("mon,wed") == (0, 2)
    assert parse_weekdays("fri-mon") == (4, 5, 6, 0)


@pytest.mark.parametrize(("text", "message"), [
    ("monday", "'monday' is not a weekday or range of weekdays (use mon, tue, wed, thu, fri, "
               "sat, sun, e.g. mon-fri or sat)"),
    ("mon-xyz", "'mon-xyz' is not a weekday or range of weekdays (use mon, tue, wed, thu, "
                "fri, sat, sun, e.g. mon-fri or sat)"),
])
def test_a_bad_weekday_is_refused(text: str, message: str) -> None:
    assert refusal(lambda: parse_weekdays(text)) == message


def test_ranges_may_be_several_and_end_at_midnight() -> None:
    assert parse_ranges("13:00-17:00, 09:00-12:00") == ((540, 720), (780, 1020))
    assert parse_ranges("00:00-24:00") == ((0, 1440),)


@pytest.mark.parametrize(("text", "message"), [
    ("25:00-26:00", "'25:00' in '25:00-26:00' is not a time of day (00:00 to 24:00)"),
    ("09:60-10:00", "'09:60' in '09:60-10:00' is not a time of day (00:00 to 24:00)"),
    ("9-17", "'9' in '9-17' is not a time of day such as 09:00"),
    ("09:00", "'09:00' is not a range of hours such as 09:00-17:00"),
    ("17:00-09:00", "'17:00-09:00' closes before it opens (a range runs within one day; write "
                    "22:00-24:00 and 00:00-06:00 on the next day)"),
    ("09:00-09:00", "'09:00-09:00' closes before it opens (a range runs within one day; write "
                    "22:00-24:00 and 00:00-06:00 on the next day)"),
    ("09:00-13:00, 12:00-17:00", "09:00-13:00 and 12:00-17:00 overlap in "
                                 "'09:00-13:00, 12:00-17:00'"),
])
def test_malformed_ranges_are_refused(text: str, message: str) -> None:
    assert refusal(lambda: parse_ranges(text)) == message


def test_hours_of_two_keys_that_overlap_on_a_day_are_refused() -> None:
    assert refusal(lambda: parse_hours({"mon-fri": "09:00-17:00", "fri": "16:00-18:00"})) == (
        "09:00-17:00 and 16:00-18:00 overlap in the hours of fri")


def test_a_bad_hours_value_names_its_key() -> None:
    assert refusal(lambda: parse_hours({"sat": "10:00-25:00"})) == (
        "'sat': '25:00' in '10:00-25:00' is not a time of day (00:00 to 24:00)")


def test_a_calendar_without_hours_is_refused() -> None:
    assert refusal(lambda: calendar({})) == "calendar 'support' is never open (no opening hours)"


# --- boundaries, holidays ---------------------------------------------------------------------

def test_the_opening_instant_is_open_and_the_closing_instant_closed() -> None:
    assert OFFICE.is_open(local("2026-12-07T09:00"))
    assert not OFFICE.is_open(local("2026-12-07T08:59:59.999999"))
    assert OFFICE.is_open(local("2026-12-07T16:59:59.999999"))
    assert not OFFICE.is_open(local("2026-12-07T17:00"))
    assert OFFICE.next_open(local("2026-12-07T09:00")) == local("2026-12-07T09:00")
    assert shown(OFFICE.next_open(local("2026-12-07T17:00"))) == "Tue 2026-12-08 09:00 CET"


def test_a_holiday_on_friday_moves_the_next_opening_to_monday() -> None:
    assert not OFFICE.is_open(local("2026-12-25T10:00"))
    assert shown(OFFICE.next_open(local("2026-12-24T17:00"))) == "Tue 2026-12-29 09:00 CET"
    friday = calendar({"mon-fri": "09:00-17:00"}, holidays=("2026-12-25",))
    assert shown(friday.next_open(local("2026-12-24T18:00"))) == "Mon 2026-12-28 09:00 CET"


def test_business_days_skip_weekends_and_holidays_to_the_same_local_time() -> None:
    friday_afternoon = local("2026-12-18T15:00")
    assert shown(OFFICE.add(friday_afternoon, timedelta(days=2))) == "Tue 2026-12-22 15:00 CET"
    # Thursday 24th afternoon; Friday 25th and Monday 28th are holidays
    assert shown(OFFICE.add(local("2026-12-24T15:00"), timedelta(days=1))) == (
        "Tue 2026-12-29 15:00 CET")
    # closed when it starts: the count starts at the next opening
    assert shown(OFFICE.add(local("2026-12-19T11:00"), timedelta(days=1))) == (
        "Tue 2026-12-22 09:00 CET")


def test_open_time_counts_only_open_hours_and_may_end_at_a_closing_instant() -> None:
    monday = local("2026-12-07T09:00")
    assert shown(OFFICE.add(monday, timedelta(hours=16))) == "Tue 2026-12-08 17:00 CET"
    assert shown(OFFICE.add(local("2026-12-04T16:00"), timedelta(hours=4))) == (
        "Mon 2026-12-07 12:00 CET")
    assert shown(OFFICE.add(monday, BusinessDuration(1, timedelta(hours=4)))) == (
        "Tue 2026-12-08 13:00 CET")


def test_subtracting_mirrors_adding() -> None:
    assert shown(OFFICE.subtract(local("2026-12-07T12:00"), timedelta(hours=4))) == (
        "Fri 2026-12-04 16:00 CET")
    assert shown(OFFICE.subtract(local("2026-12-08T17:00"), timedelta(hours=16))) == (
        "Mon 2026-12-07 09:00 CET")
    assert shown(OFFICE.subtract(local("2026-12-22T15:00"), timedelta(days=2))) == (
        "Fri 2026-12-18 15:00 CET")
    # Saturday: counted back from Friday's closing
    assert shown(OFFICE.subtract(local("2026-12-19T11:00"), timedelta(days=1))) == (
        "Thu 2026-12-17 17:00 CET")


def test_a_window_that_opens_at_midnight_and_whole_days() -> None:
    nights = calendar({"mon-fri": "00:00-06:00"})
    assert nights.is_open(local("2026-12-08T00:00"))
    assert shown(nights.next_open(local("2026-12-07T06:00"))) == "Tue 2026-12-08 00:00 CET"
    always = calendar({"mon-sun": "00:00-24:00"})
    start = local("2026-12-07T10:00")
    assert always.add(start, timedelta(hours=30)) == start + timedelta(hours=30)
    assert always.next_close(start) > start + timedelta(days=365)
    weekend = calendar({"sat-sun": "00:00-24:00"})
    assert shown(weekend.add(local("2026-12-05T20:00"), timedelta(hours=30))) == (
        "Sat 2026-12-12 02:00 CET")


# --- daylight saving --------------------------------------------------------------------------

def test_hours_follow_the_local_clock_across_the_european_changes() -> None:
    # last Sunday of March 2026: the 29th; last Sunday of October: the 25th
    sundays = calendar({"sun": "09:00-17:00"})
    march = sundays.next_open(local("2026-03-29T00:00"))
    assert march == datetime(2026, 3, 29, 7, tzinfo=UTC)  # 09:00 CEST
    october = sundays.next_open(local("2026-10-25T00:00"))
    assert october == datetime(2026, 10, 25, 8, tzinfo=UTC)  # 09:00 CET
    nights = calendar({"sat": "22:00-24:00", "sun": "00:00-06:00"})
    start = local("2026-03-28T22:00")
    assert nights.add(start, timedelta(hours=7)) == local("2026-03-29T06:00")  # 7h, not 8h
    start = local("2026-10-24T22:00")
    assert nights.add(start, timedelta(hours=9)) == local("2026-10-25T06:00")  # 9h, not 8h


def test_hours_follow_the_local_clock_across_the_us_changes() -> None:
    # second Sunday of March 2026: the 8th; first Sunday of November: the 1st
    office = calendar({"mon-fri": "09:00-17:00"}, zone=NEW_YORK)
    friday = local("2026-03-06T16:00", NEW_YORK)
    assert office.add(friday, timedelta(hours=2)) == datetime(2026, 3, 9, 14, tzinfo=UTC)
    friday = local("2026-10-30T16:00", NEW_YORK)
    assert office.add(friday, timedelta(hours=2)) == datetime(2026, 11, 2, 15, tzinfo=UTC)
    assert office.add(friday, timedelta(days=1)) == datetime(2026, 11, 2, 21, tzinfo=UTC)


def test_a_skipped_opening_time_opens_when_the_clocks_jump() -> None:
    early = calendar({"sun": "02:30-05:00"})
    assert early.next_open(local("2026-03-29T00:00")) == datetime(2026, 3, 29, 1, tzinfo=UTC)
    assert early.add(local("2026-03-29T00:00"), timedelta(hours=2)) == local("2026-03-29T05:00")
    us = calendar({"sun": "02:00-04:00"}, zone=NEW_YORK)
    assert us.next_open(local("2026-03-08T00:00", NEW_YORK)) == datetime(2026, 3, 8, 7,
                                                                         tzinfo=UTC)


def test_a_repeated_local_hour_is_read_as_its_first_occurrence() -> None:
    early = calendar({"sun": "02:30-05:00"})
    opening = early.next_open(local("2026-10-25T00:00"))
    assert opening == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 CEST, the first one
    assert early.add(opening, timedelta(hours=3, minutes=30)) == local("2026-10-25T05:00")
    second = local("2026-10-25T02:15", fold=1)  # 02:15 CET, after the first 02:30
    assert early.is_open(second)


# --- bounds -----------------------------------------------------------------------------------

def test_a_calendar_closed_for_two_years_is_an_error_not_a_loop() -> None:
    days = [date(2026, 1, 5) + timedelta(weeks=week) for week in range(120)]
    mondays = calendar({"mon": "09:00-17:00"}, holidays=tuple(day.isoformat() for day in days))
    message = "calendar 'support' has no open hour within two years of 2026-01-01T00:00:00Z"
    for question in (lambda: mondays.next_open(datetime(2026, 1, 1, tzinfo=UTC)),
                     lambda: mondays.add(datetime(2026, 1, 1, tzinfo=UTC), timedelta(hours=1))):
        assert refusal(question) == message
    with pytest.raises(ValueError, match="has no open day within 731 days"):
        mondays._open_day_after(date(2026, 1, 1), 1)


def test_open_days_per_week() -> None:
    assert OFFICE.open_days_per_week() == 5
    assert calendar({"mon-fri": "09:00-17:00", "sat": "10:00-14:00"}).open_days_per_week() == 6


# --- against a minute-stepping oracle ---------------------------------------------------------

def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


ZONES = [BERLIN, NEW_YORK, ZoneInfo("Australia/Sydney"), ZoneInfo("UTC")]
MINUTE = timedelta(minutes=1)
# boundaries on a half-hour grid outside 01:00-04:00, where the clocks of these zones change
# (a boundary inside a skipped or repeated hour has its own rule, tested above)
BOUNDARIES = [0, *range(4 * 60, 24 * 60 + 1, 30)]


@st.composite
def calendars(draw: st.DrawFn) -> Calendar:
    days = []
    for _ in range(7):
        points = sorted(draw(st.sets(st.sampled_from(BOUNDARIES), max_size=4)))
        days.append(tuple(zip(points[::2], points[1::2], strict=False)))
    if not any(days):
        days[draw(st.integers(0, 6))] = ((9 * 60, 17 * 60),)
    start = date(2026, 3, 1)
    holidays = draw(st.sets(st.integers(0, 300).map(lambda n: start + timedelta(days=n)),
                            max_size=20))
    return Calendar("fuzz", draw(st.sampled_from(ZONES)), tuple(days), frozenset(holidays))


# instants around the spring and autumn changes of the northern and southern zones
instants = st.sampled_from([datetime(2026, 3, 5), datetime(2026, 3, 26), datetime(2026, 4, 2),
                            datetime(2026, 10, 1), datetime(2026, 10, 22),
                            datetime(2026, 10, 29)]).flatmap(
    lambda day: st.integers(0, 6 * 24 * 60).map(
        lambda minute: (day + minute * MINUTE).replace(tzinfo=UTC)))


def oracle_open(cal: Calendar, moment: datetime) -> bool:
    """Open by the local wall clock at ``moment``, with no interval arithmetic at all."""
    wall = moment.astimezone(cal.zone)
    minute = wall.hour * 60 + wall.minute
    return wall.date() not in cal.holidays and any(
        start <= minute < end for start, end in cal.hours[wall.weekday()])


def oracle_next_open(cal: Calendar, moment: datetime) -> datetime:
    while not oracle_open(cal, moment):
        moment += MINUTE
    return moment


def oracle_add(cal: Calendar, moment: datetime, minutes: int) -> datetime:
    while minutes:
        if oracle_open(cal, moment):
            minutes -= 1
        moment += MINUTE
    return moment


def oracle_subtract(cal: Calendar, moment: datetime, minutes: int) -> datetime:
    while minutes:
        moment -= MINUTE
        if oracle_open(cal, moment):
            minutes -= 1
    return moment


@fuzz(60)
@given(calendars(), instants)
def test_is_open_and_next_open_agree_with_the_wall_clock(cal: Calendar, moment: datetime) -> None:
    assert cal.is_open(moment) == oracle_open(cal, moment)
    assert cal.next_open(moment) == oracle_next_open(cal, moment)


@fuzz(40)
@given(calendars(), instants, st.integers(0, 12 * 60))
def test_open_time_agrees_with_counting_open_minutes(cal: Calendar, moment: datetime,
                                                     minutes: int) -> None:
    span = timedelta(minutes=minutes)
    added = cal.add(moment, span)
    subtracted = cal.subtract(moment, span)
    if minutes:  # the oracle's answer is the end of the last minute counted
        assert added == oracle_add(cal, moment, minutes)
        assert subtracted == oracle_subtract(cal, moment, minutes)
    else:
        assert added == subtracted == moment


def test_counting_business_days_is_bounded() -> None:
    start = local("2026-12-07T10:00")
    assert refusal(lambda: OFFICE.add(start, timedelta(days=3661))) == (
        "calendar 'support': 3661 business days is more than the 3660 a calendar counts")
    yearly = calendar({"mon-sun": "09:00-17:00"},
                      holidays=tuple((date(2026, 1, 1) + timedelta(days=n)).isoformat()
                                     for n in range(0, 9000) if n % 400))
    assert refusal(lambda: yearly.add(local("2026-01-01T10:00"), timedelta(days=30))) == (
        "calendar 'support': 30 business days reach past 7320 days of the calendar")


def oracle_add_days(cal: Calendar, moment: datetime, days: int) -> datetime:
    """Business days by the wall clock: the next opening's local time, on the ``days``-th
    later date with an open hour, read as the first minute whose local time reaches it (a
    skipped time: when the clocks jump; a repeated one: its first occurrence), then the next
    opening from there."""
    start = oracle_next_open(cal, moment).astimezone(cal.zone)
    day, clock = start.date(), start.time()
    while days:
        day += timedelta(days=1)
        if day not in cal.holidays and cal.hours[day.weekday()]:
            days -= 1
    target = datetime.combine(day, clock)
    probe = datetime.combine(day, datetime.min.time()).replace(tzinfo=UTC) - timedelta(hours=15)
    while probe.astimezone(cal.zone).replace(tzinfo=None) < target:
        probe += MINUTE
    return oracle_next_open(cal, probe)


@fuzz(40)
@given(calendars(), instants, st.integers(1, 4))
def test_business_days_agree_with_stepping_the_wall_clock(cal: Calendar, moment: datetime,
                                                          days: int) -> None:
    assert cal.add(moment, timedelta(days=days)) == oracle_add_days(cal, moment, days)

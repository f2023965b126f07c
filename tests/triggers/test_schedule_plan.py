"""When a schedule fires (pure): local times across DST, and each catch-up policy after a gap."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.language.durations import parse_zone
from tarry.language.model import CatchUp, Position, ScheduleTrigger
from tarry.triggers.schedule import (
    ON_TIME,
    next_occurrence,
    occurrences_between,
    plan_firing,
    schedule_key,
)

HERE = Position("flow.yaml", 5, 3)


def schedule(cron: str = "0 9 * * *", zone: str = "Europe/Berlin",
             catch_up: CatchUp = "latest") -> ScheduleTrigger:
    """A schedule trigger as the loader makes it."""
    return ScheduleTrigger(cron=cron, timezone=zone, pos=HERE, catch_up=catch_up)


def utc(*parts: int) -> datetime:
    """An instant in UTC."""
    return datetime(*parts, tzinfo=UTC)


def test_nine_in_berlin_is_seven_utc_in_summer_and_eight_in_winter() -> None:
    weekdays = schedule("0 9 * * mon-fri")
    # Berlin leaves summer time on Sunday 2026-10-25: Friday is +02:00, Monday +01:00.
    assert occurrences_between(weekdays, utc(2026, 10, 22, 12), utc(2026, 10, 27, 12)) == [
        utc(2026, 10, 23, 7), utc(2026, 10, 26, 8), utc(2026, 10, 27, 8)]


def test_a_local_time_skipped_in_spring_fires_once_just_after_the_gap() -> None:
    # 02:30 does not exist in Berlin on 2026-03-29 (02:00 jumps to 03:00 CEST).
    night = schedule("30 2 * * *")
    assert occurrences_between(night, utc(2026, 3, 28, 0), utc(2026, 3, 30, 12)) == [
        utc(2026, 3, 28, 1, 30), utc(2026, 3, 29, 1, 0), utc(2026, 3, 30, 0, 30)]


def test_a_local_time_repeated_in_autumn_fires_once() -> None:
    # 02:30 happens twice in Berlin on 2026-10-25; it fires at the first one only.
    night = schedule("30 2 * * *")
    assert occurrences_between(night, utc(2026, 10, 24, 12), utc(2026, 10, 26, 12)) == [
        utc(2026, 10, 25, 0, 30), utc(2026, 10, 26, 1, 30)]


def test_the_next_occurrence_is_strictly_after_the_instant() -> None:
    assert next_occurrence(schedule(), utc(2026, 6, 1, 7)) == utc(2026, 6, 2, 7)
    assert next_occurrence(schedule(), utc(2026, 6, 1, 6, 59, 30)) == utc(2026, 6, 1, 7)


NINE = utc(2026, 6, 1, 7)  # 09:00 in Berlin
THREE_DAYS_DOWN = NINE - timedelta(days=3, seconds=1)


@pytest.mark.parametrize(("policy", "fired", "skipped"), [
    ("none", [NINE], 3),
    ("latest", [NINE], 3),
    ("all", [NINE - timedelta(days=3), NINE - timedelta(days=2), NINE - timedelta(days=1),
             NINE], 0),
])
def test_after_downtime_each_policy_creates_its_occurrences(
        policy: CatchUp, fired: list[datetime], skipped: int) -> None:
    plan = plan_firing(schedule(catch_up=policy), THREE_DAYS_DOWN, NINE + timedelta(seconds=5))
    assert (list(plan.fire), plan.skipped, plan.next_at) == (fired, skipped,
                                                            NINE + timedelta(days=1))


@pytest.mark.parametrize(("policy", "fired"), [
    ("none", []),
    ("latest", [NINE]),
    ("all", [NINE - timedelta(days=3), NINE - timedelta(days=2), NINE - timedelta(days=1),
             NINE]),
])
def test_when_even_the_latest_is_missed_none_creates_nothing(
        policy: CatchUp, fired: list[datetime]) -> None:
    later = NINE + timedelta(hours=5)
    assert list(plan_firing(schedule(catch_up=policy), THREE_DAYS_DOWN, later).fire) == fired


def test_an_occurrence_handled_within_a_minute_is_on_time_even_for_none() -> None:
    plan = plan_firing(schedule(catch_up="none"), NINE - timedelta(hours=1), NINE + ON_TIME)
    assert plan.fire == (NINE,)


def test_catch_up_all_is_bounded_to_the_most_recent() -> None:
    every_minute = schedule("* * * * *", catch_up="all")
    plan = plan_firing(every_minute, NINE - timedelta(days=1), NINE, limit=100)
    assert (len(plan.fire), plan.fire[-1], plan.skipped) == (100, NINE, 24 * 60 - 100)


def test_nothing_due_fires_nothing() -> None:
    plan = plan_firing(schedule(), NINE, NINE + timedelta(hours=1))
    assert (plan.fire, plan.skipped, plan.next_at) == ((), 0, NINE + timedelta(days=1))


def test_a_changed_cron_or_zone_is_another_schedule() -> None:
    keys = {schedule_key("report", schedule()), schedule_key("report", schedule("0 10 * * *")),
            schedule_key("report", schedule(zone="Europe/Paris")),
            schedule_key("other", schedule())}
    assert len(keys) == 4
    assert schedule_key("report", schedule()) == schedule_key("report", schedule(catch_up="all"))


@given(start=st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2035, 1, 1),
                          timezones=st.just(UTC)),
       zone=st.sampled_from(["Europe/Berlin", "America/New_York", "Australia/Lord_Howe",
                             "Asia/Kolkata", "UTC"]))
def test_occurrences_are_increasing_and_at_nine_local_time(start: datetime, zone: str) -> None:
    found = occurrences_between(schedule(zone=zone), start, start + timedelta(days=10))
    assert found == sorted(set(found))
    assert len(found) in {9, 10, 11}
    assert all(instant.astimezone(parse_zone(zone)).hour == 9 for instant in found)

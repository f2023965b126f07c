"""The hold cadence: interval growth, jitter, clamps and the slot re-deferral (pure)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.holds.cadence import (
    check_interval,
    clamped,
    denied_delay,
    jittered,
    next_check_delay,
)

S = timedelta(seconds=1)
M = timedelta(minutes=1)
H = timedelta(hours=1)

bases = st.integers(min_value=30, max_value=4 * 3600).map(lambda s: s * S)
elapsed_times = st.integers(min_value=0, max_value=48 * 3600 * 1000).map(
    lambda ms: timedelta(milliseconds=ms))
fractions = st.floats(min_value=0.0, max_value=1.0, exclude_max=True)


@pytest.mark.parametrize(("elapsed", "interval"), [
    (timedelta(0), 60 * S),
    (10 * M - S, 60 * S),      # ten base intervals not yet over
    (10 * M, 2 * M),           # then it doubles ...
    (20 * M, 4 * M),
    (30 * M, 8 * M),
    (40 * M, 15 * M),          # ... and levels off at 15 minutes
    (23 * H, 15 * M),
])
def test_the_default_interval_doubles_every_ten_intervals_up_to_fifteen_minutes(
        elapsed: timedelta, interval: timedelta) -> None:
    assert check_interval(60 * S, elapsed) == interval


def test_a_base_longer_than_fifteen_minutes_is_kept_not_shortened() -> None:
    assert check_interval(H, timedelta(0)) == H
    assert check_interval(H, 20 * H) == H


def test_a_thirty_second_base_doubles_every_five_minutes() -> None:
    assert [check_interval(30 * S, n * 5 * M) for n in range(6)] == [
        30 * S, M, 2 * M, 4 * M, 8 * M, 15 * M]


def test_jitter_only_ever_adds_up_to_a_tenth() -> None:
    assert jittered(60 * S, 0.0) == 60 * S
    assert jittered(60 * S, 0.5) == 63 * S


def test_a_jitter_fraction_outside_zero_to_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^a jitter fraction lies in \[0, 1\), got 1\.0$"):
        jittered(60 * S, 1.0)


def test_a_delay_is_clamped_to_what_remains_of_the_hold() -> None:
    assert clamped(H, 23 * H + 45 * M, 24 * H) == 15 * M
    assert clamped(M, 10 * H, 24 * H) == M
    assert clamped(M, 25 * H, 24 * H) == timedelta(0)


def test_an_hourly_interval_under_a_fifteen_minute_hold_stops_at_fifteen_minutes() -> None:
    assert next_check_delay(H, timedelta(0), 15 * M, 0.0) == 15 * M


@pytest.mark.parametrize(("base", "elapsed", "delay"), [
    (60 * S, timedelta(0), 15 * S),     # a quarter of the cadence
    (30 * S, timedelta(0), 11 * S),     # never under 11 seconds
    (60 * S, 5 * H, 225 * S),           # a quarter of 15 minutes once backed off
])
def test_a_run_denied_a_slot_waits_a_quarter_of_its_cadence(
        base: timedelta, elapsed: timedelta, delay: timedelta) -> None:
    assert denied_delay(base, elapsed) == delay


def test_at_the_defaults_the_check_count_binds_before_the_hold_maximum() -> None:
    elapsed = timedelta(0)
    for _ in range(95):  # the first check runs at once; 95 intervals lead to the 96th
        elapsed += next_check_delay(60 * S, elapsed, 24 * H, 0.0)

    assert elapsed == 19 * H + 40 * M  # without jitter; with the most jitter, still < 24h
    latest = timedelta(0)
    for _ in range(95):
        latest += next_check_delay(60 * S, latest, 24 * H, 0.999)
    assert latest < 24 * H


# -- properties ---------------------------------------------------------------------------------


@given(bases, elapsed_times)
def test_the_interval_never_falls_under_the_base(base: timedelta, elapsed: timedelta) -> None:
    assert check_interval(base, elapsed) >= base


@given(bases, elapsed_times)
def test_the_interval_never_exceeds_its_cap(base: timedelta, elapsed: timedelta) -> None:
    assert check_interval(base, elapsed) <= max(15 * M, base)


@given(bases, elapsed_times, elapsed_times)
def test_the_interval_never_shrinks_as_the_hold_lengthens(
        base: timedelta, first: timedelta, second: timedelta) -> None:
    earlier, later = sorted((first, second))
    assert check_interval(base, earlier) <= check_interval(base, later)


@given(bases, elapsed_times, fractions)
def test_jitter_stays_within_zero_to_ten_percent(base: timedelta, elapsed: timedelta,
                                                 fraction: float) -> None:
    interval = check_interval(base, elapsed)
    assert interval <= jittered(interval, fraction) <= interval * 1.1


@given(bases, elapsed_times, fractions, st.integers(min_value=1, max_value=72).map(
    lambda h: h * H))
def test_the_next_check_never_lands_past_the_end_of_the_hold(
        base: timedelta, elapsed: timedelta, fraction: float, hold_max: timedelta) -> None:
    delay = next_check_delay(base, elapsed, hold_max, fraction)
    assert timedelta(0) <= delay
    assert elapsed + delay <= max(hold_max, elapsed)


@given(bases, elapsed_times)
def test_a_denied_run_never_comes_back_sooner_than_eleven_seconds(
        base: timedelta, elapsed: timedelta) -> None:
    assert denied_delay(base, elapsed) >= 11 * S

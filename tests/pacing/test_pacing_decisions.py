"""The pure pacing decisions: a throttle's turns never put more than ``limit`` starts in a
span of ``per`` and never go backwards; a debounce fires ``period`` after the last event,
capped by ``max``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.pacing import debounce_fire_at, throttle_turn

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def test_fewer_turns_than_the_limit_start_now() -> None:
    assert throttle_turn([], 3, MINUTE, T0) == T0
    assert throttle_turn([T0, T0], 3, MINUTE, T0) == T0


def test_the_limit_reached_waits_for_the_oldest_of_the_window_to_be_a_period_old() -> None:
    assert throttle_turn([T0, T0, T0], 3, MINUTE, T0 + timedelta(seconds=10)) == T0 + MINUTE


def test_a_turn_never_comes_before_one_handed_out_earlier() -> None:
    later = T0 + 5 * MINUTE
    assert throttle_turn([later], 3, MINUTE, T0) == later


def test_a_limit_under_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        throttle_turn([], 0, MINUTE, T0)


@given(limit=st.integers(1, 5), per_s=st.integers(1, 120),
       gaps=st.lists(st.integers(0, 90), min_size=1, max_size=60))
def test_no_span_of_per_holds_more_than_limit_turns(limit: int, per_s: int,
                                                    gaps: list[int]) -> None:
    per, now = timedelta(seconds=per_s), T0
    turns: list[datetime] = []
    for gap in gaps:
        now += timedelta(seconds=gap)
        # what the store reads: the latest turns of the key, those older than per forgotten
        recent = [turn for turn in sorted(turns, reverse=True) if turn > now - per][:limit]
        turns.append(throttle_turn(recent, limit, per, now))
        assert turns[-1] >= now
    assert turns == sorted(turns)
    assert all(turns[n + limit] - turns[n] >= per for n in range(len(turns) - limit))


def test_a_debounce_fires_a_period_after_the_last_event_at_most_max_after_the_first() -> None:
    assert debounce_fire_at(T0, T0 + 2 * MINUTE, 5 * MINUTE, None) == T0 + 7 * MINUTE
    assert debounce_fire_at(T0, T0 + 28 * MINUTE, 5 * MINUTE, 30 * MINUTE) == T0 + 30 * MINUTE

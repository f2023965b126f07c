"""The backoff pieces every waiting part of tarry builds its SPEC formula from."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tarry.backoff import Jitter, added_jitter, grown, linear

S = timedelta(seconds=1)


def test_grown_multiplies_by_the_rate_per_time_up_to_the_cap() -> None:
    assert [grown(5 * S, 1.5, n, 300 * S) for n in (0, 1, 2)] == [5 * S, 7.5 * S, 11.25 * S]
    assert grown(5 * S, 1.5, 20, 300 * S) == 300 * S


def test_grown_never_overflows() -> None:
    assert grown(30 * S, 2, 10_000, 900 * S) == 900 * S
    assert grown(S, 10, 10_000) == timedelta.max


def test_linear_adds_the_increment_per_time_up_to_the_cap() -> None:
    assert [linear(5 * S, 5 * S, n) for n in (0, 1, 2)] == [5 * S, 10 * S, 15 * S]
    assert linear(5 * S, 5 * S, 10, 20 * S) == 20 * S


@pytest.mark.parametrize(("jitter", "draw", "delay"), [
    (Jitter.FULL, 0.25, 2.5 * S), (Jitter.HALF, 0.5, 7.5 * S), (Jitter.NONE, 0.9, 10 * S)])
def test_jitter_spreads_a_delay_by_the_draw(jitter: Jitter, draw: float,
                                            delay: timedelta) -> None:
    assert jitter.apply(10 * S, draw) == delay


def test_added_jitter_never_shortens_a_delay() -> None:
    assert added_jitter(60 * S, 0.1, 0.5) == 63 * S
    with pytest.raises(ValueError, match=r"^a jitter fraction lies in \[0, 1\), got 1.0$"):
        added_jitter(60 * S, 0.1, 1.0)


@given(st.integers(0, 500), st.floats(1, 10), st.integers(1, 10**6))
def test_grown_stays_within_its_cap(times: int, rate: float, cap_seconds: int) -> None:
    cap = timedelta(seconds=cap_seconds)
    assert timedelta(0) < grown(S, rate, times, cap) <= max(cap, S)

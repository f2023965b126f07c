"""The clocks: a virtual one moves only when told to, and both wait until an instant."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tarry.clock import VIRTUAL_START, SystemClock, VirtualClock


async def test_a_virtual_clock_sleeps_until_an_instant_by_moving_to_it() -> None:
    clock = VirtualClock()
    await clock.sleep_until(VIRTUAL_START + timedelta(hours=2))
    assert clock.now() == VIRTUAL_START + timedelta(hours=2)


async def test_a_virtual_clock_sleeping_until_a_past_instant_stays_where_it_is() -> None:
    clock = VirtualClock()
    clock.advance(60)
    await clock.sleep_until(VIRTUAL_START)
    assert clock.now() == VIRTUAL_START + timedelta(seconds=60)


def test_a_virtual_clock_cannot_go_backwards() -> None:
    clock = VirtualClock()
    with pytest.raises(ValueError, match=r"^a virtual clock cannot go backwards$"):
        clock.set(VIRTUAL_START - timedelta(milliseconds=1))


async def test_the_system_clock_sleeps_until_now_has_reached_the_instant() -> None:
    clock = SystemClock()
    instant = clock.now() + timedelta(milliseconds=30)
    await clock.sleep_until(instant)
    assert clock.now() >= instant

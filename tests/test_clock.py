"""The clocks: a virtual one moves only when told to, and both wait until an instant."""

from __future__ import annotations

import asyncio
import threading
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


async def _turns(count: int = 3) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_a_virtual_timer_fires_when_the_clock_is_moved_to_its_instant_not_before() -> None:
    clock = VirtualClock()
    fired: list[str] = []
    clock.call_at(VIRTUAL_START + timedelta(seconds=10), lambda: fired.append("ten"))
    clock.call_at(VIRTUAL_START + timedelta(seconds=5), lambda: fired.append("five"))
    await _turns()
    assert fired == []  # the clock does not move by itself
    clock.advance(timedelta(seconds=9, milliseconds=999))
    await _turns()
    assert fired == ["five"]
    clock.set(VIRTUAL_START + timedelta(seconds=10))
    await _turns()
    assert fired == ["five", "ten"]


async def test_a_virtual_timer_due_already_fires_soon_and_a_cancelled_one_never() -> None:
    clock = VirtualClock()
    fired: list[str] = []
    clock.call_at(VIRTUAL_START, lambda: fired.append("now"))
    clock.call_at(VIRTUAL_START + timedelta(seconds=1), lambda: fired.append("x")).cancel()
    await _turns()
    clock.advance(5)
    await _turns()
    assert fired == ["now"]


async def test_a_virtual_clock_moved_from_another_thread_fires_on_the_loop() -> None:
    clock = VirtualClock()
    loop_thread = threading.get_ident()
    fired_on: list[int] = []
    clock.call_at(VIRTUAL_START + timedelta(minutes=1),
                  lambda: fired_on.append(threading.get_ident()))
    await asyncio.to_thread(clock.advance, 60)
    await _turns()
    assert fired_on == [loop_thread]


async def test_a_virtual_clock_forgets_cancelled_timers_once_they_are_most() -> None:
    clock = VirtualClock()
    for second in range(1000):
        clock.call_at(VIRTUAL_START + timedelta(seconds=second + 1), lambda: None).cancel()
    assert len(clock._timers) < 200


async def test_a_system_timer_fires_at_its_instant() -> None:
    clock = SystemClock()
    instant = clock.now() + timedelta(milliseconds=30)
    fired = asyncio.Event()
    clock.call_at(instant, fired.set)
    await asyncio.wait_for(fired.wait(), 5)
    assert clock.now() >= instant - timedelta(milliseconds=1)

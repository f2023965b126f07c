"""The one source of time in tarry.

No module reads the system clock directly: every decision takes ``now`` from a :class:`Clock`.
Production uses :class:`SystemClock`; tests and ``tarry test`` use :class:`VirtualClock`,
whose time moves only when told to, so a wait of two days completes in microseconds.

Instants are timezone-aware ``datetime`` objects in UTC, truncated to milliseconds (the
store's resolution).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

__all__ = [
    "VIRTUAL_START",
    "Clock",
    "SystemClock",
    "Timer",
    "VirtualClock",
    "from_iso",
    "from_millis",
    "iso",
    "to_millis",
    "utc",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

VIRTUAL_START = datetime(2026, 1, 1, tzinfo=UTC)
"""Where a :class:`VirtualClock` starts unless told otherwise."""


def to_millis(instant: datetime) -> int:
    """Integer epoch milliseconds of an aware instant (the store's representation)."""
    delta = instant - _EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def from_millis(millis: int) -> datetime:
    """The aware UTC instant for integer epoch milliseconds."""
    return _EPOCH + timedelta(milliseconds=millis)


def utc(instant: datetime) -> datetime:
    """``instant`` converted to UTC and truncated to milliseconds."""
    if instant.tzinfo is None:
        raise ValueError("instant has no timezone")
    return from_millis(to_millis(instant))


def iso(instant: datetime) -> str:
    """ISO 8601 UTC with ``Z`` and millisecond precision: ``2026-01-01T09:00:00.000Z``."""
    return instant.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def from_iso(text: str) -> datetime:
    """The instant written by :func:`iso`."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class Timer(Protocol):
    """A callback due at an instant of a clock (:meth:`Clock.call_at`)."""

    def cancel(self) -> None:
        """Do not call it (nothing if it was called already)."""
        ...


class Clock(Protocol):
    """Tells the time and waits for it."""

    def now(self) -> datetime:
        """The current instant (aware, UTC, millisecond resolution)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of this clock's time (virtual clocks may return at once)."""
        ...

    async def sleep_until(self, instant: datetime) -> None:
        """Wait until ``now()`` is ``instant`` or later (at once if it is already)."""
        ...

    def call_at(self, instant: datetime, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` on the running event loop once ``now()`` reaches ``instant``,
        without moving the clock (a virtual clock calls it when it is moved there)."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """The wall-clock instant, to the millisecond."""
        return from_millis(time.time_ns() // 1_000_000)

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of real time (a negative wait returns at once)."""
        await asyncio.sleep(max(seconds, 0.0))

    async def sleep_until(self, instant: datetime) -> None:
        """Wait until the wall clock reaches ``instant``."""
        # from the clock itself, not from the millisecond of now(): that would oversleep by
        # up to a millisecond
        while (early := instant.timestamp() - time.time()) > 0:
            await asyncio.sleep(early)

    def call_at(self, instant: datetime, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` on the running loop at the wall clock's ``instant``."""
        delay = max(instant.timestamp() - time.time(), 0.0)
        return asyncio.get_running_loop().call_later(delay, callback)


class VirtualClock:
    """A clock that moves only when told to.

    ``sleep`` advances the clock by the requested amount and returns at once, so a worker
    driven by this clock skips straight to the next due instant.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._now = utc(start or VIRTUAL_START)
        self._timers: list[tuple[datetime, int, _VirtualTimer]] = []
        self._cancelled = 0
        """How many of :attr:`_timers` were cancelled."""
        self._order = itertools.count()
        self._lock = threading.Lock()  # moved from an action's thread, too

    def now(self) -> datetime:
        """The instant the clock was last moved to."""
        return self._now

    def advance(self, delta: timedelta | float) -> datetime:
        """Move time forward by ``delta`` (a timedelta or seconds); return the new instant."""
        step = delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
        if step < timedelta(0):
            raise ValueError("a virtual clock cannot go backwards")
        self._now = utc(self._now + step)
        self._fire()
        return self._now

    def set(self, instant: datetime) -> None:
        """Jump to ``instant`` (not earlier than now)."""
        target = utc(instant)
        if target < self._now:
            raise ValueError("a virtual clock cannot go backwards")
        self._now = target
        self._fire()

    async def sleep(self, seconds: float) -> None:
        """Advance the clock by ``seconds`` and yield to the event loop once."""
        self.advance(max(seconds, 0.0))
        await asyncio.sleep(0)

    async def sleep_until(self, instant: datetime) -> None:
        """Jump to ``instant`` if it is later than now, and yield to the event loop once."""
        if utc(instant) > self._now:
            self.set(instant)
        await asyncio.sleep(0)

    def call_at(self, instant: datetime, callback: Callable[[], None]) -> Timer:
        """Call ``callback`` on the running loop when the clock is moved to ``instant`` or
        past it (soon, if it is there already)."""
        timer = _VirtualTimer(asyncio.get_running_loop(), callback, self._dropped)
        with self._lock:
            heapq.heappush(self._timers, (utc(instant), next(self._order), timer))
        self._fire()
        return timer

    def _dropped(self) -> None:
        """A timer was cancelled: once they are most of those waiting, forget them (a
        harness calls thousands of actions, each timed, before its clock passes them)."""
        with self._lock:
            self._cancelled += 1
            if self._cancelled > 64 and self._cancelled * 2 > len(self._timers):
                self._timers = [entry for entry in self._timers if not entry[2].cancelled]
                heapq.heapify(self._timers)
                self._cancelled = 0

    def _fire(self) -> None:
        """Hand the callbacks whose instant the clock reached to their loops."""
        with self._lock:
            due = []
            while self._timers and self._timers[0][0] <= self._now:
                timer = heapq.heappop(self._timers)[2]
                timer.due = True
                if timer.cancelled:
                    self._cancelled -= 1
                else:
                    due.append(timer)
        for timer in due:
            timer.fire()


class _VirtualTimer:
    """A callback waiting for a :class:`VirtualClock` to reach its instant."""

    def __init__(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None],
                 dropped: Callable[[], None]) -> None:
        self._loop = loop
        self._callback = callback
        self._dropped = dropped
        self.cancelled = False
        self.due = False
        """Its instant came (it is no longer among the clock's waiting timers)."""

    def cancel(self) -> None:
        """Do not call it."""
        if not self.cancelled:
            self.cancelled = True
            if not self.due:
                self._dropped()

    def fire(self) -> None:
        """Call it on its loop (whatever thread moved the clock), unless cancelled."""
        if not self.cancelled and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._run)

    def _run(self) -> None:
        if not self.cancelled:
            self._callback()

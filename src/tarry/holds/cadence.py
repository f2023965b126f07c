"""When a held run is looked at again: the check interval, its jitter and its clamps.

All pure: every function takes the elapsed hold time (measured from the first check, not from
the run's creation) and returns a delay. With a base interval ``b`` (``check_interval``,
never under 30 s) the interval after ``e`` of holding is::

    min(max(b · 2^floor(e / (10·b)), b), max(15m, b))

so it doubles every ten intervals and levels off at 15 minutes — or at ``b`` itself when the
operator asked for a longer one, who must not silently get quarter-hourly checks. A jitter of
up to +10 % is *added* (never subtracted, so no delay falls under the floor), and the result
is clamped to what remains of the hold's maximum duration, so the last check lands exactly at
the hold's end rather than past it.
"""

from __future__ import annotations

from datetime import timedelta

from tarry.backoff import added_jitter, grown

__all__ = [
    "DENIED_FLOOR",
    "INTERVAL_CAP",
    "JITTER",
    "check_interval",
    "clamped",
    "denied_delay",
    "jittered",
    "next_check_delay",
]

INTERVAL_CAP = timedelta(minutes=15)
"""The interval grows toward this (or toward the base interval, when that is longer)."""

JITTER = 0.1
"""The largest jitter, as a fraction of the interval, always added."""

DENIED_FLOOR = timedelta(seconds=11)
"""The shortest re-deferral of a run denied a check slot."""


def check_interval(base: timedelta, elapsed: timedelta) -> timedelta:
    """The interval after ``elapsed`` of holding: doubling every ten base intervals, capped."""
    cap = max(INTERVAL_CAP, base)
    doublings = max(elapsed, timedelta(0)) // (10 * base)
    return max(grown(base, 2, doublings, cap), base)


def jittered(interval: timedelta, fraction: float) -> timedelta:
    """``interval`` plus ``fraction`` (in [0, 1)) of the largest jitter."""
    return added_jitter(interval, JITTER, fraction)


def clamped(delay: timedelta, elapsed: timedelta, hold_max: timedelta) -> timedelta:
    """``delay``, but never past the end of a hold of ``hold_max`` (and never negative)."""
    return max(min(delay, hold_max - elapsed), timedelta(0))


def next_check_delay(base: timedelta, elapsed: timedelta, hold_max: timedelta,
                     fraction: float) -> timedelta:
    """How long after a check, ``elapsed`` into the hold, the next one runs."""
    return clamped(jittered(check_interval(base, elapsed), fraction), elapsed, hold_max)


def denied_delay(base: timedelta, elapsed: timedelta) -> timedelta:
    """How long a run denied a check slot waits to try again: a quarter of its cadence,
    never under :data:`DENIED_FLOOR`; nothing is spawned meanwhile."""
    return max(check_interval(base, elapsed) / 4, DENIED_FLOOR)

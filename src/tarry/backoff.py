"""Backoff: how delays grow and how they are jittered, for every part of tarry that waits.

One module for the four places that space attempts out: a ``repeat``'s ``backoff`` and an
action's ``retry`` (flows), the wait strategies of ``wait_for_condition``
(Python flows), the hold cadence and a worker's retries while its store is
unavailable. Each keeps its own formula, built from these pure pieces::

    grown(initial, rate, times, cap)      initial · rate^times, at most cap (never overflows)
    linear(initial, increment, times, cap)  initial + increment · times, at most cap
    Jitter.FULL / HALF / NONE .apply(d, u)  uniform(0, d) / d/2 + uniform(0, d/2) / d
    added_jitter(d, fraction, u)          d + d · fraction · u (never below d)

``u`` is a draw in [0, 1) the caller supplies (and, where a decision must survive a crash,
records), so nothing here reads a clock or a random generator.
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum

__all__ = ["Jitter", "added_jitter", "grown", "linear"]

_LONGEST = timedelta.max
"""The cap of a delay given none: grows no further than a timedelta can say."""


class Jitter(StrEnum):
    """How much randomness a delay gets: FULL = uniform(0, d), HALF = d/2 + uniform(0, d/2),
    NONE = d exactly."""

    FULL = "full"
    HALF = "half"
    NONE = "none"

    def apply(self, delay: timedelta, draw: float) -> timedelta:
        """``delay`` with this jitter, ``draw`` being uniform in [0, 1)."""
        if self is Jitter.FULL:
            return delay * draw
        if self is Jitter.HALF:
            return delay / 2 + delay / 2 * draw
        return delay


def grown(initial: timedelta, rate: float, times: int,
          cap: timedelta | None = None) -> timedelta:
    """``initial · rate^times``, but at most ``cap`` (without overflowing on the way)."""
    ceiling = _LONGEST if cap is None else cap
    try:
        return min(initial * (rate ** times), ceiling)
    except OverflowError:
        return ceiling


def linear(initial: timedelta, increment: timedelta, times: int,
           cap: timedelta | None = None) -> timedelta:
    """``initial + increment · times``, but at most ``cap`` when one is given."""
    delay = initial + increment * times
    return delay if cap is None else min(delay, cap)


def added_jitter(delay: timedelta, fraction: float, draw: float) -> timedelta:
    """``delay`` plus up to ``fraction`` of itself (``draw`` in [0, 1) says how much): a
    jitter that never shortens a delay below its floor."""
    if not 0.0 <= draw < 1.0:
        raise ValueError(f"a jitter fraction lies in [0, 1), got {draw}")
    return delay + delay * (fraction * draw)

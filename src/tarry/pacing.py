"""Pacing starts, decided without I/O: a throttle's next turn and a debounce's fire instant.

**Throttle** (``throttle: {key, limit, per}``). Each run of a key takes a *turn*: the instant
it may run its first step. Turns are handed out in order under the key's lock, so they
never decrease (first come, first served), and the n-th turn is at least ``per`` after the
(n - limit)-th: in any span of ``per`` at most ``limit`` runs of the key start. A turn is
computed from the ``limit`` latest turns alone, so the store keeps no more than those (and
forgets turns older than ``per``)::

    turn = max(now, newest, limit-th newest + per)      (fewer than limit: max(now, newest))

**Debounce** (``debounce: {key, period, max}``). A burst of events of one key starts one
run, ``period`` after its last event, and never more than ``max`` after its first::

    fire_at = min(last + period, first + max)
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

__all__ = ["debounce_fire_at", "throttle_turn"]


def throttle_turn(recent: Sequence[datetime], limit: int, per: timedelta,
                  now: datetime) -> datetime:
    """The turn of the next run of a key whose latest turns are ``recent`` (newest first;
    only the first ``limit`` matter)."""
    if limit < 1:
        raise ValueError("a throttle's limit is at least 1")
    if not recent:
        return now
    turn = max(now, recent[0])
    if len(recent) >= limit:
        turn = max(turn, recent[limit - 1] + per)
    return turn


def debounce_fire_at(first: datetime, last: datetime, period: timedelta,
                     longest: timedelta | None) -> datetime:
    """When the run of a burst whose first event came at ``first`` and last at ``last``
    starts: ``period`` after the last, at most ``longest`` (when given) after the first."""
    fire_at = last + period
    return fire_at if longest is None else min(fire_at, first + longest)

"""When a schedule trigger fires: its occurrences in local time, and what to create after a gap.

Pure functions of the trigger, the last instant already handled and ``now``. Occurrences are
computed in the trigger's IANA zone by ``cronsim``, so ``0 9 * * mon-fri`` in Europe/Berlin is
09:00 Berlin time on both sides of a DST change; a local time that does not exist (the hour
skipped in spring) fires at the first instant after the gap, and one that exists twice (the hour
repeated in autumn) fires once, as Debian's cron does.

An occurrence is *on time* when it is handled within :data:`ON_TIME` of its instant. Older ones
were missed (every worker was down, or none ran); ``catch_up`` says which of those are created:
``none`` (none of them), ``latest`` (the most recent one, default) or ``all`` (every one, the
most recent ``limit`` at most).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import islice, takewhile

from cronsim import CronSim

from tarry.language.durations import parse_zone
from tarry.language.model import ScheduleTrigger

__all__ = [
    "ON_TIME",
    "FirePlan",
    "next_occurrence",
    "occurrences_between",
    "plan_firing",
    "schedule_key",
]

ON_TIME = timedelta(minutes=1)
"""An occurrence handled within this long after its instant is on time, not missed."""


@dataclass(frozen=True)
class FirePlan:
    """What a schedule does at ``now``: the occurrences to create (oldest first), how many
    missed ones it skipped, and when it is next due."""

    fire: tuple[datetime, ...]
    skipped: int
    next_at: datetime


def schedule_key(flow: str, trigger: ScheduleTrigger) -> str:
    """The identity of a schedule in the store: its flow and what decides its instants, so
    that editing the cron or the zone makes a new schedule (with no catch-up of the old)."""
    spec = f"{trigger.cron}|{trigger.timezone}".encode()
    return f"{flow}:{hashlib.sha256(spec).hexdigest()[:16]}"


def next_occurrence(trigger: ScheduleTrigger, after: datetime) -> datetime:
    """The first occurrence strictly after ``after`` (an aware instant), in UTC."""
    return next(_occurrences(trigger, after))


def plan_firing(trigger: ScheduleTrigger, last: datetime, now: datetime, *,
                limit: int = 100) -> FirePlan:
    """The occurrences in ``(last, now]`` to create under the trigger's ``catch_up``.

    ``last`` is the instant the schedule was last handled up to (when it was registered, or
    its latest occurrence handled); ``limit`` bounds ``catch_up: all``.
    """
    due = list(takewhile(lambda instant: instant <= now, _occurrences(trigger, last)))
    fire = _created(trigger, due, now, limit)
    return FirePlan(fire=fire, skipped=len(due) - len(fire),
                    next_at=next_occurrence(trigger, now))


def _created(trigger: ScheduleTrigger, due: list[datetime], now: datetime,
             limit: int) -> tuple[datetime, ...]:
    """Which of the ``due`` occurrences (oldest first) ``catch_up`` creates: ``none`` only
    the on-time ones, ``latest`` the most recent, ``all`` every one (the last ``limit``)."""
    if trigger.catch_up == "latest":
        return tuple(due[-1:])
    if trigger.catch_up == "all":
        return tuple(due[-limit:])
    return tuple(instant for instant in due if now - instant <= ON_TIME)


def _occurrences(trigger: ScheduleTrigger, after: datetime) -> Iterator[datetime]:
    """The occurrences after ``after``, in UTC, in order.

    cronsim starts from the minute after its start (it skips the start itself), and works in
    the zone's wall time: the start is converted to local time first.
    """
    zone = parse_zone(trigger.timezone)
    local = after.astimezone(zone)
    for instant in CronSim(trigger.cron, local):
        yield instant.astimezone(UTC)


def occurrences_between(trigger: ScheduleTrigger, after: datetime, until: datetime,
                        *, limit: int = 1000) -> list[datetime]:
    """At most ``limit`` occurrences in ``(after, until]`` (for listings and tests)."""
    found = takewhile(lambda instant: instant <= until, _occurrences(trigger, after))
    return list(islice(found, limit))

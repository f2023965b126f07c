"""Retention: ended runs and settled events deleted once they are older than configured.

``[retention] runs`` counts from a run's end, ``events`` from an event's receipt (see
:class:`~tarry.config.Retention`). What a live run may still need is never deleted: a run
that has not ended (with its tasks, inbox and journal), and a buffered event. Deleting goes a
short batch per transaction (:data:`PURGE_BATCH` runs, then as many events; a worker's
background purge :data:`BACKGROUND_BATCH`, with a pause between two), so the workers'
claims and checkpoints are never held up for long; each run goes whole in one transaction,
so a purge killed at any instant leaves every run complete or gone, and a purge repeated
after that simply goes on.

A worker purges in the background (:func:`purge_in_background`); ``tarry purge`` does the same
on demand (:func:`purge`), or counts what it would delete (:func:`count`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from tarry.clock import Clock
from tarry.config import Retention
from tarry.errors import InvalidRequest, StoreError
from tarry.store.aio import AsyncStore
from tarry.store.base import Store

__all__ = ["BACKGROUND_BATCH", "PURGE_BATCH", "PURGE_EVERY", "Cutoffs", "Purged", "count",
           "cutoffs", "purge", "purge_in_background"]

logger = logging.getLogger("tarry.retention")

PURGE_BATCH = 200
"""How many runs (and how many events) one purge transaction deletes at most."""

PURGE_EVERY = 60.0
"""Seconds between a worker's background purges (each goes on, a batch at a time, until
nothing expired is left)."""

BACKGROUND_BATCH = 50
"""How many runs (and events) one transaction of a worker's background purge deletes: a
transaction that short keeps the store free for the worker's claims and checkpoints."""

_PAUSE = 0.05
"""Seconds a background purge leaves the store to the worker between two batches (some
thousand runs a minute still go: more than a million a day)."""


@dataclass(frozen=True)
class Cutoffs:
    """What has expired: runs that ended, and events received, before these instants (None:
    kept for ever)."""

    runs: datetime | None
    events: datetime | None


@dataclass(frozen=True)
class Purged:
    """How many ended runs and settled events were deleted (or would be)."""

    runs: int = 0
    events: int = 0

    def __add__(self, other: Purged) -> Purged:
        return Purged(self.runs + other.runs, self.events + other.events)


def cutoffs(retention: Retention, now: datetime,
            older_than: timedelta | None = None) -> Cutoffs:
    """What has expired at ``now``: by ``retention``, or, given ``older_than``, whatever
    ended or was received longer ago than that (runs and events alike). Raises
    ``InvalidRequest`` when nothing can (retention off and no ``older_than``)."""
    if older_than is None and not retention.on:
        raise InvalidRequest("retention is off, so nothing expires: set [retention] runs "
                             "and events in tarry.toml (such as runs = \"30d\"), or give "
                             "--older-than")
    runs = older_than or retention.runs
    events = older_than or retention.events
    return Cutoffs(now - runs if runs else None, now - events if events else None)


def count(store: Store, expired: Cutoffs, now: datetime) -> Purged:
    """How many ended runs and settled events :func:`purge` would delete at ``now``."""
    return Purged(
        store.count_ended_runs(expired.runs) if expired.runs else 0,
        store.count_settled_events(expired.events, now) if expired.events else 0)


def purge(store: Store, expired: Cutoffs, now: datetime, *,
          batch: int = PURGE_BATCH) -> Purged:
    """Delete everything that expired, ``batch`` at a time; how much."""
    total = Purged()
    while True:
        done = _batch(store, expired, now, batch)
        total += done
        if done.runs < batch and done.events < batch:
            return total


def _batch(store: Store, expired: Cutoffs, now: datetime, batch: int) -> Purged:
    """One transaction of runs and one of events."""
    return Purged(
        store.purge_ended_runs(expired.runs, batch) if expired.runs else 0,
        store.purge_settled_events(expired.events, now, batch) if expired.events else 0)


async def purge_in_background(store: AsyncStore, clock: Clock, retention: Retention,
                              stop: asyncio.Event, *, every: float = PURGE_EVERY,
                              batch: int = BACKGROUND_BATCH) -> None:
    """A worker's retention: every ``every`` seconds (the first time at once), delete what
    expired a batch at a time, pausing between batches, until ``stop``. A store error is
    logged and the next round tries again: retention never stops a worker."""
    while not stop.is_set():
        try:
            purged = await _purge_until_done(store, clock, retention, stop, batch)
            if purged.runs or purged.events:
                logger.info("retention deleted %d ended runs and %d settled events",
                            purged.runs, purged.events)
        except StoreError as exc:
            logger.warning("retention could not delete expired runs or events (%s); "
                           "retrying in %.0fs", exc, every)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)


async def _purge_until_done(store: AsyncStore, clock: Clock, retention: Retention,
                            stop: asyncio.Event, batch: int) -> Purged:
    total = Purged()
    while not stop.is_set():
        now = clock.now()
        done = await store.offload(functools.partial(
            _batch, store.sync, cutoffs(retention, now), now, batch))
        total += done
        if done.runs < batch and done.events < batch:
            break
        await asyncio.sleep(_PAUSE)
    return total

"""The worker: claim due runs, execute them, commit, and sleep until the next due instant.

A worker holds nothing for a waiting run. When idle it sleeps until the earliest ``due_at`` in
the store, waking early when the store's change token moves (another process started a run or
sent an event). Every store call is awaited through the async boundary
(:class:`tarry.store.aio.AsyncStore`), so the worker's loop keeps running (other runs' actions,
an HTTP server beside it) while a claim waits for a lock or a commit for the disk. Leases of
runs in flight are renewed in the background; a worker that dies simply stops renewing, and its
runs become due again when their leases lapse.

A running worker claims only as many runs as it has free slots and claims again as soon as one
frees, so a slow action (or a hold's check script) never delays the wakes due behind it. While
its checkpoints are being written it claims in their transactions (as many runs as each batch
frees slots), not in transactions of its own: a busy worker commits once per batch, not twice.

It also claims a little ahead (``look_ahead``, 50 ms by default on the real clock): a run due
within that window that nothing can reach before its instant (a timer or a hold, with no event
wait and no open task) is claimed early and runs at its instant, so the claim's commit, and any
wait for the store behind another writer, is not part of its lateness.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import socket
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from tarry.actions import ActionRegistry
from tarry.backoff import grown
from tarry.clock import Clock
from tarry.config import Retention
from tarry.engine.catalog import FlowCatalog
from tarry.engine.commands import DEFAULT_ACTION_TIMEOUT
from tarry.engine.committer import ClaimAlong, Committer
from tarry.engine.executor import Executor
from tarry.engine.retention import PURGE_EVERY, purge_in_background
from tarry.engine.triggers import Triggers
from tarry.errors import StateVersionError, StoreError, TarryError
from tarry.holds.gate import HoldGate
from tarry.holds.service import Holds
from tarry.language.expressions import compile_template
from tarry.model import InboxEvent, RunRecord, RunStatus, RunUpdate
from tarry.secrets import Redactor
from tarry.store.aio import AsyncStore
from tarry.values import ValueLimits

__all__ = ["LOOK_AHEAD", "Worker", "freeze_heap", "worker_name"]

logger = logging.getLogger("tarry.worker")

_IDLE_LOOK_SECONDS = 1.0
"""The longest an idle worker sleeps before it looks at the store again unwoken; a change by
another process (pushed by PostgreSQL; on SQLite seen in its write-ahead log within about
2 ms, asked every 20 ms) wakes it sooner."""
_ERROR_BACKOFF_FIRST = timedelta(seconds=0.1)
_ERROR_BACKOFF_MAX = timedelta(seconds=2)
"""A worker whose store is unavailable retries after 0.2 s, 0.4 s, … at most 2 s: it picks
work up again within seconds of the database coming back (docs/deploy.md promises 5)."""
_SCHEDULE_SYNC = timedelta(minutes=1)
"""How often a worker stores its flows' schedules again (picking up edited flow files)."""
LOOK_AHEAD = timedelta(milliseconds=50)
"""How far ahead a worker on the real clock claims runs that nothing can reach before their
instant (a claim takes about a millisecond, more while another process writes)."""


def freeze_heap() -> int:
    """Build the expression parser, collect once, and move every object then alive into the
    garbage collector's permanent generation (:func:`gc.freeze`); how many it moved.

    A full collection then no longer walks the modules, the parser and the settings loaded at
    start-up: in a busy worker it paused the loop 14-21 ms each time (one wake in a hundred
    late by that much). For a process whose main job is the worker, once its engine is open
    (``tarry worker`` and ``tarry serve`` call it); what it froze is never freed.
    """
    compile_template("{{ 0 }}")
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def worker_name() -> str:
    """A name unique to this process: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    """Executes due runs from a store; any number may share one store."""

    def __init__(self, store: AsyncStore, catalog: FlowCatalog, actions: ActionRegistry,
                 clock: Clock, *, concurrency: int = 16, batch: int = 256,
                 lease: timedelta = timedelta(seconds=30), name: str | None = None,
                 holds: Holds | None = None, redactor: Redactor | None = None,
                 limits: ValueLimits | None = None, recovery_max: int = 3,
                 triggers: Triggers | None = None,
                 look_ahead: timedelta = timedelta(0),
                 on_wake: Callable[[RunRecord, datetime], None] | None = None,
                 retention: Retention | None = None, purge_every: float = PURGE_EVERY,
                 action_timeout: timedelta = DEFAULT_ACTION_TIMEOUT) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if look_ahead < timedelta(0):
            raise ValueError("look_ahead must not be negative")
        self.look_ahead = look_ahead
        self.on_wake = on_wake
        """Called as each claimed run begins to execute, with the instant (metrics)."""
        self.store = store
        self.clock = clock
        self.name = name or worker_name()
        self.batch = batch
        self._lease = lease
        self.committer = Committer(store, self.name, clock)
        self.executor = Executor(catalog, actions, self.committer.submit,
                                 gate=HoldGate(holds or Holds(store.sync, clock, aio=store)),
                                 redactor=redactor or Redactor(),
                                 limits=limits or ValueLimits(),
                                 read_journal=store.read_journal, timer=clock,
                                 recovery_max=recovery_max, clock=clock.now,
                                 action_timeout=action_timeout, lease=lease,
                                 take_turn=store.take_throttle_turn)
        self.concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self._recovering = asyncio.Lock()
        """Held while a run taken over from a dead worker advances (:meth:`_recover`)."""
        self._loading = asyncio.Lock()
        """Held while a flow is read from the store: runs of one flow claimed together read
        it once."""
        self._in_flight: Counter[str] = Counter()
        """The runs claimed and not yet done, each with how many executions hold it (two,
        briefly, when a checkpoint's transaction claimed its run right back)."""
        self._running: set[asyncio.Task[None]] = set()
        self._nudged = asyncio.Event()
        self.triggers = triggers
        self.retention = retention
        """What the worker deletes in the background while it runs (nothing when off)."""
        self.purge_every = purge_every
        self._schedules_synced_at: datetime | None = None
        self._next_schedule_at: datetime | None = None

    @property
    def lease(self) -> timedelta:
        """How long a claim holds a run (renewed every third of it while the run is in
        flight); also the longest silence allowed after an action's heartbeat."""
        return self._lease

    @lease.setter
    def lease(self, lease: timedelta) -> None:
        self._lease = lease
        self.executor.lease = lease

    def wake(self) -> None:
        """Look for due runs at once rather than at the next look at the store's change token
        (a start or an event accepted in this process calls it). Call it on the loop's thread."""
        self._nudged.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Work until ``stop`` is set; in-flight runs finish (or checkpoint) first."""
        compile_template("{{ 0 }}")  # build the expression parser now, not on the first wake
        renewer = asyncio.create_task(self._renew_leases(stop))
        purger = (asyncio.create_task(purge_in_background(
            self.store, self.clock, self.retention, stop, every=self.purge_every))
            if self.retention is not None and self.retention.on else None)
        running = self._running  # every run's task, whoever claimed it
        self.committer.claim_along = ClaimAlong(
            room=lambda batch: 0 if stop.is_set() else self._room(batch),
            lease=self.lease, ahead=self.look_ahead, take=self._take)
        failures = 0
        looked_ahead_for: datetime | None = None
        try:
            while not stop.is_set():
                free = self.concurrency - len(running)
                if free <= 0:
                    await _first_done(running, stop)
                    continue
                try:
                    self._nudged.clear()
                    if self.committer.claiming:  # its commit claims what is due by then
                        await self._fire_schedules()
                        await self.committer.settled()
                        continue
                    claimed = await self._claim(min(self.batch, free), self.look_ahead)
                    if self._start(claimed):
                        looked_ahead_for = None
                        await asyncio.sleep(0)  # let them begin; claim again while slots are free
                    else:  # an early look that found nothing claimable waits for the instant
                        looked_ahead_for = await self._idle(stop, looked_ahead_for)
                    failures = 0
                except StoreError as exc:  # the database is away: back off, never die
                    failures += 1
                    delay = grown(_ERROR_BACKOFF_FIRST, 2, failures,
                                  _ERROR_BACKOFF_MAX).total_seconds()
                    logger.warning("store unavailable (%s); retrying in %.1fs", exc, delay)
                    await _sleep_or_stop(stop, delay)
            if running:  # graceful stop: in-flight runs finish (or checkpoint) first
                await asyncio.gather(*running)
        finally:
            self.committer.claim_along = None
            renewer.cancel()
            if purger is not None:  # a batch in flight still commits (or not) whole
                purger.cancel()
                await asyncio.gather(purger, return_exceptions=True)

    async def run_once(self) -> int:
        """Handle everything due now, then return how many executions that took."""
        total = 0
        while handled := await self.tick():
            total += handled
        return total

    async def tick(self) -> int:
        """Claim one batch of due runs, execute all of it, and return how many were claimed."""
        claimed = await self._claim(self.batch, timedelta(0))
        await asyncio.gather(*(self.execute(record, inbox) for record, inbox in claimed))
        return len(claimed)

    async def _claim(self, limit: int, ahead: timedelta
                     ) -> list[tuple[RunRecord, list[InboxEvent]]]:
        """Lease up to ``limit`` due runs, each with the events delivered to it, and the runs
        nothing can reach due within ``ahead``, in one transaction (after creating the runs of
        schedule occurrences due by now)."""
        await self._fire_schedules()
        now = self.clock.now()
        claimed = await self.store.claim_due_with_inbox(now, self.name, now + self.lease, limit,
                                                        ahead=now + ahead)
        # Every claimed run counts as in flight from now on, so the lease renewer keeps the
        # leases of runs still queued behind the concurrency limit.
        self._in_flight.update(record.id for record, _ in claimed)
        return claimed

    async def _fire_schedules(self) -> None:
        """Create the runs of schedule occurrences due by now, looking only when one may be
        due; the flows' schedules are stored first and every :data:`_SCHEDULE_SYNC` after
        (picking up edited flow files)."""
        if self.triggers is None:
            return
        now = self.clock.now()
        if self._schedules_synced_at is None or now - self._schedules_synced_at >= _SCHEDULE_SYNC:
            await self.triggers.sync(self.store)
            self._schedules_synced_at = now
            self._next_schedule_at = now
        if self._next_schedule_at is not None and now >= self._next_schedule_at:
            self._next_schedule_at = await self.triggers.fire_due(self.store)

    def _room(self, batch: Sequence[RunUpdate]) -> int:
        """How many runs to claim in the transaction of ``batch``: the slots free once the
        runs it releases are done (at most :attr:`batch`)."""
        releasing = sum(1 for update in batch if update.release)
        return min(self.batch, self.concurrency - len(self._running) + releasing)

    def _take(self, claimed: list[tuple[RunRecord, list[InboxEvent]]]) -> None:
        """Execute the runs a checkpoint's transaction claimed."""
        self._in_flight.update(record.id for record, _ in claimed)
        self._start(claimed)

    def _start(self, claimed: list[tuple[RunRecord, list[InboxEvent]]]) -> int:
        """Execute each claimed run in its own task, tracked in :attr:`_running`."""
        for record, inbox in claimed:
            task = asyncio.create_task(self.execute(record, inbox))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
        return len(claimed)

    async def execute(self, record: RunRecord, inbox: list[InboxEvent]) -> None:
        """Execute one claimed run (with its delivered events) and commit what it came to."""
        await self._until_due(record)
        async with self._slots:
            try:
                if record.status is RunStatus.RUNNING:
                    await self._recover(record, inbox)
                else:
                    await self._advance(record, inbox)
            except StoreError as exc:
                logger.warning("run %s: could not commit (%s); it resumes after its lease",
                               record.id, exc, extra={"run_id": record.id})
            except StateVersionError as exc:  # written by a newer tarry: leave it to one
                logger.error("run %s: %s; it is left as it is", record.id, exc,
                             extra={"run_id": record.id})
            finally:
                self._in_flight[record.id] -= 1
                if self._in_flight[record.id] <= 0:
                    del self._in_flight[record.id]

    async def _recover(self, record: RunRecord, inbox: list[InboxEvent]) -> None:
        """Advance a run taken over from a worker that died running it. It may be what
        killed that worker: such runs advance one at a time, each counted as it begins, so a
        run that kills every worker is failed as crashed after ``recovery_max`` of them, and
        the runs that were only in flight beside it, or queued behind it, are not counted
        with it."""
        async with self._recovering:
            recoveries = await self.store.count_recovery(record.id, self.name)
            if recoveries is not None:  # else another worker holds it now
                await self._advance(replace(record, recoveries=recoveries), inbox)

    async def _advance(self, record: RunRecord, inbox: list[InboxEvent]) -> None:
        """Advance the run and commit what it came to."""
        await self._load_flow(record.flow_digest)
        now = self.clock.now()
        if self.on_wake is not None:
            self.on_wake(record, now)
        update = await self.executor.execute(record, now, inbox)
        if update is not None:
            await self.committer.submit(update)  # a cancel asked meanwhile ends it there

    async def _load_flow(self, digest: str) -> None:
        """Read and parse a run's stored flow on the store's threads, not on the loop (once
        per digest: the catalog keeps it for the executor)."""
        catalog = self.executor.catalog
        if catalog.has_digest(digest):
            return
        async with self._loading:
            if not catalog.has_digest(digest):  # not read while this waited for the lock
                with contextlib.suppress(TarryError):  # the executor records a flow that fails
                    await self.store.call(catalog.by_digest, digest)

    async def _until_due(self, record: RunRecord) -> None:
        """Wait for the instant of a run claimed ahead of it (at once for one claimed due)."""
        if record.due_at is not None:
            await self.clock.sleep_until(record.due_at)

    async def _idle(self, stop: asyncio.Event, looked_ahead_for: datetime | None
                    ) -> datetime | None:
        """Sleep until :attr:`look_ahead` before the earliest due instant (until the instant
        itself if it is ``looked_ahead_for``: an early look found nothing to claim), a
        :meth:`wake`, or ``stop``; return the due instant it woke ahead of.

        A change in the store makes it read the earliest due instant again, not claim: a run
        started or suspended elsewhere that is due later than the one awaited changes
        nothing (a loop of starts beside a busy worker no longer costs it a claim each)."""
        token = await self.store.change_token()
        due = await self.store.next_due_at()
        while not stop.is_set() and not self._nudged.is_set():
            ahead = self.look_ahead if due != looked_ahead_for else timedelta(0)
            remaining = ((due - ahead - self.clock.now()).total_seconds() if due
                         else _IDLE_LOOK_SECONDS)
            if remaining <= 0:
                return due if ahead else None
            wait = min(remaining, _IDLE_LOOK_SECONDS)
            change = asyncio.ensure_future(self.store.wait_for_change(token, wait))
            await _sleep_or_stop(stop, wait, self.clock, self._nudged, change)
            if change.done() and not change.cancelled() and change.result() != token:
                token = change.result()
                due = await self.store.next_due_at()
        return None

    async def _renew_leases(self, stop: asyncio.Event) -> None:
        interval = self.lease.total_seconds() / 3
        while not stop.is_set():
            await asyncio.sleep(interval)
            if self._in_flight:
                try:
                    now = self.clock.now()
                    await self.store.renew_leases(self.name, sorted(self._in_flight),
                                                  now + self.lease)
                except StoreError as exc:
                    logger.warning("could not renew leases: %s", exc)


async def _first_done(running: set[asyncio.Task[None]], stop: asyncio.Event) -> None:
    """Wait until one of ``running`` finishes, or ``stop`` is set."""
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({*running, stopper}, return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()


async def _sleep_or_stop(stop: asyncio.Event, seconds: float, clock: Clock | None = None,
                         nudge: asyncio.Event | None = None,
                         change: asyncio.Future[object] | None = None) -> None:
    if clock is not None:
        sleeper = asyncio.ensure_future(clock.sleep(seconds))
    else:
        sleeper = asyncio.ensure_future(asyncio.sleep(seconds))
    waits: set[asyncio.Future[Any]] = {sleeper, asyncio.ensure_future(stop.wait())}
    if nudge is not None:
        waits.add(asyncio.ensure_future(nudge.wait()))
    if change is not None:
        waits.add(change)
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in waits:
        task.cancel()

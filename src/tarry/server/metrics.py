"""``/metrics``: what the server and its worker do, in the Prometheus text format.

- ``tarry_runs`` (``status``), gauge: runs per status, counted in the store at each scrape;
- ``tarry_wake_lateness_seconds``, histogram: a timer's wake, the instant its run began to
  execute minus the instant it waited until;
- ``tarry_send_to_resume_seconds``, histogram: from an event's receipt to the checkpoint of
  the run that took it in;
- ``tarry_events_total`` (``outcome``), counter: events sent or redelivered over HTTP, by
  what became of them;
- ``tarry_webhooks_refused_total`` (``reason``), counter: signed deliveries refused 401, by
  why (``missing-signature``, ``bad-signature``, ``bad-timestamp``, ``stale-timestamp``);
- ``tarry_checks_total`` (``outcome``), counter: hold checks this worker ran (go, not_yet,
  never, unknown);
- ``tarry_claim_seconds``, ``tarry_checkpoint_seconds``, histograms: the worker's claim and
  checkpoint transactions;
- ``tarry_event_loop_lag_seconds``, histogram: how late the event loop runs a 50 ms timer.

Each app has its own registry (two apps in one process do not mix their figures). The worker
is observed through :class:`ObservedStore`, a store wrapper, and :meth:`Metrics.observe_wake`,
its wake callback, so neither the worker nor the store knows about metrics.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from tarry.clock import from_iso
from tarry.errors import StoreError
from tarry.model import CheckpointOutcome, InboxEvent, RunRecord, RunStatus, RunUpdate
from tarry.store.aio import AsyncStore
from tarry.store.base import Store

__all__ = ["CONTENT_TYPE", "LAG_PROBE_SECONDS", "Metrics", "ObservedStore", "probe_loop_lag"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LAG_PROBE_SECONDS = 0.05
"""How often the event-loop lag is sampled."""

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                    10.0, 30.0, 60.0)
_REMEMBERED_RECEIPTS = 100_000
"""At most this many receipts of delivered events are kept while their runs are in flight."""
_LAG_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)


class _RunsByStatus(Collector):
    def __init__(self, store: Store) -> None:
        self._store = store

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("tarry_runs", "Runs per status, in the store.",
                                   labels=["status"])
        try:
            counts = self._store.count_runs_per_status()
        except StoreError:
            return
        for status in RunStatus:
            family.add_metric([status.value], counts.get(status, 0))
        yield family


class Metrics:
    """The metrics of one server."""

    def __init__(self, store: Store) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.registry.register(_RunsByStatus(store))
        self.wake_lateness = Histogram(
            "tarry_wake_lateness_seconds", "How late timers wake: the run began to execute "
            "at, minus the instant it waited until.", buckets=_LATENCY_BUCKETS,
            registry=self.registry)
        self.send_to_resume = Histogram(
            "tarry_send_to_resume_seconds", "From an event's receipt to the checkpoint of the "
            "run that took it in.", buckets=_LATENCY_BUCKETS, registry=self.registry)
        self.events = Counter("tarry_events", "Events sent or redelivered over HTTP, by "
                              "outcome.", ["outcome"], registry=self.registry)
        self.webhooks_refused = Counter(
            "tarry_webhooks_refused", "Signed deliveries refused (401), by reason.", ["reason"],
            registry=self.registry)
        self.checks = Counter("tarry_checks", "Hold checks run, by outcome.", ["outcome"],
                              registry=self.registry)
        self.claim = Histogram("tarry_claim_seconds", "The worker's claim transactions.",
                               buckets=_LATENCY_BUCKETS, registry=self.registry)
        self.checkpoint = Histogram("tarry_checkpoint_seconds",
                                    "The worker's checkpoint transactions (one per batch).",
                                    buckets=_LATENCY_BUCKETS, registry=self.registry)
        self.loop_lag = Histogram("tarry_event_loop_lag_seconds",
                                  "How late the event loop runs a 50 ms timer.",
                                  buckets=_LAG_BUCKETS, registry=self.registry)

    def render(self) -> bytes:
        """The text exposition of every metric (reads the store for the run counts)."""
        return generate_latest(self.registry)

    def observe_wake(self, record: RunRecord, now: datetime) -> None:
        """The worker's wake callback: a run that waited for a timer begins to execute at
        ``now``."""
        waiting = record.waiting_for or {}
        if record.status is RunStatus.WAITING and waiting.get("kind") == "timer":
            until = from_iso(waiting["until"])
            if until <= now:
                self.wake_lateness.observe((now - until).total_seconds())


class ObservedStore:
    """An async store that times the worker's claims and checkpoints and sees its events.

    Everything else passes straight through to the wrapped boundary.
    """

    def __init__(self, store: AsyncStore, metrics: Metrics,
                 monotonic: Callable[[], float] = time.perf_counter) -> None:
        self._store = store
        self._metrics = metrics
        self._monotonic = monotonic
        self._received: dict[str, datetime] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def claim_due_with_inbox(self, now: datetime, worker: str, lease_until: datetime,
                                   limit: int, *, ahead: datetime | None = None
                                   ) -> list[tuple[RunRecord, list[InboxEvent]]]:
        """``claim_due_with_inbox``, timed; each delivered event's receipt is remembered for
        its send-to-resume."""
        started = self._monotonic()
        claimed = await self._store.claim_due_with_inbox(now, worker, lease_until, limit,
                                                         ahead=ahead)
        if claimed:
            self._metrics.claim.observe(self._monotonic() - started)
        self._remember_receipts(claimed)
        return claimed

    async def checkpoint(self, worker: str, now: datetime,
                         updates: list[RunUpdate]) -> dict[str, CheckpointOutcome]:
        """``checkpoint``, timed; consumed events and hold checks counted."""
        started = self._monotonic()
        outcomes = await self._store.checkpoint(worker, now, updates)
        self._observe_checkpoint(started, updates, now)
        return outcomes

    async def checkpoint_and_claim(self, worker: str, now: datetime, updates: list[RunUpdate],
                                   *, lease_until: datetime, limit: int,
                                   ahead: datetime | None = None
                                   ) -> tuple[dict[str, CheckpointOutcome],
                                              list[tuple[RunRecord, list[InboxEvent]]]]:
        """``checkpoint_and_claim``, timed as a checkpoint (the claim rides in its
        transaction); observed as both."""
        started = self._monotonic()
        outcomes, claimed = await self._store.checkpoint_and_claim(
            worker, now, updates, lease_until=lease_until, limit=limit, ahead=ahead)
        self._observe_checkpoint(started, updates, now)
        self._remember_receipts(claimed)
        return outcomes, claimed

    def _remember_receipts(self, claimed: list[tuple[RunRecord, list[InboxEvent]]]) -> None:
        """Each delivered event's receipt, for its send-to-resume."""
        if len(self._received) > _REMEMBERED_RECEIPTS:  # runs that never took theirs in
            self._received.clear()
        for _, events in claimed:
            self._received.update({event.inbox_id: event.received_at for event in events})

    def _observe_checkpoint(self, started: float, updates: list[RunUpdate],
                            now: datetime) -> None:
        self._metrics.checkpoint.observe(self._monotonic() - started)
        for update in updates:
            self._observe_update(update, now)

    def _observe_update(self, update: RunUpdate, now: datetime) -> None:
        for inbox_id in update.consumed:
            received = self._received.pop(inbox_id, None)
            if received is not None:
                self._metrics.send_to_resume.observe(max((now - received).total_seconds(), 0))
        for entry in update.history:
            if entry.kind == "hold.check":
                self._metrics.checks.labels(str(entry.data.get("outcome"))).inc()


async def probe_loop_lag(metrics: Metrics, stop: asyncio.Event) -> None:
    """Sample how late the running loop wakes a timer, until ``stop``."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        expected = loop.time() + LAG_PROBE_SECONDS
        await asyncio.sleep(LAG_PROBE_SECONDS)
        metrics.loop_lag.observe(max(loop.time() - expected, 0.0))

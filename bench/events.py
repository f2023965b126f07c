"""Event delivery throughput and send-to-resume latency: one command, one table, one JSON.

    .venv/bin/python bench/events.py [--quick] [--json PATH] [--store URL]

Two fresh databases of the chosen store (default: SQLite files in a temporary folder;
``--store postgresql://user@host/db`` creates and drops scratch databases on that server)
hold 1,000 and 100,000 (``--quick``: 20,000) runs suspended on ``wait_for: bench.reply``, each
with a key of its own. Then:

1. **latency**, for each database: a worker process runs while events are sent at a steady
   rate, each to one waiting run; send-to-resume latency = the ``at`` of the run's
   ``event.received`` history entry − the event's ``received_at`` (the instant ``Engine.send``
   stamped it). The runs used are replaced afterwards.
2. **throughput and limit**, in interleaved rounds (limit, small, large, then large, small,
   limit, …) so that a change in the machine's load affects each figure alike:

   - a *limit* round: minimal durable transactions back to back on a third database, for a
     fixed time (as in ``timers.py``): the physical limit delivery is compared with;
   - a *delivery* round per database, with no worker running: events sent back to back from
     one thread, each with ``Engine.send`` (one transaction: record the event, look up the
     waiting branch by index, move the event into the run's inbox, wake the run) and each
     to exactly one waiting run; then as many new runs are taken to their wait (untimed), so
     the number of waiting runs stays within one round of the nominal size.

   Each figure is the median of its rounds; ``ratio_to_limit`` is the median over rounds of
   (large delivery ÷ the limit of the same round), ``independence`` that of (large ÷ small).

Runs are inserted in bulk and taken to their wait by a worker in this process (timed and
reported as setup, never measured). The targets: delivery with many runs waiting at least
0.2 × the limit, and within ±20% of delivery with 1,000 runs waiting."""

from __future__ import annotations

import contextlib
import itertools
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from common import (
    LimitResult,
    Target,
    WorkerProcess,
    benchmark_parser,
    chosen_sizes,
    limit_rounds,
    median,
    millis,
    percentile,
    run_on_store,
    say,
    scratch_store,
)

from tarry import eventloop
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.language.model import Flow
from tarry.model import CREATED, EventState, HistoryEntry, NewRun, RunStatus
from tarry.store import runstore
from tarry.store.sqlstore import SqlStore

EVENT_TYPE = "bench.reply"
MANIFESTS = f"""\
events:
  {EVENT_TYPE}:
    correlate_on: [key]
"""
FLOW = f"""\
flow: bench-events
inputs:
  key: {{ type: string, required: true }}
steps:
  - reply:
      wait_for: {EVENT_TYPE}
      match: {{ key: "{{{{ key }}}}" }}
      timeout: 1d
  - done:
      set: {{ woke: true }}
"""
CONCURRENCY = 64
INSERT_CHUNK = 2_000
"""Runs inserted per transaction during setup."""
POLL_SECONDS = 0.05
DONE_TIMEOUT_SECONDS = 120.0
"""How long the worker may take to resume the runs of the latency phase."""


@dataclass(frozen=True)
class Sizes:
    """How much work each phase does."""

    waiting_small: int
    """Runs waiting in the first delivery measurement."""
    waiting_large: int
    """Runs waiting in the second delivery measurement."""
    rounds: int
    """Throughput rounds (each: a limit round, and a delivery round per number of waiting runs)."""
    round_events: int
    """Events sent back to back in one delivery round."""
    limit_seconds: float
    """Length of one limit round."""
    latency_events: int
    """Events sent at a steady rate in each latency measurement."""
    latency_rate: int
    """Events per second in the latency measurement."""

    @property
    def events(self) -> int:
        """Events sent back to back per number of waiting runs."""
        return self.rounds * self.round_events


FULL = Sizes(waiting_small=1_000, waiting_large=100_000, rounds=40, round_events=250,
             limit_seconds=0.25, latency_events=500, latency_rate=100)
QUICK = Sizes(waiting_small=1_000, waiting_large=20_000, rounds=8, round_events=250,
              limit_seconds=0.25, latency_events=200, latency_rate=100)


class EventBench:
    """An engine in the benchmark's own process, on the real clock: it creates runs, takes
    them to their wait, and sends the events."""

    def __init__(self, url: str, directory: Path) -> None:
        self.url = url
        settings = load_settings(directory, env={"TARRY_DATABASE": url})
        self.engine = Engine.from_settings(settings)
        self.flow: Flow = parse_flow(FLOW, "bench.yaml", actions=self.engine.actions.names(),
                                     manifests=self.engine.manifests)
        self.engine.store.save_flow(self.flow.digest, self.flow.name, self.flow.source)
        self._numbers = itertools.count()
        self.waiting: list[str] = []
        """Keys of the runs taken to their wait and not sent an event yet, oldest first."""
        self.run_of: dict[str, str] = {}

    def close(self) -> None:
        """Release the store."""
        self.engine.close()

    def add_waiting(self, count: int) -> float:
        """Insert ``count`` runs and take them to their wait; the seconds it took."""
        began = time.perf_counter()
        keys = [f"key-{next(self._numbers)}" for _ in range(count)]
        for start in range(0, count, INSERT_CHUNK):
            self._insert(keys[start:start + INSERT_CHUNK])
        eventloop.run(self._run_due())
        self.waiting += keys
        return time.perf_counter() - began

    def _insert(self, keys: Sequence[str]) -> None:
        store = self.engine.store
        assert isinstance(store, SqlStore)
        now = self.engine.clock.now()
        runs = [NewRun(id=f"run-{key}", flow=self.flow.name, flow_digest=self.flow.digest,
                       status=RunStatus.PENDING, inputs={"key": key}, target=None,
                       created_at=now, due_at=now) for key in keys]
        with store._transaction(write=True) as tx:  # bulk setup: one transaction per chunk
            runstore.insert_runs(tx, [(run, [HistoryEntry(now, CREATED)]) for run in runs])
        self.run_of.update((key, f"run-{key}") for key in keys)

    async def _run_due(self) -> None:
        await self.engine.worker(concurrency=CONCURRENCY, name="bench-setup").run_once()

    def take_waiting(self, count: int) -> list[str]:
        """The keys of ``count`` waiting runs, which the caller will send events to."""
        if count > len(self.waiting):
            raise ValueError(f"only {len(self.waiting)} runs wait, {count} asked for")
        taken, self.waiting = self.waiting[:count], self.waiting[count:]
        return taken

    def send(self, key: str) -> tuple[datetime, float]:
        """Send the event for ``key``'s run; its ``received_at`` and the seconds the send took.
        ``RuntimeError`` unless it was delivered to exactly that run."""
        began = time.perf_counter()
        record = self.engine.send(EVENT_TYPE, {"key": key}, id=f"event-{key}")
        took = time.perf_counter() - began
        if record.state is not EventState.DELIVERED or record.runs != (self.run_of[key],):
            raise RuntimeError(f"event for {key} was {record.state} to {record.runs}")
        return record.received_at, took

    def received_at(self, key: str) -> datetime:
        """When the run of ``key`` took its event in (its ``event.received`` history entry)."""
        run_id = self.run_of[key]
        found = [entry.at for entry in self.engine.store.history(run_id)
                 if entry.kind == "event.received"]
        if len(found) != 1:
            raise RuntimeError(f"run {run_id} received {len(found)} events")
        return found[0]

    def wait_until_done(self, keys: Sequence[str]) -> None:
        """Return when the runs of ``keys`` succeeded; ``TimeoutError`` after a while."""
        deadline = time.monotonic() + DONE_TIMEOUT_SECONDS
        pending = list(keys)
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(pending)} runs did not resume")
            pending = [key for key in pending if self.engine.store.get_run(
                self.run_of[key]).status is not RunStatus.SUCCEEDED]
            if pending:
                time.sleep(POLL_SECONDS)


@contextlib.contextmanager
def event_bench(url: str, directory: Path) -> Iterator[EventBench]:
    """An :class:`EventBench` over ``url``, closed afterwards."""
    bench = EventBench(url, directory)
    try:
        yield bench
    finally:
        bench.close()


# -- phases ----------------------------------------------------------------------------------


def measure_latency(bench: EventBench, directory: Path, sizes: Sizes) -> dict[str, Any]:
    """Send events at a steady rate with a worker process running; send-to-resume latency."""
    keys = bench.take_waiting(sizes.latency_events)
    sent: dict[str, datetime] = {}
    with WorkerProcess(bench.url, directory, concurrency=CONCURRENCY):
        began = time.monotonic()
        for index, key in enumerate(keys):
            time.sleep(max(began + index / sizes.latency_rate - time.monotonic(), 0))
            sent[key] = bench.send(key)[0]
        bench.wait_until_done(keys)
    latency = [millis(bench.received_at(key) - sent[key]) for key in keys]
    return {"events": len(keys), "rate_per_second": sizes.latency_rate,
            "ms": {"p50": percentile(latency, 50), "p99": percentile(latency, 99),
                   "max": max(latency), "min": min(latency)}}


class DeliveryRounds:
    """Delivery rounds on one bench: each sends events back to back, each to one waiting run,
    then tops the waiting runs up to their nominal number again (untimed)."""

    def __init__(self, bench: EventBench, waiting: int, count: int) -> None:
        self.bench = bench
        self.waiting = waiting
        self.count = count
        self.per_send: list[float] = []
        """Seconds of every send so far."""
        self.top_up_seconds = 0.0

    def __call__(self) -> float:
        """One round; its events per second."""
        keys = self.bench.take_waiting(self.count)
        took = [self.bench.send(key)[1] for key in keys]
        self.per_send += took
        self.top_up_seconds += self.bench.add_waiting(self.waiting - len(self.bench.waiting))
        return len(took) / sum(took)

    def document(self, rates: Sequence[float]) -> dict[str, Any]:
        """The figures of these rounds, whose rates were ``rates``."""
        return {"events": len(self.per_send), "events_per_second": median(rates),
                "mean_events_per_second": len(self.per_send) / sum(self.per_send),
                "rounds": list(rates),
                "send_ms": {"p50": percentile(self.per_send, 50) * 1000,
                            "p99": percentile(self.per_send, 99) * 1000},
                "top_up_seconds": self.top_up_seconds}


def interleave(rounds: Sequence[Callable[[], float]], times: int) -> list[list[float]]:
    """Call each of ``rounds`` ``times`` times, alternating the order (ABC CBA ABC …) so that
    a change in the machine's load affects each alike; each one's results, in order."""
    results: list[list[float]] = [[] for _ in rounds]
    for number in range(times):
        order = range(len(rounds)) if number % 2 == 0 else reversed(range(len(rounds)))
        for index in order:
            results[index].append(rounds[index]())
    return results


def run_throughput(base: str, benches: Mapping[str, tuple[EventBench, int]],
                   sizes: Sizes) -> dict[str, Any]:
    """The limit and the delivery rate of each bench, measured in interleaved rounds."""
    say(f"throughput: {sizes.rounds} rounds of {sizes.limit_seconds}s of limit and "
        f"{sizes.round_events} events per number of waiting runs")
    deliveries = {name: DeliveryRounds(bench, waiting, sizes.round_events)
                  for name, (bench, waiting) in benches.items()}
    with scratch_store(base, "eventslimit") as url, limit_rounds(url) as limit_round:
        limit, *rates = interleave([lambda: limit_round(sizes.limit_seconds),
                                    *deliveries.values()], sizes.rounds)
    figures = {name: rounds.document(rate) for (name, rounds), rate
               in zip(deliveries.items(), rates, strict=True)}
    small, large = rates
    return {"limit": LimitResult(tuple(limit)).document(), "throughput": figures,
            "ratio_to_limit": median([d / t for d, t in zip(large, limit, strict=True)]),
            "independence": median([b / a for a, b in zip(small, large, strict=True)])}


def setup_waiting(bench: EventBench, waiting: int) -> dict[str, Any]:
    """Take ``waiting`` runs to their wait; how long that took."""
    say(f"waiting {waiting:,}: setting up")
    seconds = bench.add_waiting(waiting)
    return {"waiting_runs": waiting, "setup_seconds": seconds,
            "setup_runs_per_second": waiting / seconds}


def run_latency(bench: EventBench, directory: Path, waiting: int,
                sizes: Sizes) -> dict[str, Any]:
    """Send-to-resume latency with ``waiting`` runs waiting; the runs used are replaced."""
    say(f"waiting {waiting:,}: {sizes.latency_events} events at {sizes.latency_rate}/s with "
        "a worker running")
    latency = measure_latency(bench, directory, sizes)
    bench.add_waiting(waiting - len(bench.waiting))
    return latency


# -- report ----------------------------------------------------------------------------------


def targets(results: Mapping[str, Any]) -> list[Target]:
    """The goals: delivery at least 0.2 × the limit with many runs waiting, and within ±20%
    of delivery with few runs waiting."""
    return [
        Target("delivery ÷ limit", results["ratio_to_limit"], low=0.2),
        Target("delivery large ÷ small waiting", results["independence"], low=0.8, high=1.2),
    ]


def table_rows(results: Mapping[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """The table: one row per figure, the target (and verdict) beside those that have one."""
    verdict = {goal.name: f"{goal.bounds}  {'PASS' if goal.passed else 'FAIL'}"
               for goal in goals}
    found: list[tuple[str, str, str]] = [
        ("limit: durable tx/s (median of rounds)", f"{results['limit']['per_second']:,.0f}",
         "")]
    for phase in (results["small"], results["large"]):
        waiting, rate = f"{phase['waiting_runs']:,}", phase["throughput"]
        late = phase["latency"]["ms"]
        found += [
            (f"delivery: events/s ({waiting} waiting)", f"{rate['events_per_second']:,.0f}", ""),
            (f"send: p50 / p99 ms ({waiting} waiting)",
             f"{rate['send_ms']['p50']:.2f} / {rate['send_ms']['p99']:.2f}", ""),
            (f"send-to-resume: p50 / p99 / max ms ({waiting} waiting)",
             f"{late['p50']:.0f} / {late['p99']:.0f} / {late['max']:.0f}", ""),
        ]
    found += [
        ("delivery ÷ limit", f"{results['ratio_to_limit']:.2f}", verdict["delivery ÷ limit"]),
        ("delivery large ÷ small waiting", f"{results['independence']:.2f}",
         verdict["delivery large ÷ small waiting"]),
    ]
    return found


def measure(base: str, directory: Path, sizes: Sizes) -> dict[str, Any]:
    """Run every phase against ``base``; the figures by phase."""
    (directory / "events.yaml").write_text(MANIFESTS, encoding="utf-8")
    sized = {"small": sizes.waiting_small, "large": sizes.waiting_large}
    with contextlib.ExitStack() as stack:
        benches: dict[str, tuple[EventBench, int]] = {}
        for name, waiting in sized.items():
            url = stack.enter_context(scratch_store(base, f"events{waiting}"))
            benches[name] = (stack.enter_context(event_bench(url, directory)), waiting)
        phases = {name: setup_waiting(bench, waiting) for name, (bench, waiting)
                  in benches.items()}
        for name, (bench, waiting) in benches.items():
            phases[name]["latency"] = run_latency(bench, directory, waiting, sizes)
        throughput = run_throughput(base, benches, sizes)
    for name, figures in throughput.pop("throughput").items():
        phases[name]["throughput"] = figures
    return {**phases, **throughput}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = benchmark_parser("events", __doc__, FULL).parse_args(argv)
    return run_on_store("events", args, chosen_sizes(args, FULL, QUICK), measure=measure,
                        targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

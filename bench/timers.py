"""Timer throughput and precision, and the cost of suspension: one command, one table, one JSON.

    .venv/bin/python bench/timers.py [--quick] [--json PATH] [--store URL]

Phases, each on a fresh database of the chosen store (default: SQLite files in a temporary
folder; ``--store postgresql://user@host/db`` creates and drops scratch databases on that
server):

1. **limit** — minimal durable transactions per second on this machine and store (update one
   run row, insert one history row, commit), the physical limit the others are compared with.
2. **burst** — N runs of ``wait: {for: 2s}`` then ``set``, all due at the same instant; a worker
   process (concurrency 64) wakes them: wakes/s = N ÷ (last wake − due).
3. **steady** — runs due at a steady rate (``wait: {until: "{{ due }}"}``, each at its own
   instant); lateness = wake − due, p50/p99/max.
4. **rss** — peak RSS of an idle worker process with few and with many runs waiting a day, and
   the storage one waiting run costs.

Runs are created and taken up to their wait in this process, on a virtual clock, before the
measured worker starts (that setup is timed and reported, not measured): so the worker only
wakes timers. A run's wake instant is the ``at`` of its ``step.completed`` history entry for
the wait step.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from common import (
    Target,
    WorkerProcess,
    benchmark_parser,
    chosen_sizes,
    iso,
    measure_limit,
    millis,
    percentile,
    run_on_store,
    say,
    scratch_store,
    store_size_bytes,
    wall_now,
)

from tarry.clock import VirtualClock
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.model import RunStatus

BURST_WAIT = timedelta(seconds=2)
BURST_FLOW = """\
flow: bench-burst
steps:
  - pause:
      wait: { for: 2s }
  - done:
      set: { woke: true }
"""
STEADY_FLOW = """\
flow: bench-steady
inputs:
  due: { type: instant, required: true }
steps:
  - pause:
      wait: { until: "{{ due }}" }
  - done:
      set: { woke: true }
"""
IDLE_FLOW = """\
flow: bench-idle
steps:
  - pause:
      wait: { for: 1d }
  - done:
      set: { woke: true }
"""
WAIT_STEP = "pause"
CONCURRENCY = 64
SPAWN_MARGIN = timedelta(seconds=1.5)
"""Time allowed for the worker process to start before the first run is due."""
SETUP_SAFETY = 1.5
"""Factor on the estimated setup time when choosing the first due instant."""
POLL_SECONDS = 0.1
DONE_TIMEOUT = timedelta(seconds=120)
"""How long past the last due instant the worker may take before the phase gives up."""

@dataclass(frozen=True)
class Sizes:
    """How much work each phase does."""

    burst: int
    """Runs in the burst."""
    steady_rate: int
    """Runs due per second in the steady phase."""
    steady_seconds: float
    """How long the steady phase lasts."""
    rss_small: int
    """Waiting runs in the first memory measurement."""
    rss_large: int
    """Waiting runs in the second memory measurement."""
    idle_seconds: float
    """How long the idle worker runs before its peak RSS is read."""
    limit_seconds: float
    """Length of one round of the limit measurement."""
    limit_rounds: int
    """Rounds of the limit measurement (the median is reported)."""


FULL = Sizes(burst=10_000, steady_rate=500, steady_seconds=10.0, rss_small=1_000,
             rss_large=100_000, idle_seconds=3.0, limit_seconds=2.5, limit_rounds=3)
QUICK = Sizes(burst=2_000, steady_rate=500, steady_seconds=4.0, rss_small=1_000,
              rss_large=20_000, idle_seconds=2.0, limit_seconds=0.8, limit_rounds=3)


@dataclass(frozen=True)
class SetupRates:
    """How fast this machine creates runs and takes them to their wait (for planning)."""

    create_per_second: float
    prestart_per_second: float

    def seconds_for(self, runs: int) -> float:
        """Estimated setup time of ``runs`` runs."""
        return runs / self.create_per_second + runs / self.prestart_per_second


class BenchEngine:
    """An engine in the benchmark's own process, on a virtual clock.

    It creates runs and takes them up to their wait (where they suspend) without the measured
    worker. The virtual clock starts a minute in the past so that the instant the runs are
    taken to their wait can be chosen after they were created.
    """

    def __init__(self, url: str, directory: Path) -> None:
        self.clock = VirtualClock(wall_now() - timedelta(minutes=1))
        settings = load_settings(directory, env={"TARRY_DATABASE": url})
        self.engine = Engine.from_settings(settings, clock=self.clock)

    def close(self) -> None:
        """Release the store."""
        self.engine.close()

    def start(self, source: str, inputs: Sequence[Mapping[str, Any]]) -> tuple[list[str], float]:
        """Create one run of the flow ``source`` per input mapping: their ids and the seconds
        it took."""
        flow = parse_flow(source, "bench.yaml", actions=self.engine.actions.names())
        began = time.perf_counter()
        ids = [self.engine.start(flow, each).id for each in inputs]
        return ids, time.perf_counter() - began

    def prestart(self, at: datetime) -> float:
        """Execute every pending run at virtual instant ``at`` until it suspends; seconds."""
        self.clock.set(max(at, self.clock.now()))
        began = time.perf_counter()
        asyncio.run(self._run_due())
        return time.perf_counter() - began

    async def _run_due(self) -> None:
        await self.engine.worker(concurrency=CONCURRENCY, name="bench-setup").run_once()

    def wait_until_done(self, deadline: datetime) -> None:
        """Return when no run is due any more (every run ended); ``TimeoutError`` after
        ``deadline``."""
        while self.engine.store.next_due_at() is not None:
            if wall_now() > deadline:
                raise TimeoutError(f"runs still due at {iso(deadline)}")
            time.sleep(POLL_SECONDS)

    def wake_instants(self, run_ids: Sequence[str]) -> dict[str, datetime]:
        """When each run woke: the ``at`` of its ``step.completed`` entry for the wait step."""
        store = self.engine.store
        wakes: dict[str, datetime] = {}
        for run_id in run_ids:
            found = [entry.at for entry in store.history(run_id)
                     if entry.kind == "step.completed" and entry.step == WAIT_STEP]
            if not found:
                raise RuntimeError(f"run {run_id} never woke: {store.get_run(run_id)}")
            wakes[run_id] = found[0]
        return wakes

    def last_commit(self, flow: str, runs: int) -> datetime:
        """The latest ``updated_at`` of the succeeded runs of ``flow`` (all must have)."""
        done = self.engine.store.list_runs(status=RunStatus.SUCCEEDED, flow=flow,
                                           limit=runs + 1)
        if len(done) != runs:
            raise RuntimeError(f"{len(done)} of {runs} runs of {flow} succeeded")
        return max(record.updated_at for record in done)


@contextmanager
def bench_engine(url: str, directory: Path) -> Iterator[BenchEngine]:
    """A :class:`BenchEngine` over ``url``, closed afterwards."""
    bench = BenchEngine(url, directory)
    try:
        yield bench
    finally:
        bench.close()


# -- phases ----------------------------------------------------------------------------------


def run_limit(base: str, sizes: Sizes) -> dict[str, Any]:
    """Phase 1: the physical limit of the store on this machine."""
    say(f"limit: {sizes.limit_rounds} rounds of {sizes.limit_seconds}s")
    with scratch_store(base, "timerslimit") as url:
        return measure_limit(url, seconds=sizes.limit_seconds,
                             rounds=sizes.limit_rounds).document()


def run_burst(base: str, directory: Path, runs: int) -> tuple[dict[str, Any], SetupRates]:
    """Phase 2: ``runs`` timers due at one instant; how fast the worker wakes them all."""
    say(f"burst: {runs} runs due at the same instant")
    with scratch_store(base, "timersburst") as url, bench_engine(url, directory) as bench:
        ids, create_s = bench.start(BURST_FLOW, [{}] * runs)
        due = wall_now() + timedelta(seconds=create_s * SETUP_SAFETY) + SPAWN_MARGIN
        prestart_s = bench.prestart(due - BURST_WAIT)
        with WorkerProcess(url, directory, concurrency=CONCURRENCY) as worker:
            ready = wall_now()
            bench.wait_until_done(due + DONE_TIMEOUT)
            rss = worker.peak_rss_kib()
        wakes = sorted(bench.wake_instants(ids).values())
        committed = bench.last_commit("bench-burst", runs)
    span = wakes[-1] - due
    rates = SetupRates(runs / create_s, runs / prestart_s)
    return {
        "runs": runs,
        "due": iso(due),
        "wakes_per_second": runs / max(span.total_seconds(), 0.001),
        "span_ms": millis(span),
        "first_wake_late_ms": millis(wakes[0] - due),
        "last_commit_late_ms": millis(committed - due),
        "setup_slack_ms": millis(due - ready),
        "worker_peak_rss_kib": rss,
        "create_per_second": rates.create_per_second,
        "prestart_per_second": rates.prestart_per_second,
    }, rates


def run_steady(base: str, directory: Path, sizes: Sizes, rates: SetupRates) -> dict[str, Any]:
    """Phase 3: runs due at a steady rate, each at its own instant; how late each wakes."""
    runs = round(sizes.steady_rate * sizes.steady_seconds)
    say(f"steady: {sizes.steady_rate} due per second for {sizes.steady_seconds}s ({runs} runs)")
    lead = timedelta(seconds=rates.seconds_for(runs) * SETUP_SAFETY) + SPAWN_MARGIN
    first = wall_now() + lead
    dues = [first + timedelta(seconds=index / sizes.steady_rate) for index in range(runs)]
    with scratch_store(base, "timerssteady") as url, bench_engine(url, directory) as bench:
        ids, create_s = bench.start(STEADY_FLOW, [{"due": iso(due)} for due in dues])
        prestart_s = bench.prestart(min(wall_now(), first - timedelta(milliseconds=1)))
        with WorkerProcess(url, directory, concurrency=CONCURRENCY) as worker:
            ready = wall_now()
            bench.wait_until_done(dues[-1] + DONE_TIMEOUT)
            rss = worker.peak_rss_kib()
        wakes = bench.wake_instants(ids)
    due_of = {run_id: datetime.fromisoformat(iso(due)) for run_id, due in zip(ids, dues,
                                                                             strict=True)}
    lateness = [millis(wakes[run_id] - due_of[run_id]) for run_id in ids]
    return {
        "rate_per_second": sizes.steady_rate,
        "seconds": sizes.steady_seconds,
        "runs": runs,
        "lateness_ms": {"p50": percentile(lateness, 50), "p99": percentile(lateness, 99),
                        "max": max(lateness), "min": min(lateness)},
        "setup_slack_ms": millis(first - ready),
        "worker_peak_rss_kib": rss,
        "create_per_second": runs / create_s,
        "prestart_per_second": runs / prestart_s,
    }


def run_rss(base: str, directory: Path, sizes: Sizes) -> dict[str, Any]:
    """Phase 4: an idle worker's peak RSS with few and with many runs waiting a day."""
    points: list[dict[str, Any]] = []
    with scratch_store(base, "timersrss") as url, bench_engine(url, directory) as bench:
        for waiting in (sizes.rss_small, sizes.rss_large):
            say(f"rss: {waiting} runs waiting a day, worker idle for {sizes.idle_seconds}s")
            created = points[-1]["waiting_runs"] if points else 0
            bench.start(IDLE_FLOW, [{}] * (waiting - created))
            bench.prestart(wall_now())
            size = store_size_bytes(url)
            with WorkerProcess(url, directory, concurrency=CONCURRENCY) as worker:
                time.sleep(sizes.idle_seconds)
                rss = worker.peak_rss_kib()
            points.append({"waiting_runs": waiting, "peak_rss_kib": rss, "store_bytes": size})
    small, large = points
    return {
        "points": points,
        "ratio": large["peak_rss_kib"] / small["peak_rss_kib"],
        "store_bytes_per_waiting_run": ((large["store_bytes"] - small["store_bytes"])
                                        / (large["waiting_runs"] - small["waiting_runs"])),
    }


# -- report ----------------------------------------------------------------------------------


def targets(results: Mapping[str, Any]) -> list[Target]:
    """The goals: wakes/s at least 0.6 × the limit (every commit durable), steady p99 within
    30 ms at 500 due per second, idle worker memory flat within 10%."""
    return [
        Target("burst wakes/s ÷ limit", results["burst"]["ratio_to_limit"], low=0.6),
        Target("steady lateness p99 (ms)", results["steady"]["lateness_ms"]["p99"],
               high=30.0),
        Target("idle worker RSS large ÷ small", results["rss"]["ratio"], low=0.9, high=1.1),
    ]


def table_rows(results: Mapping[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """The table: one row per figure, the target (and verdict) beside those that have one."""
    limit, burst, steady, rss = (results[key] for key in ("limit", "burst", "steady", "rss"))
    late = steady["lateness_ms"]
    small, large = rss["points"]
    verdict = {goal.name: f"{goal.bounds}  {'PASS' if goal.passed else 'FAIL'}"
               for goal in goals}
    return [
        ("limit: durable tx/s (median)", f"{limit['per_second']:,.0f}", ""),
        (f"burst: wakes/s ({burst['runs']:,} runs)", f"{burst['wakes_per_second']:,.0f}", ""),
        ("burst: wakes/s ÷ limit", f"{burst['ratio_to_limit']:.2f}",
         verdict["burst wakes/s ÷ limit"]),
        ("burst: first wake late (ms)", f"{burst['first_wake_late_ms']:,.0f}", ""),
        (f"steady: lateness p50 ({steady['rate_per_second']}/s)", f"{late['p50']:.1f} ms", ""),
        ("steady: lateness p99", f"{late['p99']:.1f} ms", verdict["steady lateness p99 (ms)"]),
        ("steady: lateness max", f"{late['max']:.1f} ms", ""),
        (f"rss: idle worker, {small['waiting_runs']:,} waiting",
         f"{small['peak_rss_kib'] / 1024:.1f} MiB", ""),
        (f"rss: idle worker, {large['waiting_runs']:,} waiting",
         f"{large['peak_rss_kib'] / 1024:.1f} MiB", ""),
        ("rss: large ÷ small", f"{rss['ratio']:.3f}", verdict["idle worker RSS large ÷ small"]),
        ("storage per waiting run", f"{rss['store_bytes_per_waiting_run']:,.0f} B", ""),
    ]


def measure(base: str, directory: Path, sizes: Sizes) -> dict[str, Any]:
    """Run every phase against ``base``; the figures by phase."""
    limit = run_limit(base, sizes)
    burst, rates = run_burst(base, directory, sizes.burst)
    burst["ratio_to_limit"] = burst["wakes_per_second"] / limit["per_second"]
    return {"limit": limit, "burst": burst, "steady": run_steady(base, directory, sizes, rates),
            "rss": run_rss(base, directory, sizes)}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = benchmark_parser("timers", __doc__, FULL).parse_args(argv)
    return run_on_store("timers", args, chosen_sizes(args, FULL, QUICK), measure=measure,
                        targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

"""Bounded stores: retention keeps a store's size flat, and purging does not make timers late.

    .venv/bin/python bench/retention.py [--quick] [--json PATH] [--store URL]

Two phases, each on a fresh database of the chosen store (default: SQLite files in a
temporary folder; ``--store postgresql://user@host/db`` creates and drops scratch databases on
that server):

1. **size** — weeks of a steady stream, simulated on a virtual clock in this process: each
   day ``runs_per_day`` runs start and end and ``events_per_day`` events arrive unmatched, then
   what expired is purged (``[retention] runs`` and ``events`` of ``retain_days``; on
   PostgreSQL, then vacuumed, as autovacuum would in a real day). The store's size is read
   every day; once the first runs expire it should stay flat: the figure is the
   last day's size ÷ the size the day retention began deleting.
2. **lateness** — a worker process wakes timers due at ``steady_rate`` per second for
   ``steady_seconds``, twice: once with ``backlog`` runs that ended long ago and retention off,
   once with the same backlog and retention on, so the worker purges it (200 runs a
   transaction) while the timers are due. The figure is the difference of the two lateness
   p99s.

The default sizes take about a minute; the full ones some minutes::

    .venv/bin/python bench/retention.py --runs-per-day 5000 --events-per-day 2000 \\
        --days 42 --retain-days 7 --backlog 100000 --steady-seconds 10
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from common import (
    Target,
    WorkerProcess,
    benchmark_parser,
    chosen_sizes,
    iso,
    millis,
    percentile,
    run_on_store,
    say,
    scratch_store,
    store_kind,
    store_size_bytes,
    wall_now,
)
from timers import CONCURRENCY, DONE_TIMEOUT, SPAWN_MARGIN, STEADY_FLOW, bench_engine

from tarry.clock import VirtualClock
from tarry.config import Retention, load_settings
from tarry.engine import retention
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow

QUICK_FLOW = """\
flow: bench-quick
steps:
  - a: { set: { x: 1 } }
  - b: { set: { y: 2 } }
"""
EVENTS = """\
events:
  bench.note:
    correlate_on: [key]
"""
SIMULATED_START = datetime(2026, 1, 1, tzinfo=UTC)
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
SETUP = timedelta(seconds=3)
"""Time allowed to create the timers and take them to their wait before the first is due
(``setup_slack_ms`` says how much was left)."""


@dataclass(frozen=True)
class Sizes:
    """How much work each phase does."""

    runs_per_day: int
    """Runs that start and end each simulated day."""
    events_per_day: int
    """Unmatched events received each simulated day."""
    days: int
    """Simulated days."""
    retain_days: int
    """``[retention] runs`` and ``events``, in days."""
    backlog: int
    """Runs that ended long ago, purged while the timers are due."""
    steady_rate: int
    """Timers due per second in the lateness phase."""
    steady_seconds: float
    """How long timers are due in the lateness phase."""


DEFAULT = Sizes(runs_per_day=300, events_per_day=100, days=21, retain_days=5,
                backlog=10_000, steady_rate=200, steady_seconds=4.0)
"""About a minute on SQLite; the full sizes are given on the command line (module doc)."""


@contextmanager
def virtual_engine(url: str, directory: Path, start: datetime) -> Iterator[Engine]:
    """An engine over ``url`` in this process, on a virtual clock set to ``start``."""
    settings = load_settings(directory, env={"TARRY_DATABASE": url})
    engine = Engine.from_settings(settings, clock=VirtualClock(start))
    try:
        yield engine
    finally:
        engine.close()


def run_all(engine: Engine) -> None:
    """Execute everything due on ``engine``'s clock until nothing is."""
    asyncio.run(engine.worker(concurrency=CONCURRENCY, name="bench").run_once())


# -- phase 1: size ---------------------------------------------------------------------------


def run_size(base: str, directory: Path, sizes: Sizes) -> dict[str, Any]:
    """Phase 1: the store's size each simulated day under a steady stream, retention on."""
    say(f"size: {sizes.days} days of {sizes.runs_per_day} runs and {sizes.events_per_day} "
        f"events a day, kept {sizes.retain_days} days")
    (directory / "events.yaml").write_text(EVENTS, encoding="utf-8")
    keep = Retention(runs=timedelta(days=sizes.retain_days),
                     events=timedelta(days=sizes.retain_days))
    days: list[dict[str, Any]] = []
    with scratch_store(base, "retentionsize") as url, \
            virtual_engine(url, directory, SIMULATED_START) as engine:
        clock = engine.clock
        assert isinstance(clock, VirtualClock)
        flow = parse_flow(QUICK_FLOW, "bench.yaml", actions=engine.actions.names())
        for day in range(sizes.days):
            engine.start_many(flow, [None] * sizes.runs_per_day)
            run_all(engine)
            engine.send_many("bench.note", [{"key": f"{day}-{index}"}
                                            for index in range(sizes.events_per_day)])
            now = clock.now()
            purged = retention.purge(engine.store, retention.cutoffs(keep, now), now)
            vacuum(url)
            days.append({"day": day + 1, "store_bytes": store_size_bytes(url),
                         "runs": engine.store.count_runs(), "purged_runs": purged.runs,
                         "purged_events": purged.events})
            clock.advance(timedelta(days=1))
    first = next((d for d in days if d["purged_runs"]), days[-1])
    return {"days": days, "size_from_first_purge_bytes": first["store_bytes"],
            "size_last_day_bytes": days[-1]["store_bytes"],
            "ratio": days[-1]["store_bytes"] / first["store_bytes"],
            "runs_created": sizes.runs_per_day * sizes.days, "runs_kept": days[-1]["runs"]}


def vacuum(url: str) -> None:
    """On PostgreSQL, what autovacuum does many times in a real day (it wakes every minute)
    and never in the second a simulated day lasts: a plain ``VACUUM``, which makes the space
    of deleted rows reusable (without giving it back to the system). SQLite reuses the pages
    of deleted rows by itself."""
    if store_kind(url) == "postgresql":
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute("VACUUM")


# -- phase 2: lateness while purging ---------------------------------------------------------


def run_lateness(base: str, directory: Path, sizes: Sizes, *, purging: bool) -> dict[str, Any]:
    """Phase 2: timers due at a steady rate beside a backlog of expired runs; with
    ``purging``, the worker deletes the backlog meanwhile."""
    runs = round(sizes.steady_rate * sizes.steady_seconds)
    say(f"lateness: {runs} timers, {sizes.backlog} expired runs, purging {purging}")
    name = "retentionpurge" if purging else "retentionkeep"
    with scratch_store(base, name) as url:
        with virtual_engine(url, directory, LONG_AGO) as engine:  # the backlog, ended in 2020
            flow = parse_flow(QUICK_FLOW, "bench.yaml", actions=engine.actions.names())
            for start in range(0, sizes.backlog, 10_000):
                engine.start_many(flow, [None] * min(10_000, sizes.backlog - start))
            run_all(engine)
        with bench_engine(url, directory) as bench:
            first = wall_now() + SETUP + SPAWN_MARGIN
            dues = [first + timedelta(seconds=index / sizes.steady_rate)
                    for index in range(runs)]
            steady = parse_flow(STEADY_FLOW, "bench.yaml",
                                actions=bench.engine.actions.names())
            ids = [run.id for run in bench.engine.start_many(
                steady, [{"due": iso(due)} for due in dues])]
            bench.prestart(min(wall_now(), first - timedelta(milliseconds=1)))
            slack = first - wall_now()
            env = {"TARRY_RETENTION_RUNS": "30d"} if purging else {}
            with WorkerProcess(url, directory, concurrency=CONCURRENCY, env=env):
                bench.wait_until_done(dues[-1] + DONE_TIMEOUT)
                left = bench.engine.store.count_ended_runs(first)
            wakes = bench.wake_instants(ids)
    due_of = {run_id: datetime.fromisoformat(iso(due)) for run_id, due in zip(ids, dues,
                                                                             strict=True)}
    lateness = [millis(wakes[run_id] - due_of[run_id]) for run_id in ids]
    return {"purging": purging, "timers": runs, "backlog": sizes.backlog,
            "expired_left_after": left, "setup_slack_ms": millis(slack),
            "lateness_ms": {"p50": percentile(lateness, 50), "p99": percentile(lateness, 99),
                            "max": max(lateness)}}


# -- report ----------------------------------------------------------------------------------


def measure(base: str, directory: Path, sizes: Sizes) -> dict[str, Any]:
    """Both phases against ``base``."""
    return {"size": run_size(base, directory, sizes),
            "lateness": [run_lateness(base, directory, sizes, purging=purging)
                         for purging in (False, True)]}


def targets(results: Mapping[str, Any]) -> list[Target]:
    """The goals: the store's size flat within 10 % once retention deletes, and timer
    lateness p99 moved by at most 5 ms by purging."""
    keep, purge = results["lateness"]
    return [
        Target("size last day ÷ first purge", results["size"]["ratio"], high=1.1),
        Target("lateness p99 purging − not (ms)",
               purge["lateness_ms"]["p99"] - keep["lateness_ms"]["p99"], high=5.0),
    ]


def table_rows(results: Mapping[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """The table: one row per figure, the target (and verdict) beside those that have one."""
    size = results["size"]
    keep, purge = results["lateness"]
    verdict = {goal.name: f"{goal.bounds}  {'PASS' if goal.passed else 'FAIL'}"
               for goal in goals}
    return [
        ("size: runs created / kept", f"{size['runs_created']:,} / {size['runs_kept']:,}", ""),
        ("size: at first purge", f"{size['size_from_first_purge_bytes'] / 2**20:.1f} MiB", ""),
        ("size: last day", f"{size['size_last_day_bytes'] / 2**20:.1f} MiB", ""),
        ("size: last day ÷ first purge", f"{size['ratio']:.3f}",
         verdict["size last day ÷ first purge"]),
        ("lateness p99, retention off", f"{keep['lateness_ms']['p99']:.1f} ms", ""),
        (f"lateness p99, purging {purge['backlog']:,} runs",
         f"{purge['lateness_ms']['p99']:.1f} ms", verdict["lateness p99 purging − not (ms)"]),
        ("expired runs left when the timers ended", f"{purge['expired_left_after']:,}", ""),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = benchmark_parser("retention", __doc__, DEFAULT).parse_args(argv)
    return run_on_store("retention", args, chosen_sizes(args, DEFAULT, DEFAULT),
                        measure=measure, targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

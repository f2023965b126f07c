"""Fleet throughput on PostgreSQL: wakes per second with 1, 2 and 4 worker processes.

    .venv/bin/python bench/fleet.py [--quick] [--json PATH] [--store URL]

Phases, each on a scratch database of the PostgreSQL server at ``--store`` (default the local
server, ``postgresql://postgres@127.0.0.1:5432/postgres``; the user needs ``CREATEDB``):

1. **limit** — minimal durable transactions per second (update one run row, insert one
   history row, commit), as in ``timers.py``: the physical limit.
2. **fleet of N** (N = 1, 2, 4) — the burst of ``timers.py``: runs of ``wait: {for: 2s}`` then
   ``set``, all due at the same instant, taken to their wait in this process beforehand; then
   N worker processes (concurrency 64 each) wake them all. wakes/s = runs ÷ (last wake − due),
   and ÷ limit. From the history, every run must have succeeded exactly once and woken exactly
   once (no double execution). Each fleet size wakes ``repeat`` bursts, the sizes taking turns
   in alternating order (1 2 4, 4 2 1, …), and the median is reported: this machine is shared.

While each fleet works the benchmark watches it from outside: the CPU seconds its worker
processes and their PostgreSQL sessions used, how busy the machine was, and what the sessions
were doing, sampled from ``pg_stat_activity`` every 10 ms (``observe.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from common import (
    LOCAL_POSTGRES,
    POSTGRES_ONLY,
    Target,
    WorkerProcess,
    benchmark_parser,
    chosen_sizes,
    iso,
    machine,
    measure_limit,
    median,
    millis,
    publish,
    say,
    scratch_store,
    store_kind,
    wall_now,
)
from observe import ActivitySampler, CpuMeter, backend_pids
from timers import (
    BURST_FLOW,
    BURST_WAIT,
    CONCURRENCY,
    DONE_TIMEOUT,
    POLL_SECONDS,
    SETUP_SAFETY,
    SPAWN_MARGIN,
    WAIT_STEP,
    BenchEngine,
    bench_engine,
)

from tarry import eventloop
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.language.expressions import compile_template

FLEETS = (1, 2, 4)
"""Worker processes per fleet, by default; the first must be 1 (the baseline)."""
PRESTART_PER_CREATE = 0.5
"""A first guess of (taking runs to their wait) ÷ (creating them): measured 0.2–0.45 on
PostgreSQL, where each run is created in its own transaction and the waits are group-committed."""
SPEEDUP_GOAL = 1.5
"""Wakes/s with the largest fleet ÷ with one worker."""


@dataclass(frozen=True)
class Sizes:
    """How much work each phase does."""

    burst: int
    """Runs in each fleet's burst."""
    repeat: int
    """Rounds: each fleet size wakes this many bursts, and the median is reported."""
    limit_seconds: float
    """Length of one round of the limit measurement."""
    limit_rounds: int
    """Rounds of the limit measurement (the median is reported)."""


FULL = Sizes(burst=10_000, repeat=3, limit_seconds=2.5, limit_rounds=3)
QUICK = Sizes(burst=2_000, repeat=2, limit_seconds=0.8, limit_rounds=3)


# -- one fleet -------------------------------------------------------------------------------


@contextmanager
def worker_fleet(url: str, directory: Path, size: int) -> Iterator[list[WorkerProcess]]:
    """``size`` worker processes over ``url``, started one after the other (each ready before
    the next starts) and stopped with SIGTERM at the end."""
    with ExitStack() as stack:
        yield [stack.enter_context(WorkerProcess(url, directory, concurrency=CONCURRENCY))
               for _ in range(size)]


def execution_counts(url: str) -> dict[str, int]:
    """From the history: runs that succeeded other than once, or woke other than once."""
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT count(*) FILTER (WHERE succeeded <> 1), count(*) FILTER (WHERE woke <> 1), "
            "count(*) FROM (SELECT count(*) FILTER (WHERE kind = 'succeeded') AS succeeded, "
            "count(*) FILTER (WHERE kind = 'step.completed' AND step = %s) AS woke "
            "FROM history GROUP BY run_id) AS per_run", (WAIT_STEP,)).fetchone()
    assert row is not None
    return {"runs_not_succeeded_once": row[0], "runs_not_woken_once": row[1], "runs": row[2]}


@dataclass(frozen=True)
class Burst:
    """Runs taken to their wait, all due at ``due``, and what setting them up took."""

    ids: list[str]
    due: datetime
    create_seconds: float
    prestart_seconds: float

    def document(self) -> dict[str, float]:
        """The setup's timings as JSON."""
        return {"create_seconds": self.create_seconds,
                "prestart_seconds": self.prestart_seconds}


def prepare_burst(bench: BenchEngine, runs: int, workers: int,
                  prestart_estimate: float | None) -> Burst:
    """Create the runs and take them to their wait, due at an instant left far enough ahead
    for that and for ``workers`` processes to start.

    Taking the runs to their wait is estimated to take ``prestart_estimate`` seconds (measured
    in an earlier phase) or, at first, half as long as creating them.
    """
    ids, create_s = bench.start(BURST_FLOW, [{}] * runs)
    estimate = (create_s * PRESTART_PER_CREATE if prestart_estimate is None
                else prestart_estimate)
    due = wall_now() + timedelta(seconds=estimate * SETUP_SAFETY) + SPAWN_MARGIN * workers
    return Burst(ids, due, create_s, bench.prestart(due - BURST_WAIT))


def watch_until_done(bench: BenchEngine, url: str, workers: Sequence[WorkerProcess],
                     due: datetime, runs: int) -> dict[str, Any]:
    """Wait for the due instant, then watch the fleet until no run is due: the CPU its
    processes and their sessions used (also per wake), and ``pg_stat_activity``."""
    time.sleep(max((due - wall_now()).total_seconds(), 0.0))
    pids = [worker.pid for worker in workers]
    meter = CpuMeter.start(pids + backend_pids(url))
    sampler = ActivitySampler(url)
    sampler.start()
    try:
        bench.wait_until_done(due + DONE_TIMEOUT)
    finally:
        activity = sampler.finish()
    cpu = meter.stop({"workers": pids, "postgres_sessions": backend_pids(url)})
    cpu["ms_per_wake"] = {name: None if used is None else used * 1000 / runs
                          for name, used in cpu["cpu_seconds"].items()}
    return {"cpu": cpu, "pg_stat_activity": activity}


def run_fleet(base: str, directory: Path, runs: int, size: int,
              prestart_estimate: float | None) -> tuple[dict[str, Any], float]:
    """One fleet of ``size`` workers wakes a burst of ``runs`` runs due at the same instant;
    the figures, and the seconds taking the runs to their wait took."""
    say(f"fleet of {size}: {runs} runs due at the same instant")
    with scratch_store(base, f"fleet{size}") as url, bench_engine(url, directory) as bench:
        burst = prepare_burst(bench, runs, size, prestart_estimate)
        with worker_fleet(url, directory, size) as workers:
            ready = wall_now()
            observed = watch_until_done(bench, url, workers, burst.due, runs)
        wakes = sorted(bench.wake_instants(burst.ids).values())
        committed = bench.last_commit("bench-burst", runs)
        executions = execution_counts(url)
    span = wakes[-1] - burst.due
    return {
        "workers": size,
        "runs": runs,
        "due": iso(burst.due),
        "wakes_per_second": runs / max(span.total_seconds(), 0.001),
        "span_ms": millis(span),
        "first_wake_late_ms": millis(wakes[0] - burst.due),
        "last_commit_late_ms": millis(committed - burst.due),
        "setup_slack_ms": millis(burst.due - ready),
        "setup": burst.document(),
        "executions": executions,
        **observed,
    }, burst.prestart_seconds


# -- a profile of one worker ----------------------------------------------------------------

PROFILE_TOP = 15
"""Functions listed in the profile, by cumulative and by own time."""


async def work_until_done(engine: Engine) -> None:
    """Run a worker of ``engine`` until no run is due any more."""
    stop = asyncio.Event()
    working = asyncio.create_task(engine.worker(concurrency=CONCURRENCY).run(stop))
    while engine.store.next_due_at() is not None:
        await asyncio.sleep(POLL_SECONDS)
    stop.set()
    await working


def run_profile(base: str, directory: Path, runs: int,
                prestart_estimate: float | None) -> dict[str, Any]:
    """The burst once more, woken by one worker in this process under cProfile."""
    say(f"profile: {runs} runs woken by one worker in this process, under cProfile")
    profiler = cProfile.Profile()
    with scratch_store(base, "fleetprofile") as url, bench_engine(url, directory) as bench:
        due = prepare_burst(bench, runs, 1, prestart_estimate).due
        engine = Engine.from_settings(load_settings(directory, env={"TARRY_DATABASE": url}))
        try:
            compile_template("{{ 0 }}")  # the worker builds the parser at start: not a wake's
            time.sleep(max((due - wall_now()).total_seconds(), 0.0))
            began = time.perf_counter()
            profiler.runcall(eventloop.run, work_until_done(engine))
            seconds = time.perf_counter() - began
        finally:
            engine.close()
    return {"runs": runs, "seconds": seconds, **profile_summary(pstats.Stats(profiler))}


@dataclass(frozen=True)
class Profiled:
    """One function's times in a profile, as shares of the whole profiled time."""

    function: str
    own: float
    cumulative: float
    ours: bool
    """Whether it is tarry's own code (else the standard library's or a driver's)."""


def profile_summary(stats: pstats.Stats) -> dict[str, Any]:
    """Where the time went: tarry's functions by cumulative time (what each verb costs with
    everything it calls) and every function by its own time (where the CPU or the waiting
    actually is)."""
    raw = stats.stats  # type: ignore[attr-defined]
    total = max((entry[3] for entry in raw.values()), default=1.0)
    entries = [Profiled(_function_name(file, line, name), own / total, cumulative / total,
                        f"{os.sep}tarry{os.sep}" in file)
               for (file, line, name), (_, _, own, cumulative, _) in raw.items()]

    def top(chosen: Iterable[Profiled], key: str) -> list[dict[str, Any]]:
        ranked = sorted(chosen, key=lambda entry: getattr(entry, key), reverse=True)
        return [dataclasses.asdict(entry) for entry in ranked[:PROFILE_TOP]]

    return {"profiled_seconds": total,
            "tarry_by_cumulative": top((entry for entry in entries if entry.ours), "cumulative"),
            "by_own": top(entries, "own")}


def _function_name(file: str, line: int, name: str) -> str:
    """``package/module.py:line name`` (the last two parts of the path)."""
    return f"{'/'.join(Path(file).parts[-2:])}:{line} {name}"


# -- report ----------------------------------------------------------------------------------


def fleet_orders(sizes: Sequence[int], repeat: int) -> Iterator[Sequence[int]]:
    """The fleets of each round, in alternating order (1 2 4, 4 2 1, 1 2 4, …), so that a
    machine getting busier or quieter during the run favours no fleet size."""
    for number in range(repeat):
        yield sizes if number % 2 == 0 else list(reversed(sizes))


def summarize(size: int, rounds: Sequence[dict[str, Any]], limit: float) -> dict[str, Any]:
    """One fleet size over its rounds: the median of each figure, the best wake rate (others'
    work on the machine only ever slows a round down), the executions summed."""
    rate = median([each["wakes_per_second"] for each in rounds])
    per_wake = {name: _median_or_none([each["cpu"]["ms_per_wake"][name] for each in rounds])
                for name in rounds[0]["cpu"]["ms_per_wake"]}
    return {
        "workers": size,
        "runs": rounds[0]["runs"],
        "wakes_per_second": rate,
        "wakes_per_second_rounds": [each["wakes_per_second"] for each in rounds],
        "wakes_per_second_best": max(each["wakes_per_second"] for each in rounds),
        "ratio_to_limit": rate / limit,
        "cpu_ms_per_wake": per_wake,
        "machine_busy_fraction": _median_or_none(
            [each["cpu"]["machine_busy_fraction"] for each in rounds]),
        "other_cores": _median_or_none([each["cpu"]["other_cores"] for each in rounds]),
        "executions": {key: sum(each["executions"][key] for each in rounds)
                       for key in rounds[0]["executions"]},
        "rounds": list(rounds),
    }


def _median_or_none(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return median(known) if known else None


def measure(base: str, directory: Path, sizes: Sizes, *, fleet_sizes: Sequence[int],
            profile: bool) -> dict[str, Any]:
    """The limit, then the fleets, round after round (then, if asked, the profile of one
    worker); the figures."""
    say(f"limit: {sizes.limit_rounds} rounds of {sizes.limit_seconds}s")
    with scratch_store(base, "fleetlimit") as url:
        limit = measure_limit(url, seconds=sizes.limit_seconds,
                              rounds=sizes.limit_rounds).document()
    rounds: dict[int, list[dict[str, Any]]] = {size: [] for size in fleet_sizes}
    prestart_s: float | None = None
    for order in fleet_orders(fleet_sizes, sizes.repeat):
        for size in order:
            result, prestart_s = run_fleet(base, directory, sizes.burst, size, prestart_s)
            rounds[size].append(result)
    fleets = [summarize(size, rounds[size], limit["per_second"]) for size in fleet_sizes]
    for fleet in fleets:
        fleet["speedup"] = fleet["wakes_per_second"] / fleets[0]["wakes_per_second"]
        fleet["speedup_best"] = (fleet["wakes_per_second_best"]
                                 / fleets[0]["wakes_per_second_best"])
    results = {"limit": limit, "fleets": fleets}
    if profile:
        results["profile"] = run_profile(base, directory, sizes.burst, prestart_s)
    return results


def targets(results: Mapping[str, Any]) -> list[Target]:
    """The goals: the largest fleet wakes at least 1.5 times as many runs per second as one
    worker, and no run is executed twice."""
    fleets = results["fleets"]
    doubled = sum(fleet["executions"]["runs_not_succeeded_once"]
                  + fleet["executions"]["runs_not_woken_once"] for fleet in fleets)
    return [Target(f"wakes/s, {fleets[-1]['workers']} workers ÷ 1 worker", fleets[-1]["speedup"],
                   low=SPEEDUP_GOAL),
            Target("runs not executed exactly once", doubled, high=0)]


def table_rows(results: Mapping[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """The table: the limit, then per fleet its rate (median, and the range over rounds),
    ratio, speedup and CPU per wake."""
    verdict = {goal.name: f"{goal.bounds}  {'PASS' if goal.passed else 'FAIL'}"
               for goal in goals}
    rows = [("limit: durable tx/s (median)", f"{results['limit']['per_second']:,.0f}", "")]
    for fleet in results["fleets"]:
        size, per_wake = fleet["workers"], fleet["cpu_ms_per_wake"]
        busy, rates = fleet["machine_busy_fraction"], fleet["wakes_per_second_rounds"]
        spread = f"  ({min(rates):,.0f}–{max(rates):,.0f})" if len(rates) > 1 else ""
        rows += [
            (f"{size} worker(s): wakes/s ({fleet['runs']:,} runs, median of {len(rates)})",
             f"{fleet['wakes_per_second']:,.0f}{spread}", ""),
            (f"{size} worker(s): ÷ limit", f"{fleet['ratio_to_limit']:.2f}", ""),
            (f"{size} worker(s): ÷ 1 worker", f"{fleet['speedup']:.2f}",
             verdict.get(f"wakes/s, {size} workers ÷ 1 worker", "")),
            (f"{size} worker(s): ÷ 1 worker, best rounds", f"{fleet['speedup_best']:.2f}", ""),
            (f"{size} worker(s): CPU ms per wake, workers / PostgreSQL",
             f"{_number(per_wake['workers'])} / {_number(per_wake['postgres_sessions'])}", ""),
            (f"{size} worker(s): machine busy, of which cores not ours",
             f"{_percent(busy)}, {_number(fleet['other_cores'])}", ""),
        ]
    doubled = next(goal for goal in goals if goal.name == "runs not executed exactly once")
    rows.append(("runs not executed exactly once", f"{doubled.value:.0f}",
                 verdict[doubled.name]))
    return rows


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line; every size can be overridden (the smoke test uses tiny ones)."""
    parser = benchmark_parser("fleet", __doc__, FULL, default_store=LOCAL_POSTGRES,
                              store_help=POSTGRES_ONLY)
    parser.add_argument("--fleets", type=int, nargs="+", default=list(FLEETS), metavar="N",
                        help="worker processes per fleet, starting with 1 (default 1 2 4)")
    parser.add_argument("--profile", action="store_true",
                        help="also profile one worker (in this process) waking the burst")
    args = parser.parse_args(argv)
    if args.fleets[0] != 1 or min(args.fleets) < 1:
        parser.error("--fleets must start with 1 (the baseline) and name positive sizes")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = parse_args(argv)
    if store_kind(args.store) != "postgresql":
        raise SystemExit("bench/fleet.py measures a fleet on PostgreSQL: --store postgresql://…")
    sizes = chosen_sizes(args, FULL, QUICK)
    began = time.perf_counter()
    platform_facts = machine(args.store)  # before the work: the load average says how busy
    with tempfile.TemporaryDirectory(prefix="tarry-bench-") as folder:
        results = measure(args.store, Path(folder), sizes, fleet_sizes=args.fleets,
                          profile=args.profile)
    goals = targets(results)
    return publish("fleet", args, sizes={**dataclasses.asdict(sizes), "fleets": args.fleets},
                   facts=platform_facts, results=results, goals=goals,
                   rows=table_rows(results, goals), began=began)


if __name__ == "__main__":
    sys.exit(main())

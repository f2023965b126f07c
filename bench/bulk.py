"""A bulk cancel of many waiting runs while timers are due: how long its transactions hold
the store, and how late the timers wake meanwhile. One command, one table, one JSON.

    nice -n 10 .venv/bin/python bench/bulk.py [--quick] [--store URL] [--json PATH]
                                              [--runs N] [--timer-rate N] [--timer-seconds S]

The issue's full size is ``--runs 100000`` (the default: about a minute on SQLite here, three
on PostgreSQL, setup included); ``--quick`` cancels 5,000. On a fresh database of the chosen
store (default: a SQLite file in a temporary folder; ``--store postgresql://user@host/db``
creates and drops a scratch database on that server):

1. **limit** — minimal durable transactions per second on this machine and store (the
   physical limit, as the other benchmarks measure it).
2. **setup** — ``--runs`` runs of a flow that waits a day are created and taken to their wait
   in this process (on a virtual clock; timed, not measured); then runs that wait until their
   own instant, ``--timer-rate`` due per second for ``--timer-seconds``, from a moment a few
   seconds ahead.
3. **bulk cancel** — a worker process (concurrency 64) starts and wakes the timers; when the
   first timer is due, this process cancels every waiting run of the idle flow as one batch
   (``Engine.batch`` then ``Engine.work_batch`` until done: pages of 200 runs, one transaction
   each, resting between them as ``tarry cancel`` and ``tarry serve`` do), timing each
   page's transaction as the caller sees it (the lock is held at most that long).
4. **lateness** — wake − due of every timer (its wait step's ``step.completed`` instant), and
   of those due while the batch worked.

Targets: no transaction of the batch longer than 1 s (it never holds the store for seconds),
and the timers due during the batch wake with a lateness p99 within 30 ms (the timers
benchmark's steady target).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
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
    wall_now,
)
from timers import CONCURRENCY, DONE_TIMEOUT, IDLE_FLOW, STEADY_FLOW, BenchEngine, bench_engine

from tarry.config import load_settings
from tarry.engine.operating import REST
from tarry.engine.runtime import Engine
from tarry.language.loader import parse_flow
from tarry.model import BatchAction, BatchFilter

CREATE_CHUNK = 1000
"""Idle runs created per ``start_many`` call of the setup."""
LEAD = timedelta(seconds=3)
"""From the end of the setup to the first timer: the worker process starts meanwhile."""
AFTER_MARGIN = timedelta(seconds=1)
"""The timers due this long after the batch ended are the control: the same worker, no batch."""


@dataclass(frozen=True)
class Sizes:
    """How much to measure."""

    runs: int = 100_000
    """Waiting runs the batch cancels."""
    timer_rate: int = 200
    """Timers due per second while the batch works."""
    timer_seconds: float = 20.0
    """How long timers keep coming due."""
    limit_seconds: float = 1.0


FULL = Sizes()
QUICK = Sizes(runs=5_000, timer_rate=100, timer_seconds=6.0, limit_seconds=0.5)


def create_idle(bench: BenchEngine, runs: int) -> float:
    """Create ``runs`` runs of the idle flow and take them to their day-long wait; seconds."""
    flow = parse_flow(IDLE_FLOW, "idle.yaml", actions=bench.engine.actions.names())
    began = time.perf_counter()
    for first in range(0, runs, CREATE_CHUNK):
        bench.engine.start_many(flow, [{}] * min(CREATE_CHUNK, runs - first))
        bench.prestart(wall_now())  # a chunk at a time: one walk never holds them all
    return time.perf_counter() - began


def cancel_in_pages(url: str, directory: Path) -> dict[str, Any]:
    """Cancel every waiting idle run as one batch on the wall clock; its figures."""
    engine = Engine.from_settings(load_settings(directory, env={"TARRY_DATABASE": url}))
    try:
        began_at = wall_now()
        began = time.perf_counter()
        batch = engine.batch(BatchAction.CANCEL, BatchFilter(flow="bench-idle"), by="bench")
        pages = [time.perf_counter() - began]  # the count and the insert, one transaction
        while not batch.done:
            started = time.perf_counter()
            batch = engine.work_batch(batch.id)
            pages.append(time.perf_counter() - started)
            time.sleep(pages[-1] * REST)  # as tarry cancel and tarry serve rest
        seconds = time.perf_counter() - began
    finally:
        engine.close()
    return {"began": iso(began_at), "ended": iso(wall_now()), "total": batch.total,
            "acted": batch.acted, "skipped": batch.skipped, "seconds": seconds,
            "cancels_per_second": batch.acted / seconds, "transactions": len(pages),
            "longest_transaction_ms": max(pages) * 1000,
            "transaction_p99_ms": percentile([page * 1000 for page in pages], 99)}


def lateness_of(wakes: Mapping[str, datetime], dues: Mapping[str, datetime],
                since: datetime | None = None,
                until: datetime | None = None) -> dict[str, float] | None:
    """p50, p99 and max lateness (ms) of the timers due in [since, until] (default: all)."""
    late = [millis(wakes[run] - due) for run, due in dues.items()
            if (since is None or due >= since) and (until is None or due <= until)]
    if not late:
        return None
    return {"timers": len(late), "p50": percentile(late, 50), "p99": percentile(late, 99),
            "max": max(late)}


def measure(base: str, directory: Path, sizes: Sizes) -> dict[str, Any]:
    """Every phase on ``base``: the limit, then the bulk cancel while timers are due."""
    say(f"limit: {sizes.limit_seconds}s rounds")
    with scratch_store(base, "bulklimit") as url:
        limit = measure_limit(url, seconds=sizes.limit_seconds).document()
    with scratch_store(base, "bulk") as url, bench_engine(url, directory) as bench:
        say(f"setup: {sizes.runs:,} runs waiting a day")
        setup_s = create_idle(bench, sizes.runs)
        count = round(sizes.timer_rate * sizes.timer_seconds)
        first = wall_now() + LEAD
        dues = [first + timedelta(seconds=index / sizes.timer_rate) for index in range(count)]
        ids, _ = bench.start(STEADY_FLOW, [{"due": iso(due)} for due in dues])
        bench.prestart(min(wall_now(), first - timedelta(milliseconds=1)))
        due_of = {run: datetime.fromisoformat(iso(due)) for run, due in zip(ids, dues,
                                                                            strict=True)}
        with WorkerProcess(url, directory, concurrency=CONCURRENCY):
            time.sleep(max((first - wall_now()).total_seconds(), 0))
            say(f"bulk cancel of {sizes.runs:,} runs while {count:,} timers come due")
            batch = cancel_in_pages(url, directory)
            bench.wait_until_done(dues[-1] + DONE_TIMEOUT)
        wakes = bench.wake_instants(ids)
    began, ended = (datetime.fromisoformat(batch[key]) for key in ("began", "ended"))
    return {"limit": limit, "setup_seconds": setup_s, "batch": batch,
            "timers": {"rate_per_second": sizes.timer_rate, "count": count,
                       "all": lateness_of(wakes, due_of),
                       "during_batch": lateness_of(wakes, due_of, began, ended),
                       "after_batch": lateness_of(wakes, due_of, ended + AFTER_MARGIN)}}


def targets(results: Mapping[str, Any]) -> list[Target]:
    """No transaction of the batch over 1 s; timers due meanwhile within 30 ms at p99."""
    during = results["timers"]["during_batch"] or results["timers"]["all"]
    return [Target("longest batch transaction (ms)",
                   results["batch"]["longest_transaction_ms"], high=1000.0),
            Target("timer lateness p99 during the batch (ms)", during["p99"], high=30.0)]


def table_rows(results: Mapping[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """One row per figure, the verdict beside those with a target."""
    batch, timers = results["batch"], results["timers"]
    verdict = {goal.name: f"{goal.bounds}  {'PASS' if goal.passed else 'FAIL'}"
               for goal in goals}
    during = timers["during_batch"]
    rows = [
        ("limit: durable tx/s (median)", f"{results['limit']['per_second']:,.0f}", ""),
        ("runs cancelled", f"{batch['acted']:,} of {batch['total']:,}", ""),
        ("batch: seconds", f"{batch['seconds']:.2f}", ""),
        ("batch: cancels/s", f"{batch['cancels_per_second']:,.0f}", ""),
        ("batch: transactions", f"{batch['transactions']:,}", ""),
        ("batch: longest transaction", f"{batch['longest_transaction_ms']:.1f} ms",
         verdict["longest batch transaction (ms)"]),
        ("batch: transaction p99", f"{batch['transaction_p99_ms']:.1f} ms", ""),
        (f"timers due during the batch ({timers['rate_per_second']}/s)",
         f"{during['timers']:,}" if during else "none", ""),
    ]
    if during:
        rows += [("timers during the batch: lateness p50", f"{during['p50']:.1f} ms", ""),
                 ("timers during the batch: lateness p99", f"{during['p99']:.1f} ms",
                  verdict["timer lateness p99 during the batch (ms)"]),
                 ("timers during the batch: lateness max", f"{during['max']:.1f} ms", "")]
    after = timers["after_batch"]
    if after:
        rows.append((f"timers after the batch ({after['timers']:,}): lateness p99",
                     f"{after['p99']:.1f} ms", ""))
    every = timers["all"]
    rows.append((f"all {every['timers']:,} timers: lateness p99", f"{every['p99']:.1f} ms",
                 "" if during else verdict["timer lateness p99 during the batch (ms)"]))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = benchmark_parser("bulk", __doc__, FULL).parse_args(argv)
    return run_on_store("bulk", args, chosen_sizes(args, FULL, QUICK), measure=measure,
                        targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

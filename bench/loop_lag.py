"""Event-loop lag while a worker wakes a burst of timers: one command, one table, one JSON.

    .venv/bin/python bench/loop_lag.py [--quick] [--json PATH] [--store URL]

What ``tarry serve`` needs of the worker in its process: that the loop it shares with the
HTTP server keeps answering while the worker is busy. On a fresh scratch database of the
store (``--store``, default a SQLite file; ``postgresql://…`` creates and drops a database on
that server), ``--burst`` runs of ``wait: {for: …}`` then ``set`` are started; a worker in
this process (``concurrency`` 64) takes each to its wait and, all at the same instant, wakes
them. Beside it on the same loop a ticker sleeps 2 ms again and again and records how late
each sleep returns: the loop's **lag**. Reported: lag p50, p99 and max over the wake burst
(from the due instant to the last run's end), the wakes per second of that burst, and the
store's raw durable transaction rate (``limit``, as in ``timers.py``) measured in the same
run. An idle loop's lag on this machine is measured first, for reference.

The target: lag p99 during the burst ≤ 5 ms above the idle loop's (on a quiet machine: under
5 ms in all).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import (
    Target,
    benchmark_parser,
    chosen_sizes,
    measure_limit,
    run_on_store,
    say,
    scratch_store,
)

from tarry import eventloop
from tarry.actions import ActionRegistry
from tarry.clock import SystemClock
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.language.expressions import compile_template
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.store import open_store

TICK = 0.002

FLOW = """
flow: burst
inputs:
  due: { type: instant, required: true }
steps:
  - nap:
      wait: { until: "{{ due }}" }
  - done:
      set: { ok: true }
"""

STARTS_PER_SECOND = 100
"""A pessimistic rate of starts, to choose the due instant far enough ahead."""


@dataclasses.dataclass(frozen=True)
class Sizes:
    """The burst, how far ahead it falls due, and the reference measurements."""

    burst: int = 2000
    due_seconds: float = 8.0
    idle_seconds: float = 2.0
    limit_seconds: float = 1.0


FULL = Sizes()
QUICK = Sizes(burst=500, due_seconds=5.0, idle_seconds=1.0, limit_seconds=0.5)


class Ticker:
    """Records the loop's lag, each with the wall-clock span of the sleep that measured it."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float, float]] = []
        self._stop = asyncio.Event()

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stop.is_set():
            began, wall = loop.time(), time.time()
            await asyncio.sleep(TICK)
            self.samples.append((wall, time.time(), loop.time() - began - TICK))

    def stop(self) -> None:
        self._stop.set()

    def lags(self, since: float = 0.0, until: float = float("inf")) -> list[float]:
        """The lags of the sleeps that overlapped ``since``–``until``.

        Overlap, not "ended inside": a burst shorter than one late tick (a small burst,
        claimed ahead of its instant, on a busy loop) still has the tick that waited it out.
        """
        return [lag for began, ended, lag in self.samples if began <= until and ended >= since]


def _figures(lags: list[float]) -> dict[str, float]:
    ordered = sorted(lags)
    p99 = (statistics.quantiles(ordered, n=100, method="inclusive")[98] if len(ordered) > 1
           else ordered[0])
    return {"samples": len(ordered), "p50_ms": statistics.median(ordered) * 1000,
            "p99_ms": p99 * 1000, "max_ms": ordered[-1] * 1000}


async def _idle_lag(seconds: float) -> dict[str, float]:
    ticker = Ticker()
    task = asyncio.create_task(ticker.run())
    await asyncio.sleep(seconds)
    ticker.stop()
    await task
    return _figures(ticker.lags())


async def _burst(url: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    registry = ActionRegistry()
    register_builtins(registry)
    store = open_store(url)
    engine = Engine(store, FlowCatalog(folder, store, registry.names()), registry,
                    SystemClock())
    compile_template("{{ 0 }}")
    flow = parse_flow(FLOW, "burst.yaml")
    due = math.ceil((time.time() + sizes.due_seconds + sizes.burst / STARTS_PER_SECOND)
                    * 1000) / 1000  # the instant the runs wait until, to the millisecond
    instant = datetime.fromtimestamp(due, UTC).isoformat(timespec="milliseconds")
    say(f"starting {sizes.burst} runs, due at {instant}")
    runs = [engine.start(flow, {"due": instant}).id for _ in range(sizes.burst)]
    ticker = Ticker()
    ticking = asyncio.create_task(ticker.run())
    stop = asyncio.Event()
    working = asyncio.create_task(engine.worker(concurrency=64).run(stop))
    while await asyncio.to_thread(engine.store.count_runs, status=RunStatus.PENDING):
        await asyncio.sleep(0.1)
    slack = due - time.time()  # negative: the burst began before every run was waiting
    while await asyncio.to_thread(engine.store.count_runs,
                                  status=RunStatus.SUCCEEDED) < len(runs):
        await asyncio.sleep(0.1)
    stop.set()
    await working
    ticker.stop()
    await ticking
    ended = max(engine.store.get_run(run).updated_at for run in runs).timestamp()
    engine.close()
    return {"lag": _figures(ticker.lags(due, ended)),
            "wakes_per_second": len(runs) / max(ended - due, 1e-3),
            "burst_seconds": ended - due, "setup_slack_seconds": slack}


def measure(base: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    """Every figure of the benchmark."""
    say("measuring the idle loop")
    idle = eventloop.run(_idle_lag(sizes.idle_seconds))
    with scratch_store(base, "lag") as url:
        burst = eventloop.run(_burst(url, folder, sizes))
    with scratch_store(base, "limit") as url:
        say("measuring the limit")
        limit = measure_limit(url, seconds=sizes.limit_seconds)
    return {"idle": idle, "burst": burst, "limit": limit.document()}


def targets(results: dict[str, Any]) -> list[Target]:
    """The goal: the burst adds at most 5 ms to the loop's lag p99."""
    added = results["burst"]["lag"]["p99_ms"] - results["idle"]["p99_ms"]
    return [Target("lag p99 added by the burst (ms)", added, high=5.0)]


def table_rows(results: dict[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """The printed table: figure, value, target."""
    idle, lag = results["idle"], results["burst"]["lag"]
    rows = [("idle loop: lag p99 (ms)", f"{idle['p99_ms']:.1f}", ""),
            ("burst: lag p50 (ms)", f"{lag['p50_ms']:.1f}", ""),
            ("burst: lag p99 (ms)", f"{lag['p99_ms']:.1f}", ""),
            ("burst: lag max (ms)", f"{lag['max_ms']:.1f}", ""),
            ("burst: wakes/s", f"{results['burst']['wakes_per_second']:.0f}", ""),
            ("limit: durable tx/s", f"{results['limit']['per_second']:.0f}", "")]
    return rows + [(goal.name, f"{goal.value:.1f}",
                    f"{goal.bounds}  {'PASS' if goal.passed else 'FAIL'}") for goal in goals]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = benchmark_parser("loop_lag", __doc__, FULL).parse_args(argv)
    return run_on_store("loop_lag", args, chosen_sizes(args, FULL, QUICK), measure=measure,
                        targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

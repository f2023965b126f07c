"""The worker's event loop keeps ticking while the store is slow (the async store boundary).

A ticker task beside the worker asks for a short sleep again and again and records how late
each one returns: the loop's lag. A store call made on the loop would show up as one lag as
long as the call. The issue this guards against: a ``claim_due`` froze the loop for the whole
time another process held SQLite's write lock.

The ticker runs while the store is slow (the lock held, the burst being committed by another
process), not while the worker executes the runs afterwards: executing runs is the loop's own
work, and ``bench/loop_lag.py`` measures the lag that comes with it.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

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
"""The ticker's sleep, in seconds."""

LAG_P99 = 0.005
"""The lag the store may add to the loop's at the 99th percentile (the issue's bound)."""

LAG_MAX = 0.5
"""The longest single lag allowed: a store call on the loop would show as one of ~2 s (the
lock) or of the whole burst."""

BASELINE_SECONDS = 1.0
"""How long the ticker measures the idle loop first: on a shared machine the scheduler
alone makes a few-millisecond lag, which the store's share is measured on top of."""

FLOW = """
flow: quick
steps:
  - nap:
      wait: { for: 10ms }
  - done:
      set: { ok: true }
"""

BURST = """
import sys
from datetime import timedelta
from tarry.clock import SystemClock
from tarry.model import NewRun, RunStatus
from tarry.store import open_store
store = open_store(sys.argv[1])
now = SystemClock().now()
print("connected", flush=True)
for number in range(int(sys.argv[2])):
    store.create_run(NewRun(id=f"later-{number}", flow="quick", flow_digest="none",
                            status=RunStatus.PENDING, inputs={}, target=None, created_at=now,
                            due_at=now + timedelta(hours=1)), [])
store.close()
"""

HOLD_LOCK = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
connection.execute("COMMIT")
"""


class Ticker:
    """Measures the loop's lag until stopped."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self.seconds = 0.0
        """How long it measured."""
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._tick())

    async def stop(self) -> None:
        self._stop.set()
        assert self._task is not None
        await self._task

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        first = loop.time()
        while not self._stop.is_set():
            began = loop.time()
            await asyncio.sleep(TICK)
            self.lags.append(loop.time() - began - TICK)
        self.seconds = loop.time() - first

    def p99(self) -> float:
        return statistics.quantiles(self.lags, n=100, method="inclusive")[98]


async def _baseline() -> Ticker:
    """The lag of the loop with nothing else on it (the parser built first, as the worker
    would build it when it starts)."""
    compile_template("{{ 0 }}")
    ticker = Ticker()
    ticker.start()
    await asyncio.sleep(BASELINE_SECONDS)
    await ticker.stop()
    return ticker


def _assert_kept_ticking(ticker: Ticker, baseline: Ticker) -> None:
    # a free loop ticks about every TICK: half as many ticks means it was held (the burst's
    # length depends on the machine's commit rate, so the count is judged against it)
    expected = ticker.seconds / TICK
    assert len(ticker.lags) > expected / 2, (
        f"the ticker ran {len(ticker.lags)} times in {ticker.seconds:.2f} s: the loop was held")
    assert max(ticker.lags) < LAG_MAX, f"the loop stalled for {max(ticker.lags):.3f} s"
    added = ticker.p99() - baseline.p99()
    assert added < LAG_P99, (f"lag p99 {ticker.p99() * 1000:.1f} ms, "
                             f"{baseline.p99() * 1000:.1f} ms idle")


def _engine(store_url: str, tmp_path: Path) -> Engine:
    registry = ActionRegistry()
    register_builtins(registry)
    store = open_store(store_url)
    return Engine(store, FlowCatalog(tmp_path, store, registry.names()), registry,
                  SystemClock())


async def _until_all_succeeded(engine: Engine, runs: list[str], seconds: float) -> None:
    for _ in range(int(seconds / 0.05)):
        statuses = {(await engine.aio.get(run)).status for run in runs}
        if statuses == {RunStatus.SUCCEEDED}:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"runs not done: {statuses}")


@pytest.mark.slow
async def test_the_loop_keeps_ticking_while_another_process_holds_the_sqlite_write_lock(
        tmp_path: Path) -> None:
    path = tmp_path / "tarry.db"
    engine = _engine(f"sqlite:///{path}", tmp_path)
    flow = parse_flow(FLOW, "quick.yaml")
    runs = [engine.start(flow).id for _ in range(20)]
    baseline = await _baseline()
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path), "2.0"],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    assert holder.stdout.readline() == "locked\n"
    ticker = Ticker()
    ticker.start()
    stop = asyncio.Event()
    worker = asyncio.create_task(engine.worker(concurrency=8).run(stop))
    try:
        while holder.poll() is None:  # the worker's claim waits for the lock meanwhile
            await asyncio.sleep(0.05)
        released = engine.clock.now()
        await ticker.stop()
        await _until_all_succeeded(engine, runs, 10.0)
    finally:
        stop.set()
        await worker
    first_start = min(entry.at for run in runs for entry in engine.store.history(run)
                      if entry.kind == "started")
    engine.close()
    holder.communicate()
    assert holder.returncode == 0
    assert first_start >= released - timedelta(milliseconds=100), "claimed before the lock?"
    _assert_kept_ticking(ticker, baseline)


@pytest.mark.slow
@pytest.mark.postgres
async def test_the_loop_keeps_ticking_while_postgres_commits_a_burst(
        tmp_path: Path, postgres_url: str) -> None:
    engine = _engine(postgres_url, tmp_path)
    flow = parse_flow(FLOW, "quick.yaml")
    runs = [record.id for record in engine.start_many(flow, [None] * 20)]
    baseline = await _baseline()
    burst = subprocess.Popen([sys.executable, "-c", BURST, postgres_url, "1000"],
                             stdout=subprocess.PIPE, text=True)
    assert burst.stdout is not None
    assert burst.stdout.readline() == "connected\n"
    ticker = Ticker()
    ticker.start()
    stop = asyncio.Event()
    worker = asyncio.create_task(engine.worker(concurrency=8).run(stop))
    try:  # every commit of the burst notifies the worker, which looks for due runs
        while burst.poll() is None:
            await asyncio.sleep(0.05)
        await ticker.stop()
        await _until_all_succeeded(engine, runs, 10.0)
    finally:
        stop.set()
        await worker
    burst.communicate()
    later = await engine.async_store.count_runs(status=RunStatus.PENDING)
    engine.close()
    assert (burst.returncode, later) == (0, 1000)
    _assert_kept_ticking(ticker, baseline)

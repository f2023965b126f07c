"""PostgreSQL round trips per operation: one command, one table, one JSON.

    .venv/bin/python bench/roundtrips.py [--quick] [--json PATH] [--store URL]

A round trip is the client waiting for the server: in libpq's protocol trace of every
connection the process opens (pooled and listening alike), each turn from messages sent by
the client (``F``) to messages received (``B``) is one. Pipelined statements sent together
count once, as they cost once. On a fresh scratch database (``--store``: the server, default
``postgresql://postgres@127.0.0.1:5432/postgres``), through the test harness (the real
engine, store and worker on a virtual clock), each operation is done ``--repeat`` times and
its round trips averaged:

- **start**: ``Engine.start`` of a one-wait flow;
- **wake**: one timer run falls due and one worker tick claims it, finishes the wait, runs a
  ``set`` step, ends the run and commits;
- **send**: ``Engine.send`` of an event that one waiting run matches (recorded, delivered,
  the run woken), then the **resume** of that run by one worker tick;
- **idle**: the round trips of an idle worker's loop in one second of wall-clock time.

The store's raw durable transaction rate (``limit``, as in ``timers.py``) is measured in the
same run for reference. The targets: a wake in at most 8 round trips, a send in at most 6.
"""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from common import (
    LOCAL_POSTGRES,
    POSTGRES_ONLY,
    Target,
    benchmark_parser,
    chosen_sizes,
    measure_limit,
    run_on_store,
    say,
    scratch_store,
)

from tarry import eventloop
from tarry.testing import Harness

START = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

MANIFESTS = """
events:
  bench.reply:
    correlate_on: [key]
"""

TIMER = """
flow: timer
steps:
  - nap:
      wait: { for: 1s }
  - done:
      set: { ok: true }
"""

WAITER = """
flow: waiter
inputs:
  key: { type: string, required: true }
steps:
  - reply:
      wait_for: bench.reply
      match: { key: "{{ key }}" }
      timeout: 1d
"""


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How often each operation is repeated, and how long the idle worker is watched."""

    repeat: int = 20
    idle_seconds: float = 2.0
    limit_seconds: float = 1.0


FULL = Sizes()
QUICK = Sizes(repeat=5, idle_seconds=1.0, limit_seconds=0.5)


class RoundTrips:
    """Counts the round trips of every connection opened while installed (libpq traces)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._traces: list[Path] = []
        self._marks: dict[Path, int] = {}

    @contextmanager
    def installed(self) -> Iterator[RoundTrips]:
        """Trace every connection psycopg opens meanwhile."""
        original, original_function = psycopg.Connection.connect, psycopg.connect
        counter = self

        def traced(cls: type[psycopg.Connection[Any]], *args: Any,
                   **kwargs: Any) -> psycopg.Connection[Any]:
            connection = original.__func__(cls, *args, **kwargs)  # type: ignore[attr-defined]
            counter._trace(connection)
            return connection  # type: ignore[no-any-return]

        psycopg.Connection.connect = classmethod(traced)  # type: ignore[method-assign,assignment]
        psycopg.connect = psycopg.Connection.connect
        try:
            yield self
        finally:
            psycopg.Connection.connect = original  # type: ignore[method-assign]
            psycopg.connect = original_function

    def _trace(self, connection: psycopg.Connection[Any]) -> None:
        path = self._folder / f"trace-{len(self._traces)}.txt"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        connection.pgconn.trace(descriptor)
        connection.pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS)
        self._traces.append(path)

    def reset(self) -> None:
        """Count from here."""
        _flush_traces()
        self._marks = {path: path.stat().st_size for path in self._traces}

    def count(self) -> int:
        """Round trips since :meth:`reset`, over every traced connection."""
        _flush_traces()
        total = 0
        for path in self._traces:
            with path.open("rb") as trace:
                trace.seek(self._marks.get(path, 0))
                total += _turns(trace.read().decode(errors="replace"))
        return total


def _flush_traces() -> None:
    """Write out what libpq has traced so far: it traces into a C stdio stream (``fdopen``),
    whose buffer holds a few kilobytes before they reach the file, so a count read from the
    file alone misses the latest messages and gives them to a later operation."""
    ctypes.CDLL(None).fflush(None)


def _turns(trace: str) -> int:
    """How often the trace turns from client messages to server messages."""
    turns, last = 0, ""
    for line in trace.splitlines():
        side = line[:1]
        if side == "B" and last == "F":
            turns += 1
        if side in {"F", "B"}:
            last = side
    return turns


async def _measure(url: str, folder: Path, sizes: Sizes) -> dict[str, float]:
    counter = RoundTrips(folder)
    with counter.installed():
        harness = Harness(folder, start=START, manifests=MANIFESTS, store_url=url)
        try:
            return await _operations(harness, counter, sizes)
        finally:
            harness.close()


async def _operations(harness: Harness, counter: RoundTrips,
                      sizes: Sizes) -> dict[str, float]:
    timer, waiter = harness.flow(TIMER), harness.flow(WAITER)
    worker = harness.engine.worker(concurrency=4, name="bench")
    counts: dict[str, list[int]] = {"start": [], "wake": [], "send": [], "resume": []}

    def counted(name: str, action: Callable[[], Any]) -> Any:
        counter.reset()
        result = action()
        counts[name].append(counter.count())
        return result

    for number in range(sizes.repeat):
        counted("start", lambda: harness.start(timer))
        await worker.tick()  # to its wait (not counted)
        harness.clock.advance(timedelta(seconds=2))
        counter.reset()
        await worker.tick()
        counts["wake"].append(counter.count())
        key = f"k{number}"
        harness.start(waiter, {"key": key})
        await worker.tick()
        counted("send", functools.partial(harness.send, "bench.reply", {"key": key}))
        counter.reset()
        await worker.tick()
        counts["resume"].append(counter.count())
    figures = {name: sum(values) / len(values) for name, values in counts.items()}
    figures["idle_per_second"] = await _idle(harness, counter, sizes.idle_seconds)
    return figures


async def _idle(harness: Harness, counter: RoundTrips, seconds: float) -> float:
    """Round trips per second of a worker on the system clock with nothing due."""
    from tarry.clock import SystemClock  # noqa: PLC0415

    engine = harness.engine
    engine.clock = SystemClock()
    worker = engine.worker(concurrency=4, name="bench-idle")
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop))
    await asyncio.sleep(0.3)  # settle: the first claim, the listener's connection
    counter.reset()
    began = time.perf_counter()
    await asyncio.sleep(seconds)
    total = counter.count()
    elapsed = time.perf_counter() - began
    stop.set()
    await task
    return total / elapsed


def measure(base: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    """Every figure of the benchmark."""
    with scratch_store(base, "roundtrips") as url:
        say("counting round trips")
        figures = eventloop.run(_measure(url, folder, sizes))
    with scratch_store(base, "limit") as url:
        say("measuring the limit")
        limit = measure_limit(url, seconds=sizes.limit_seconds)
    return {"round_trips": figures, "limit": limit.document()}


def targets(results: dict[str, Any]) -> list[Target]:
    """The goals: few round trips per wake and per send."""
    trips = results["round_trips"]
    return [Target("round trips per wake", trips["wake"], high=8),
            Target("round trips per send", trips["send"], high=6)]


def table_rows(results: dict[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """The printed table: figure, value, target."""
    trips = results["round_trips"]
    rows = [(f"round trips per {name}", f"{trips[name]:.1f}", "")
            for name in ("start", "wake", "send", "resume")]
    rows.append(("round trips per second, idle worker", f"{trips['idle_per_second']:.1f}", ""))
    rows.append(("limit (durable transactions/s)", f"{results['limit']['per_second']:.0f}", ""))
    return rows + [(goal.name, f"{goal.value:.1f}",
                    f"{goal.bounds}  {'PASS' if goal.passed else 'FAIL'}") for goal in goals]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = benchmark_parser("roundtrips", __doc__, FULL, default_store=LOCAL_POSTGRES,
                              store_help=POSTGRES_ONLY).parse_args(argv)
    return run_on_store("roundtrips", args, chosen_sizes(args, FULL, QUICK), measure=measure,
                        targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

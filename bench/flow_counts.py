"""A flow's page with a million runs waiting in it: the counts per step and the whole page.

    .venv/bin/python bench/flow_counts.py [--quick] [--runs 1000000] [--samples 20]
                                          [--store URL] [--json PATH]

A flow of four waits (a timer, an event, a task and a poll) gets one real run waiting at each,
and one failed at a fifth step, made by the engine on a virtual clock; each run's row is then
copied in the store (one ``INSERT … SELECT`` per template, with new ids: starting a million
runs one by one is another benchmark's work) until ``--runs`` runs wait, spread evenly over
the four steps, and a thousand have failed. Then, ``--samples`` times each:

- **counts**: ``Store.count_runs_per_step`` of the flow, the one query the drawing needs;
- **page**: ``GET /flows/{name}`` of the dashboard, served in this process (the flow's
  lookup, the counts, the layout, the SVG and the page around it), through its ASGI app.

On PostgreSQL the copied table is vacuumed first, as autovacuum soon does to a table this
size, so that the counts read the index alone. The store's raw durable transaction rate is
measured in the same run for reference. The target: the page in under 200 ms at the median
on SQLite with 1,000,000 runs waiting.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
from common import (
    Target,
    benchmark_parser,
    chosen_sizes,
    measure_limit,
    median,
    percentile,
    run_on_store,
    say,
    scratch_store,
    store_kind,
)

from tarry import eventloop
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus
from tarry.server.app import create_app
from tarry.testing import Harness

START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)

FLOW = """\
flow: crowded
inputs:
  at: { type: string, required: true }
steps:
  - nap: { if: "{{ at == 'nap' }}", wait: { for: 30d } }
  - reply:
      if: "{{ at == 'reply' }}"
      wait_for: bench.reply
      match: { key: "{{ at }}" }
      timeout: 30d
  - review:
      if: "{{ at == 'review' }}"
      ask: { title: Look, outcomes: [ok] }
      timeout: 30d
  - poll:
      if: "{{ at == 'poll' }}"
      repeat: { every: 30d, max: 3, until: "{{ check.done }}" }
      steps:
        - check: { set: { done: false } }
  - broken: { fail: on purpose }
"""

MANIFESTS = """\
events:
  bench.reply: { correlate_on: [key] }
"""

STEPS = ("nap", "reply", "review", "poll")
FAILED = 1000


@dataclass(frozen=True)
class Sizes:
    """How much to measure."""

    runs: int = 1_000_000
    samples: int = 20
    limit_seconds: float = 1.0


FULL = Sizes()
QUICK = Sizes(runs=100_000, samples=10, limit_seconds=0.5)


async def _templates(h: Harness) -> dict[str, str]:
    """One real run waiting at each step of :data:`STEPS`, and one failed at ``broken``."""
    flow = h.flow(FLOW)
    runs = {step: h.start(flow, {"at": step}) for step in [*STEPS, "broken"]}
    await h.run_due()
    return runs


_COPY = {
    "sqlite": """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < :count)
        INSERT INTO runs ({columns})
        SELECT {copied} FROM n, runs WHERE runs.id = :template""",
    "postgresql": """
        INSERT INTO runs ({columns})
        SELECT {copied} FROM generate_series(1, %(count)s) AS n(i), runs
        WHERE runs.id = %(template)s""",
}
"""Copies of one run's row with new ids (``<template>-<n>``), per store."""


def _fill(url: str, templates: dict[str, str], runs: int) -> None:
    """Copy each template until ``runs`` runs wait (evenly over the steps) and FAILED fail."""
    copies = {templates[step]: runs // len(STEPS) - 1 for step in STEPS}
    copies[templates["broken"]] = FAILED - 1
    if url.startswith("sqlite"):
        connection = sqlite3.connect(url.removeprefix("sqlite:///"))
        columns = [row[1] for row in connection.execute("PRAGMA table_info(runs)")]
        statement = _statement("sqlite", columns, "runs.id || '-' || n.i")
        with connection:
            for template, count in copies.items():
                connection.execute(statement, {"count": count, "template": template})
        connection.close()
        return
    with psycopg.connect(url, autocommit=False) as server:
        columns = [row[0] for row in server.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'runs' "
            "ORDER BY ordinal_position")]
        statement = _statement("postgresql", columns, "runs.id || '-' || n.i")
        for template, count in copies.items():
            server.execute(statement, {"count": count, "template": template})
    with psycopg.connect(url, autocommit=True) as server:
        server.execute("VACUUM ANALYZE runs")  # what autovacuum does to a table this size


def _statement(dialect: str, columns: list[str], new_id: str) -> str:
    copied = ", ".join(new_id if column == "id" else f"runs.{column}" for column in columns)
    return _COPY[dialect].format(columns=", ".join(columns), copied=copied)


def measure(base: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    """The limit, then the counts and the page with ``sizes.runs`` runs waiting."""
    with scratch_store(base, "flow_counts_limit") as url:
        limit = measure_limit(url, seconds=sizes.limit_seconds).per_second
    with scratch_store(base, "flow_counts") as url:
        return {"limit_per_second": limit, "store": store_kind(url),
                **eventloop.run(_measure(url, folder, sizes))}


async def _measure(url: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    project = folder / "project"
    (project / "flows").mkdir(parents=True)
    (project / "flows" / "crowded.yaml").write_text(FLOW)
    (project / "events.yaml").write_text(MANIFESTS)
    (project / "tarry.toml").write_text(f'[tarry]\ndatabase = "{url}"\n')
    h = Harness(folder / "harness", start=START, store_url=url,
                project=load_settings(project, {}))
    try:
        templates = await _templates(h)
    finally:
        h.close()
    say(f"copying the runs: {sizes.runs:,} waiting, {FAILED:,} failed")
    began = time.perf_counter()
    _fill(url, templates, sizes.runs)
    filled = time.perf_counter() - began
    engine = Engine.from_settings(load_settings(project, {}))
    try:
        counts = engine.store.count_runs_per_step("crowded")
        waiting = sum(by.get(RunStatus.WAITING, 0) for by in counts.values())
        count_ms = _timed(lambda: engine.store.count_runs_per_step("crowded"), sizes.samples)
        page_ms = await _page_ms(engine, project, sizes.samples)
    finally:
        engine.close()
    return {"waiting": waiting, "fill_seconds": filled,
            "counts_ms": {"p50": median(count_ms), "p95": percentile(count_ms, 95)},
            "page_ms": {"p50": median(page_ms), "p95": percentile(page_ms, 95)}}


def _timed(call: Any, samples: int) -> list[float]:
    call()  # warm the cache as an open page does
    times = []
    for _ in range(samples):
        began = time.perf_counter()
        call()
        times.append((time.perf_counter() - began) * 1000)
    return times


async def _page_ms(engine: Engine, project: Path, samples: int) -> list[float]:
    app = create_app(engine, load_settings(project, {}), worker=False, environ={})
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        times = []
        for index in range(samples + 1):
            began = time.perf_counter()
            answer = await client.get("/flows/crowded")
            elapsed = (time.perf_counter() - began) * 1000
            assert answer.status_code == 200, answer.text[:500]
            if index:
                times.append(elapsed)
            await asyncio.sleep(0)
    return times


def targets(results: dict[str, Any]) -> list[Target]:
    """The page under 200 ms at the median (on SQLite, the goal's store)."""
    return [Target(f"page p50 ms, {results['waiting']:,} waiting ({results['store']})",
                   results["page_ms"]["p50"], high=200)]


def rows(results: dict[str, Any], goals: list[Target]) -> list[tuple[str, str, str]]:
    """The table: the limit, the size, the counts and the page, and the goal."""
    return [
        ("raw durable transactions/s", f"{results['limit_per_second']:,.0f}", ""),
        ("runs waiting in the flow", f"{results['waiting']:,}", f"+ {FAILED:,} failed"),
        ("counts per step p50 / p95 ms",
         f"{results['counts_ms']['p50']:.1f} / {results['counts_ms']['p95']:.1f}", ""),
        ("flow page p50 / p95 ms",
         f"{results['page_ms']['p50']:.1f} / {results['page_ms']['p95']:.1f}",
         f"{goals[0].bounds} ({'met' if goals[0].passed else 'NOT met'})"),
    ]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark with the command line's sizes."""
    args = benchmark_parser("flow_counts", __doc__, FULL).parse_args(argv)
    return run_on_store("flow_counts", args, chosen_sizes(args, FULL, QUICK),
                        measure=measure, targets=targets, rows=rows)


if __name__ == "__main__":
    sys.exit(main())

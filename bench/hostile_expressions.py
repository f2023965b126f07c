"""Timers beside runs whose expressions hit their work budget: one command, one table, one JSON.

    .venv/bin/python bench/hostile_expressions.py [--quick] [--json PATH] [--store URL]

The shape of the hostile-input probe that found a budget-hitting expression holding the
worker's loop about 3 s: on a fresh scratch database of the store (``--store``, default a
SQLite file; ``postgresql://…`` creates and drops a database on that server), ``--timers``
runs of ``wait: {until: …}`` then ``set``, due at a steady rate over ``--spread-seconds``,
and ``--heavy`` runs that wait until the first timer's instant and then render an expression
that hits the work budget (each fails its step with ``error.type = expression``). A worker
in this process (the default concurrency, 16) wakes them all. A timer's lateness is its wake
(the ``at`` of its wait's ``step.completed``) minus its due instant.

The target: timer lateness p99 under 100 ms.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
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
    millis,
    percentile,
    run_on_store,
    say,
    scratch_store,
)

from tarry.actions import ActionRegistry
from tarry.clock import SystemClock
from tarry.engine.builtins import register_builtins
from tarry.engine.catalog import FlowCatalog
from tarry.engine.runtime import Engine
from tarry.language.expressions import compile_template
from tarry.language.loader import parse_flow
from tarry.model import RunStatus
from tarry.store import open_store

DEEP = "[" * 40 + "1" + "]" * 40
HEAVY_EXPRESSION = f"{{{{ ([{DEEP}] * 99) == ([{DEEP}] * 99) }}}}"
"""Nested lists compared item by item in Python, the costliest work per unit, until the
budget runs out (a thousand steps in; with 99,999 items the list's first charge would stop it
at once). Before the work was charged by its cost, such a comparison took 5 s."""

TIMER_FLOW = """
flow: timer
inputs:
  due: { type: instant, required: true }
steps:
  - nap:
      wait: { until: "{{ due }}" }
  - done:
      set: { ok: true }
"""

HEAVY_FLOW = f"""
flow: heavy
inputs:
  due: {{ type: instant, required: true }}
steps:
  - nap:
      wait: {{ until: "{{{{ due }}}}" }}
  - hungry:
      set: {{ v: "{HEAVY_EXPRESSION}" }}
"""

STARTS_PER_SECOND = 100
"""A pessimistic rate of starts, to choose the first due instant far enough ahead."""
WAIT_STEP = "nap"


@dataclasses.dataclass(frozen=True)
class Sizes:
    """The probe's shape: timers due over a spread, heavy runs due with the first."""

    timers: int = 200
    heavy: int = 34
    spread_seconds: float = 2.0
    lead_seconds: float = 2.0


FULL = Sizes()
QUICK = Sizes(spread_seconds=1.0, lead_seconds=1.0)


def _engine(url: str, folder: Path) -> Engine:
    registry = ActionRegistry()
    register_builtins(registry)
    store = open_store(url)
    return Engine(store, FlowCatalog(folder, store, registry.names()), registry, SystemClock())


def _instant(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


async def _probe(url: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    engine = _engine(url, folder)
    compile_template(HEAVY_EXPRESSION)
    timer, heavy = parse_flow(TIMER_FLOW, "timer.yaml"), parse_flow(HEAVY_FLOW, "heavy.yaml")
    first = math.ceil((time.time() + sizes.lead_seconds
                       + (sizes.timers + sizes.heavy) / STARTS_PER_SECOND) * 1000) / 1000
    dues = [first + index * sizes.spread_seconds / max(sizes.timers, 1)
            for index in range(sizes.timers)]
    say(f"starting {sizes.timers} timers and {sizes.heavy} heavy runs, the first due at "
        f"{_instant(first)}")
    timers = [engine.start(timer, {"due": _instant(due)}).id for due in dues]
    heavies = [engine.start(heavy, {"due": _instant(first)}).id for _ in range(sizes.heavy)]
    stop = asyncio.Event()
    working = asyncio.create_task(engine.worker().run(stop))
    while await asyncio.to_thread(engine.store.count_runs, status=RunStatus.PENDING):
        await asyncio.sleep(0.05)
    slack = first - time.time()  # negative: the first were due before every run was waiting
    ended = {RunStatus.SUCCEEDED, RunStatus.FAILED}
    while sum(engine.get(run).status in ended for run in [*timers, *heavies]) < len(
            timers) + len(heavies):
        await asyncio.sleep(0.1)
    stop.set()
    await working
    lateness = [millis(_woke(engine, run) - datetime.fromtimestamp(due, UTC))
                for run, due in zip(timers, dues, strict=True)]
    failed = [engine.get(run).error for run in heavies]
    engine.close()
    return {"timers": len(timers), "heavy": len(heavies),
            "lateness_ms": {"p50": percentile(lateness, 50), "p99": percentile(lateness, 99),
                            "max": max(lateness)},
            "heavy_failed": sum(1 for error in failed if error and error["type"] == "expression"),
            "setup_slack_seconds": slack}


def _woke(engine: Engine, run_id: str) -> datetime:
    """The instant the timer's wait ended: its ``step.completed`` entry."""
    return next(entry.at for entry in engine.store.history(run_id)
                if entry.kind == "step.completed" and entry.step == WAIT_STEP)


def measure(base: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    """Every figure of the benchmark."""
    with scratch_store(base, "hostile") as url:
        return asyncio.run(_probe(url, folder, sizes))


def targets(results: dict[str, Any]) -> list[Target]:
    """The goal: timers wake under 100 ms late at the 99th percentile."""
    return [Target("timer lateness p99 (ms)", results["lateness_ms"]["p99"], high=100.0)]


def table_rows(results: dict[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """The printed table: figure, value, target."""
    late = results["lateness_ms"]
    rows = [("timers / heavy runs", f"{results['timers']} / {results['heavy']}", ""),
            ("heavy runs failed (expression)", f"{results['heavy_failed']}", ""),
            ("timer lateness p50 (ms)", f"{late['p50']:.1f}", ""),
            ("timer lateness max (ms)", f"{late['max']:.1f}", "")]
    return rows + [(goal.name, f"{goal.value:.1f}",
                    f"{goal.bounds}  {'PASS' if goal.passed else 'FAIL'}") for goal in goals]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = benchmark_parser("hostile_expressions", __doc__, FULL).parse_args(argv)
    return run_on_store("hostile_expressions", args, chosen_sizes(args, FULL, QUICK),
                        measure=measure, targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

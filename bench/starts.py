"""Runs started per second: one ``Engine.start`` at a time, and ``Engine.start_many`` batches.

    nice -n 10 .venv/bin/python bench/starts.py [--quick] [--store URL] [--json PATH]
                                                [--single N] [--callers N] [--batched N]
                                                [--batch N]

A project with one YAML flow (two inputs, one timer) in its flows folder; the flow is named,
as a caller would (``engine.start("greet", {...})``), so each start resolves the name. Per
store, on a fresh database of its own:

- **single** — ``--single`` starts, one after another, each its own transaction;
- **concurrent** — ``--single`` starts by ``--callers`` callers on one event loop, each
  awaiting its own ``engine.aio.start`` before its next (as a server's requests do): starts
  made in the same moment share a transaction (group commit), so the rate is no longer
  bounded by one durable commit per start;
- **batched** — ``--batched`` starts in ``start_many`` calls of ``--batch`` runs each (one
  transaction per call); skipped, and reported so, by a tarry without ``start_many``;
- **limit** — the store's raw rate of minimal durable transactions on this machine, measured
  in the same run (the physical limit a one-at-a-time start cannot beat).

Targets (SQLite): 3,000 single starts/s (a caller awaiting each start on its own; one caller
alone cannot beat the raw rate, so the target is taken by the concurrent callers) and
20,000 batched starts/s. Without ``--store`` both
a SQLite file in a temporary folder and, when ``TARRY_TEST_POSTGRES`` names a server, a
scratch PostgreSQL database are measured.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    Target,
    chosen_sizes,
    measure_limit,
    run_per_store,
    say,
    scratch_store,
    store_benchmark_args,
    store_kind,
)

from tarry.config import load_settings
from tarry.engine.runtime import Engine

FLOW = """\
flow: greet
inputs:
  name: { type: string, required: true }
  times: { type: integer, default: 1 }
steps:
  - pause:
      wait: { for: 1h }
  - hello:
      log: { message: "hello {{ name }}" }
"""


@dataclass(frozen=True)
class Sizes:
    """How much to measure."""

    single: int = 5000
    callers: int = 64
    batched: int = 50000
    batch: int = 1000
    limit_seconds: float = 1.0


FULL = Sizes()
QUICK = Sizes(single=1000, batched=10000, batch=500, limit_seconds=0.5)


def project(folder: Path, url: str) -> Engine:
    """An engine over the store at ``url`` for a project holding the ``greet`` flow."""
    flows = folder / "flows"
    flows.mkdir(exist_ok=True)
    (flows / "greet.yaml").write_text(FLOW, encoding="utf-8")
    return Engine.from_settings(load_settings(folder, env={"TARRY_DATABASE": url}))


def single_rate(engine: Engine, count: int) -> float:
    """Starts per second, one ``start`` call (one transaction) each."""
    engine.start("greet", {"name": "warm-up"})
    began = time.perf_counter()
    for number in range(count):
        engine.start("greet", {"name": f"n{number}"})
    return count / (time.perf_counter() - began)


def concurrent_rate(engine: Engine, count: int, callers: int) -> float:
    """Starts per second by ``callers`` concurrent callers, each awaiting its own start."""
    async def caller(numbers: range) -> None:
        for number in numbers:
            await engine.aio.start("greet", {"name": f"n{number}"})

    async def all_callers() -> float:
        await engine.aio.start("greet", {"name": "warm-up"})
        began = time.perf_counter()
        await asyncio.gather(*(caller(range(first, count, callers))
                               for first in range(callers)))
        return count / (time.perf_counter() - began)

    return asyncio.run(all_callers())


def batched_rate(engine: Engine, count: int, batch: int) -> float | None:
    """Starts per second in ``start_many`` calls of ``batch``; None without ``start_many``."""
    start_many = getattr(engine, "start_many", None)
    if start_many is None:
        return None
    inputs = [{"name": f"n{number}"} for number in range(batch)]
    calls = max(count // batch, 1)
    began = time.perf_counter()
    for _ in range(calls):
        start_many("greet", inputs)
    return calls * batch / (time.perf_counter() - began)


def measure_store(base: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    """Every figure on one store kind, each phase on a fresh database."""
    kind = store_kind(base)
    with scratch_store(base, "starts_limit") as url:
        say(f"{kind}: raw durable transactions")
        limit = measure_limit(url, seconds=sizes.limit_seconds)
    phases: dict[str, tuple[str, Callable[[Engine], float | None]]] = {
        "single": (f"{sizes.single} single starts",
                   lambda engine: single_rate(engine, sizes.single)),
        "concurrent": (f"{sizes.single} starts by {sizes.callers} concurrent callers",
                       lambda engine: concurrent_rate(engine, sizes.single, sizes.callers)),
        "batched": (f"{sizes.batched} starts in batches of {sizes.batch}",
                    lambda engine: batched_rate(engine, sizes.batched, sizes.batch)),
    }
    rates = {}
    for phase, (label, measure) in phases.items():
        with scratch_store(base, f"starts_{phase}") as url:
            say(f"{kind}: {label}")
            engine = project(folder, url)
            try:
                rates[phase] = measure(engine)
            finally:
                engine.close()
    return {"store": kind, "limit_per_second": limit.per_second,
            "single_per_second": rates["single"], "callers": sizes.callers,
            "concurrent_per_second": rates["concurrent"], "batched_per_second": rates["batched"]}


def targets(results: Sequence[dict[str, Any]]) -> list[Target]:
    """The SQLite goals of issue 10."""
    goals = []
    for result in results:
        if result["store"] != "sqlite":
            continue
        goals.append(Target(f"sqlite single starts/s, {result['callers']} callers",
                            result["concurrent_per_second"], low=3000))
        goals.append(Target("sqlite batched starts/s", result["batched_per_second"] or 0.0,
                            low=20000))
    return goals


def table_rows(results: Sequence[dict[str, Any]],
               goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """One group of rows per store, then the targets."""
    rows = []
    for result in results:
        kind = result["store"]
        batched = result["batched_per_second"]
        rows += [
            (f"{kind}: raw durable transactions/s", f"{result['limit_per_second']:,.0f}", ""),
            (f"{kind}: single starts/s, one caller", f"{result['single_per_second']:,.0f}", ""),
            (f"{kind}: single starts/s, {result['callers']} concurrent callers",
             f"{result['concurrent_per_second']:,.0f}", ""),
            (f"{kind}: batched starts/s",
             "n/a (no start_many)" if batched is None else f"{batched:,.0f}", ""),
        ]
    rows += [(goal.name, f"{goal.value:,.0f}", f"{goal.bounds} "
              f"{'ok' if goal.passed else 'MISSED'}") for goal in goals]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = store_benchmark_args("starts", __doc__, FULL, argv)
    return run_per_store("starts", args, chosen_sizes(args, FULL, QUICK), measure=measure_store,
                         targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

"""The cost of resuming a Python flow against the number of operations its run recorded.

    .venv/bin/python bench/sdk_replay.py [--sizes 10,100,1000] [--runs 10] [--store URL]
                                         [--json PATH]

A Python flow is re-executed from the top on every resume; each operation it already
recorded returns its recorded result from the run's journal, one JSON document in the run's
state. So a resume should cost one claim, one read of the inbox and one commit whatever the
history, plus in-memory lookups that grow with it. For each size N this measures, over
``--runs`` runs of a flow that records N steps and then waits one hour:

- **resume ms** — one resume, wall time: claim the run, replay the N recorded steps, complete
  the wait, return, commit (``Engine.drive`` of one run), median and p90;
- **store calls** — the store methods that resume called (claim, inbox, checkpoint, read);
- **state bytes** — the size of the run row's state as JSON (the live part: finished
  operations are rows of the run's journal);
- **setup** — the time to execute the N steps the first time (each is checkpointed).

The runs are taken up to their wait on a virtual clock (each step executed once and
checkpointed), then the clock jumps past the wait and each run is resumed alone. Default
store: a SQLite file in a temporary folder; ``--store postgresql://…`` creates and drops a
scratch database on that server.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from common import (
    Target,
    add_markdown_option,
    machine,
    percentile,
    print_table,
    say,
    scratch_store,
    write_json,
)

from tarry import App, Context, eventloop
from tarry.clock import SystemClock, VirtualClock, iso
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus
from tarry.store import open_store
from tarry.store.base import Store

FLOW = "bench-replay"
WAIT = timedelta(hours=1)


def _noop(index: int) -> dict[str, int]:
    return {"index": index}


def replay_app() -> App:
    """One flow: N recorded steps, then a one-hour wait, then return N."""
    app = App()

    @app.flow(FLOW)
    async def replayed(ctx: Context, steps: int) -> int:
        for index in range(steps):
            await ctx.step(f"step-{index}", _noop, index)
        await ctx.wait("gate", WAIT)
        return steps

    return app


class CountingStore:
    """A store that counts the calls made to it (the DB work of one resume)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if not callable(attribute):
            return attribute

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return attribute(*args, **kwargs)
        return counted


async def measure_size(url: str, folder: Path, steps: int, runs: int) -> dict[str, Any]:
    """Resume ``runs`` runs that recorded ``steps`` operations each; the figures."""
    store = CountingStore(open_store(url))
    clock = VirtualClock()
    settings = load_settings(folder, env={"TARRY_DATABASE": url})
    engine = Engine.from_settings(settings, clock=clock, store=store,
                                  app=replay_app())
    try:
        began = time.perf_counter()
        run_ids = [engine.start(FLOW, {"steps": steps}).id for _ in range(runs)]
        for run_id in run_ids:
            await engine.drive(run_id)
        setup = time.perf_counter() - began
        clock.advance(WAIT)
        timings, calls = [], Counter[str]()
        for run_id in run_ids:
            store.calls.clear()
            started = time.perf_counter()
            record = await engine.drive(run_id)
            timings.append((time.perf_counter() - started) * 1000)
            calls += store.calls
            assert (record.status, record.result) == (RunStatus.SUCCEEDED, steps), record
        state = store.get_run(run_ids[0]).state
    finally:
        engine.close()
    return {"recorded_ops": steps, "runs": runs,
            "resume_ms": {"median": percentile(timings, 50), "p90": percentile(timings, 90)},
            "store_calls_per_resume": {name: count / runs for name, count in sorted(calls.items())},
            "state_bytes": len(json.dumps(state)),
            "setup_seconds": setup}


async def measure(base: str, folder: Path, sizes: Sequence[int], runs: int) -> list[dict[str, Any]]:
    """Every size on a fresh database of its own."""
    results = []
    for steps in sizes:
        say(f"{steps} recorded operations: {runs} runs")
        with scratch_store(base, f"replay{steps}") as url:
            results.append(await measure_size(url, folder, steps, runs))
    return results


def targets(results: list[dict[str, Any]]) -> list[Target]:
    """The store work of a resume must not grow with the history at all; its time (replay in
    memory) may grow, but no faster than the history does."""
    smallest, largest = results[0], results[-1]
    growth = largest["recorded_ops"] / smallest["recorded_ops"]
    calls = [sum(result["store_calls_per_resume"].values()) for result in results]
    ratio = largest["resume_ms"]["median"] / smallest["resume_ms"]["median"]
    return [
        Target("store calls per resume, largest ÷ smallest", calls[-1] / calls[0], high=1.0),
        Target(f"resume time, {largest['recorded_ops']} ÷ {smallest['recorded_ops']} ops "
               f"({growth:g}× the history)", ratio, high=growth),
    ]


def table_rows(results: list[dict[str, Any]], goals: list[Target]) -> list[tuple[str, str, str]]:
    """The printed table: one group of rows per size, then the targets."""
    rows = []
    for result in results:
        ops = result["recorded_ops"]
        calls = ", ".join(f"{name} {count:g}"
                          for name, count in result["store_calls_per_resume"].items())
        rows += [
            (f"{ops} ops: resume ms (median / p90)",
             f"{result['resume_ms']['median']:.2f} / {result['resume_ms']['p90']:.2f}", ""),
            (f"{ops} ops: store calls per resume", calls, ""),
            (f"{ops} ops: state bytes", f"{result['state_bytes']:,}", ""),
            (f"{ops} ops: setup (first execution) s", f"{result['setup_seconds']:.2f}", ""),
        ]
    rows += [(goal.name, f"{goal.value:.2f}", f"{goal.bounds} {'ok' if goal.passed else 'MISSED'}")
             for goal in goals]
    return rows


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", default="10,100,1000",
                        help="recorded operations per run, comma-separated (default 10,100,1000)")
    parser.add_argument("--runs", type=int, default=10, help="runs resumed per size")
    parser.add_argument("--store", help="sqlite:///path.db (scratch files beside it) or "
                                        "postgresql://… (scratch databases on that server)")
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results" /
                        "sdk_replay.json", help="where to write the results")
    add_markdown_option(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tarry-bench-") as folder:
        base = args.store or f"sqlite:///{folder}/bench.db"
        platform_facts = machine(base)
        results = eventloop.run(measure(base, Path(folder), sizes, args.runs))
    goals = targets(results)
    finished_at = iso(SystemClock().now())
    document = {
        "benchmark": "sdk_replay",
        "finished_at": finished_at,
        "seconds": time.perf_counter() - began,
        "machine": platform_facts,
        "sizes": results,
        "targets": [goal.document() for goal in goals],
        "passed": all(goal.passed for goal in goals),
    }
    print_table(f"tarry Python-flow resume cost: {platform_facts['store']}, "
                f"{platform_facts['nproc']} cores, Python {platform_facts['python']}, "
                f"load average {platform_facts['load_average'][0]:.1f}, {finished_at[:10]}",
                table_rows(results, goals),
                markdown=args.markdown)
    write_json(args.json, document)
    say(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The cost of resuming a Python flow against the operations its run recorded, and across a
flow that continues as new.

    .venv/bin/python bench/sdk_replay.py [--quick] [--sizes 10,1000,10000] [--runs 10]
                                         [--segments 100] [--segment-ops 1000]
                                         [--store URL] [--json PATH] [--markdown]

A Python flow is re-executed from the top on every resume; each operation it already
recorded returns its recorded result from the run's journal (read once, one row per
operation). So a resume costs a fixed part (claim the run, read its inbox, commit) and a part
that grows with the history (read the journal rows, decode them, replay them in memory).

**Part 1: resume cost per recorded operation.** For each size N (and N = 0, the fixed part),
``--runs`` runs (ten times as many up to 100 operations) of a flow that recorded N steps
and waits one hour are resumed one at a time
(``Engine.drive`` of one run: claim, replay the N steps, complete the wait, return, commit).
The figure is the **marginal cost per operation**: (median resume at N − median resume at 0)
÷ N, in µs, against the limit of 10 µs per operation (its ratio to the limit must be ≤ 1).
It excludes the fixed claim-and-commit cost on purpose (that cost is paid once per resume
whatever the history; at 10 operations it alone is some 150 µs per operation); the table
also prints the resume time itself and the cost per operation including the fixed part. At
10 operations the marginal figure is the difference of two medians of about 2 ms, so it is
noisy (it may even come out below zero).

The runs are imported waiting, each with its journal as the engine records it (one ``op``
row per step: ``{in, kind, entry: {result}}``): executing 10,000 steps for real, each
checkpointed, takes a minute per run on SQLite. The shape is taken from a run of the same
flow executed for real (the bench checks that its journal is exactly what it imports), and
every imported run must resume to its result, with no nondeterminism, or the bench fails.

**Part 2: a flow that continues as new.** One run records ``--segment-ops`` operations
(``ctx.now``, recorded without a checkpoint each, so that the whole chain runs in seconds),
waits an hour, and on waking continues as new, ``--segments`` times (100 × 1,000 = 100,000
operations in all). Each segment's resume (claim, replay its 1,000 operations, complete the
wait, commit the end and its successor in one transaction) is timed: the median of the first
tenth of the segments against the median of the last tenth must stay flat (ratio ≤ 1.25), where
one run of 100,000 operations would resume 100 times slower than one of 1,000.

Default store: a SQLite file in a temporary folder; ``--store postgresql://…`` creates and
drops a scratch database on that server. ``--quick``: sizes 10, 1,000 and 10,000 with 3 runs
each, and a chain of 20 segments of 1,000. Each size's first resume is not timed (it warms
the process up), and the heap is frozen once the engine is open, as ``tarry worker`` does.

Times are the process's CPU time (its store threads included; not the PostgreSQL server's)
and wall time; the targets are judged on CPU time, because this machine's two cores are
shared and the wall time of a resume measures the neighbours' load as much as the resume.
"""

from __future__ import annotations

import argparse
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
    median,
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
from tarry.engine.starting import new_run_id
from tarry.engine.worker import freeze_heap
from tarry.model import JournalEntry, NewRun, RunRecord, RunStatus
from tarry.store import open_store
from tarry.store.base import Store

FLOW = "bench-replay"
CHAIN = "bench-chain"
WAIT = timedelta(hours=1)
LIMIT_US = 10.0
"""The most a resume may cost per recorded operation, in µs."""
FLAT = 1.25
"""How much slower the last segments' resumes may be than the first ones'."""
TEMPLATE_STEPS = 3
SMALL, SMALL_MORE = 100, 10
"""Sizes up to SMALL operations resume SMALL_MORE times as many runs: their resume differs
from the fixed part by a fraction of a millisecond, so their medians need more samples."""


def _noop(index: int) -> dict[str, int]:
    return {"index": index}


def replay_app() -> App:
    """Two flows: N recorded steps, then a one-hour wait, then return N; and a chain that
    records ``ops`` operations, waits an hour and continues as new, ``segments`` times."""
    app = App()

    @app.flow(FLOW)
    async def replayed(ctx: Context, steps: int) -> int:
        for index in range(steps):
            await ctx.step(f"step-{index}", _noop, index)
        await ctx.wait("gate", WAIT)
        return steps

    @app.flow(CHAIN)
    async def chain(ctx: Context, ops: int, segments: int, segment: int = 1) -> int:
        for index in range(ops):
            ctx.now(f"op-{index}")
        await ctx.wait("gate", WAIT)
        if segment < segments:
            ctx.continue_as_new(ops=ops, segments=segments, segment=segment + 1)
        return segment

    return app


def step_entry(index: int) -> JournalEntry:
    """The journal entry the engine records for step ``index`` of the replayed flow."""
    return JournalEntry("op", f"step-{index}",
                        {"in": "", "kind": "step", "entry": {"result": _noop(index)}})


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


def _engine(url: str, folder: Path, clock: VirtualClock, store: Store) -> Engine:
    """The engine over ``store``, its heap frozen as ``tarry worker`` freezes it."""
    settings = load_settings(folder, env={"TARRY_DATABASE": url})
    engine = Engine.from_settings(settings, clock=clock, store=store, app=replay_app())
    freeze_heap()
    return engine


async def _template(engine: Engine, clock: VirtualClock) -> RunRecord:
    """A run of the replayed flow executed for real up to its wait; its journal must be
    exactly what :func:`step_entry` imports."""
    run_id = engine.start(FLOW, {"steps": TEMPLATE_STEPS}).id
    record = await engine.drive(run_id)
    journal = engine.store.journals([run_id])[run_id]
    expected = [step_entry(index) for index in range(TEMPLATE_STEPS)]
    assert journal == expected, f"the engine now records {journal}, not {expected}"
    assert record.status is RunStatus.WAITING, record
    return record


def _imported(template: RunRecord, steps: int, now: Any) -> NewRun:
    """A waiting run of the replayed flow that recorded ``steps`` steps, as ``template``
    (a real one) is, but for its size."""
    return NewRun(id=new_run_id(), flow=FLOW, flow_digest=template.flow_digest,
                  status=RunStatus.WAITING, inputs={"steps": steps}, target=None,
                  created_at=now, due_at=template.due_at, state=template.state,
                  waiting_for=template.waiting_for,
                  journal=tuple(step_entry(index) for index in range(steps)))


async def measure_size(url: str, folder: Path, steps: int, runs: int) -> dict[str, Any]:
    """Resume ``runs`` runs that recorded ``steps`` operations each; the figures."""
    store = CountingStore(open_store(url))
    clock = VirtualClock()
    engine = _engine(url, folder, clock, store)
    try:
        template = await _template(engine, clock)
        warm, *imported = [_imported(template, steps, clock.now()) for _ in range(runs + 1)]
        store.create_runs([(run, []) for run in [warm, *imported]])
        clock.advance(WAIT)
        await engine.drive(warm.id)  # not timed: the first resume of a process warms it up
        walls, cpus, calls = [], [], Counter[str]()
        for run in imported:
            store.calls.clear()
            record, wall, cpu = await _timed(engine, run.id)
            walls.append(wall)
            cpus.append(cpu)
            calls += store.calls
            assert (record.status, record.result) == (RunStatus.SUCCEEDED, steps), record
    finally:
        engine.close()
    return {"recorded_ops": steps, "runs": runs,
            "resume_ms": {"median": median(walls), "p90": percentile(walls, 90)},
            "resume_cpu_ms": {"median": median(cpus), "p90": percentile(cpus, 90)},
            "store_calls_per_resume": {name: count / runs for name, count in sorted(calls.items())}}


async def _timed(engine: Engine, run_id: str) -> tuple[RunRecord, float, float]:
    """Resume ``run_id`` (``Engine.drive``); the run, and the wall and CPU time it took, ms
    (the process's CPU time: the store's threads included, the PostgreSQL server not)."""
    wall, cpu = time.perf_counter(), time.process_time()
    record = await engine.drive(run_id)
    return (record, (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000)


async def measure_chain(url: str, folder: Path, segments: int, ops: int) -> dict[str, Any]:
    """Run the chain of ``segments`` runs of ``ops`` operations each; each segment's resume
    time, in ms, in order."""
    store = open_store(url)
    clock = VirtualClock()
    engine = _engine(url, folder, clock, store)
    walls: list[float] = []
    cpus: list[float] = []
    try:
        run_id = engine.start(CHAIN, {"ops": ops, "segments": segments}).id
        for segment in range(1, segments + 1):
            record = await engine.drive(run_id)  # records its operations, then waits
            assert record.status is RunStatus.WAITING, record
            clock.advance(WAIT)
            record, wall, cpu = await _timed(engine, run_id)  # replays, then continues
            walls.append(wall)
            cpus.append(cpu)
            last = segment == segments
            assert (record.status, record.exit) == (
                RunStatus.SUCCEEDED, "completed" if last else "continued"), record
            following = store.continued_as(run_id)
            assert (following is None) == last, following
            run_id = following or run_id
    finally:
        engine.close()
    tenth = max(1, segments // 10)
    return {"segments": segments, "ops_per_segment": ops, "total_ops": segments * ops,
            "resume_ms": walls, "resume_cpu_ms": cpus,
            "first_tenth_ms": median(walls[:tenth]), "last_tenth_ms": median(walls[-tenth:]),
            "first_tenth_cpu_ms": median(cpus[:tenth]),
            "last_tenth_cpu_ms": median(cpus[-tenth:])}


async def measure(base: str, folder: Path, sizes: Sequence[int], runs: int, *,
                  segments: int, ops: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every size (and 0, the fixed part) on a fresh database of its own, then the chain."""
    results = []
    for steps in [0, *sizes]:
        count = runs * SMALL_MORE if steps <= SMALL else runs
        say(f"{steps} recorded operations: {count} runs")
        with scratch_store(base, f"replay{steps}") as url:
            results.append(await measure_size(url, folder, steps, count))
    say(f"a chain of {segments} runs of {ops} operations")
    with scratch_store(base, "chain") as url:
        chain = await measure_chain(url, folder, segments, ops)
    return results, chain


def per_operation(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each size's cost per operation, µs, in CPU and wall time: marginal (without the fixed
    part, the resume at 0 operations) and whole (with it)."""
    figures = []
    for result in results[1:]:
        figure = dict(result)
        for clock, key in (("cpu", "resume_cpu_ms"), ("wall", "resume_ms")):
            fixed, whole = results[0][key]["median"], result[key]["median"]
            figure[f"marginal_{clock}_us_per_op"] = (whole - fixed) * 1000 / result["recorded_ops"]
            figure[f"whole_{clock}_us_per_op"] = whole * 1000 / result["recorded_ops"]
        figures.append(figure)
    return figures


def targets(sizes: list[dict[str, Any]], chain: dict[str, Any]) -> list[Target]:
    """Each size's marginal CPU cost within the limit; the chain's resumes flat (CPU)."""
    goals = [Target(f"{size['recorded_ops']:,} ops: marginal CPU µs per op ÷ {LIMIT_US:g} µs",
                    size["marginal_cpu_us_per_op"] / LIMIT_US, high=1.0) for size in sizes]
    goals.append(Target("chain: last tenth ÷ first tenth of segment resumes (CPU)",
                        chain["last_tenth_cpu_ms"] / chain["first_tenth_cpu_ms"], high=FLAT))
    return goals


def table_rows(fixed: dict[str, Any], sizes: list[dict[str, Any]], chain: dict[str, Any],
               goals: list[Target]) -> list[tuple[str, str, str]]:
    """The printed table: the fixed part, each size with its target, the store calls, the
    chain with its target (the JSON has every figure)."""
    def verdict(goal: Target) -> str:
        return f"{goal.value:.2f} ({goal.bounds}) {'ok' if goal.passed else 'MISSED'}"

    rows = [("0 ops (the fixed part): resume ms, CPU / wall",
             f"{fixed['resume_cpu_ms']['median']:.2f} / {fixed['resume_ms']['median']:.2f}",
             "")]
    for size, goal in zip(sizes, goals, strict=False):
        rows.append((f"{size['recorded_ops']:,} ops: resume ms, CPU / wall; µs per op "
                     "(marginal), CPU / wall",
                     f"{size['resume_cpu_ms']['median']:.2f} / {size['resume_ms']['median']:.2f}"
                     f"; {size['marginal_cpu_us_per_op']:.2f} / "
                     f"{size['marginal_wall_us_per_op']:.2f}", verdict(goal)))
    calls = {", ".join(f"{name} {count:g}" for name, count in
                       size["store_calls_per_resume"].items()) for size in sizes}
    rows.append(("store calls per resume, every size", " | ".join(sorted(calls)), ""))
    rows.append((f"chain of {chain['segments']} × {chain['ops_per_segment']:,} ops: segment "
                 "resume ms, first / last tenth, CPU; wall",
                 f"{chain['first_tenth_cpu_ms']:.2f} / {chain['last_tenth_cpu_ms']:.2f}; "
                 f"{chain['first_tenth_ms']:.2f} / {chain['last_tenth_ms']:.2f}",
                 verdict(goals[-1])))
    return rows


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true",
                        help="3 runs per size and a chain of 20 segments")
    parser.add_argument("--sizes", default="10,1000,10000",
                        help="recorded operations per run, comma-separated "
                             "(default 10,1000,10000)")
    parser.add_argument("--runs", type=int, help="runs resumed per size (default 10; quick 3)")
    parser.add_argument("--segments", type=int,
                        help="runs in the chain (default 100; quick 20)")
    parser.add_argument("--segment-ops", type=int, default=1000,
                        help="operations each run of the chain records (default 1000)")
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
    runs = args.runs or (3 if args.quick else 10)
    segments = args.segments or (20 if args.quick else 100)
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tarry-bench-") as folder:
        base = args.store or f"sqlite:///{folder}/bench.db"
        platform_facts = machine(base)
        results, chain = eventloop.run(measure(base, Path(folder), sizes, runs,
                                               segments=segments, ops=args.segment_ops))
    per_size = per_operation(results)
    goals = targets(per_size, chain)
    finished_at = iso(SystemClock().now())
    document = {
        "benchmark": "sdk_replay",
        "finished_at": finished_at,
        "seconds": time.perf_counter() - began,
        "machine": platform_facts,
        "preset": "quick" if args.quick else "full",
        "fixed": results[0],
        "sizes": per_size,
        "chain": chain,
        "targets": [goal.document() for goal in goals],
        "passed": all(goal.passed for goal in goals),
    }
    print_table(f"tarry Python-flow resume cost: {platform_facts['store']}, "
                f"{platform_facts['nproc']} cores, Python {platform_facts['python']}, "
                f"load average {platform_facts['load_average'][0]:.1f}, "
                f"{'quick' if args.quick else 'full'} preset, {finished_at[:10]}",
                table_rows(results[0], per_size, chain, goals),
                markdown=args.markdown)
    write_json(args.json, document)
    say(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a checkpoint and a resume cost against the steps a run already completed.

    nice -n 10 .venv/bin/python bench/checkpoints.py [--quick] [--sizes 10,1000,10000]
                                                     [--workloads python,yaml,...]
                                                     [--runs 3] [--binding-bytes 1000]
                                                     [--store URL] [--json PATH]

Five workloads (``--workloads`` picks some), each at every size N (completed steps), each
size on a fresh database:

- **python** — a Python flow of N steps (each one checkpointed), then a one-hour wait;
- **python-map** — a Python flow's ``ctx.map`` over N items, one step in each branch, then
  a one-hour wait;
- **yaml** — a YAML flow of N action steps (each followed by a checkpoint), then a one-hour
  wait, then a step that reads the first step's binding;
- **yaml-large** — the same with bindings of ``--binding-bytes`` each;
- **for_each** — a sequential ``for_each`` over N items, one action step each, then a wait.

Per workload and size: **first execution** (wall time to run the N steps up to the wait)
and the **bytes written** by this process meanwhile (``/proc/self/io``), then the median
**resume** (wall time of one wake after the wait: claim, read what the resume needs,
advance, commit). The store's raw rate of minimal durable transactions is measured in the
same run as the reference. Targets: the 10,000-step Python flow's first execution within
10× the 1,000-step one, and the resume flat (within ±20 %) from 10 to 10,000 steps.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import (
    Target,
    benchmark_parser,
    chosen_sizes,
    measure_limit,
    median,
    run_on_store,
    say,
    scratch_store,
)

from tarry import App, Context, eventloop
from tarry.testing import Harness

START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
WAIT = timedelta(hours=1)


@dataclass(frozen=True)
class Sizes:
    """How much to measure."""

    sizes: str = "10,1000,10000"
    workloads: str = "python,python-map,yaml,yaml-large,for_each"
    runs: int = 3
    binding_bytes: int = 1000
    limit_seconds: float = 1.0


FULL = Sizes()
QUICK = Sizes(sizes="10,100,1000", runs=2, limit_seconds=0.5)


def _noop(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return dict(args)


def _python_app() -> App:
    app = App()

    @app.flow("bench-python")
    async def steps(ctx: Context, n: int) -> int:
        for index in range(n):
            await ctx.step(f"s{index}", _index, index)
        await ctx.wait("nap", WAIT)
        return n

    @app.flow("bench-python-map")
    async def mapped(ctx: Context, n: int) -> int:
        await ctx.map(_one_step, range(n))
        await ctx.wait("nap", WAIT)
        return n

    return app


async def _one_step(ctx: Context, index: int) -> int:
    return await ctx.step("one", _index, index)


def _index(index: int) -> int:
    return index


def _yaml(n: int, pad: int) -> str:
    filler = "x" * pad
    body = "".join(f"  - s{i}: {{ noop: {{ i: {i}, pad: \"{filler}\" }} }}\n" for i in range(n))
    return (f"flow: bench-yaml\nsteps:\n{body}  - nap: {{ wait: {{ for: 1h }} }}\n"
            "  - last: { set: { first: \"{{ s0.i }}\" } }\n")


def _for_each(_n: int, _pad: int) -> str:
    return ("flow: bench-each\ninputs:\n  items: { type: array, required: true }\nsteps:\n"
            "  - each:\n      for_each: \"{{ items }}\"\n"
            "      steps:\n        - one: { noop: { i: \"{{ item }}\" } }\n"
            "  - nap: { wait: { for: 1h } }\n")


Workload = tuple[str, Callable[[int, int], str] | None, int]
"""(name, the YAML source for N steps — None for a Python flow, ``bench-<name>`` —, binding
padding)."""


def workloads(sizes: Sizes) -> list[Workload]:
    """The workloads ``--workloads`` names (default: all five)."""
    every = [("python", None, 0), ("python-map", None, 0), ("yaml", _yaml, 10),
             ("yaml-large", _yaml, sizes.binding_bytes),
             ("for_each", _for_each, 0)]
    chosen = sizes.workloads.split(",")
    unknown = set(chosen) - {name for name, _, _ in every}
    if unknown:
        raise SystemExit(f"unknown workloads: {', '.join(sorted(unknown))}")
    return [workload for workload in every if workload[0] in chosen]


def written_bytes() -> int:
    """Bytes this process has caused to be written to storage so far."""
    for line in Path("/proc/self/io").read_text(encoding="utf-8").splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


async def measure(url: str, folder: Path, workload: Workload, n: int,
                  runs: int) -> dict[str, Any]:
    """One workload at one size on the store at ``url``."""
    name, source, pad = workload
    h = Harness(folder, start=START, store_url=url, actions={"noop": _noop},
                app=_python_app())
    try:
        flow: Any = h.flow(source(n, pad)) if source else f"bench-{name}"
        inputs = ({"n": n} if source is None else
                  {"items": list(range(n))} if name == "for_each" else None)
        bytes_before, began = written_bytes(), time.perf_counter()
        first = h.start(flow, inputs)
        await h.run_due()
        first_seconds = time.perf_counter() - began
        written = written_bytes() - bytes_before
        others = [h.start(flow, inputs) for _ in range(runs)]  # the first resume warms up
        await h.run_due()
        h.clock.set(h.clock.now() + WAIT)
        resumes = []
        for run_id in [first, *others]:
            started = time.perf_counter()
            record = await h.engine.drive(run_id)
            resumes.append((time.perf_counter() - started) * 1000)
            assert record.status.value == "succeeded", (name, n, record.error)
        del resumes[0]
    finally:
        h.close()
    return {"workload": name, "steps": n, "first_execution_seconds": first_seconds,
            "written_bytes": written, "resume_ms": median(resumes)}


async def measure_all(base: str, folder: Path, sizes: Sizes) -> list[dict[str, Any]]:
    """Every workload at every size, each on a fresh database."""
    results = []
    for workload in workloads(sizes):
        for n in [int(size) for size in sizes.sizes.split(",")]:
            say(f"{workload[0]}: {n} steps")
            with scratch_store(base, f"checkpoints_{workload[0].replace('-', '_')}_{n}") as url:
                results.append(await measure(url, folder / f"{workload[0]}-{n}", workload, n,
                                             sizes.runs))
    return results


def measure_store(base: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    """The store's limit, then every workload at every size."""
    with scratch_store(base, "checkpoints_limit") as url:
        limit = measure_limit(url, seconds=sizes.limit_seconds).per_second
    return {"limit_per_second": limit, "results": eventloop.run(measure_all(base, folder, sizes))}


def targets(document: dict[str, Any]) -> list[Target]:
    """Linear first execution (Python: 10,000 steps within 10× 1,000) and a flat resume."""
    results = document["results"]
    by = {(r["workload"], r["steps"]): r for r in results}
    goals = []
    if ("python", 1000) in by and ("python", 10000) in by:
        goals.append(Target("python first execution, 10,000 ÷ 1,000 steps",
                            by["python", 10000]["first_execution_seconds"]
                            / by["python", 1000]["first_execution_seconds"], high=10.0))
    steps = sorted({r["steps"] for r in results})
    for workload in ("python", "yaml", "yaml-large"):
        if (workload, steps[0]) in by and (workload, steps[-1]) in by:
            goals.append(Target(f"{workload} resume, {steps[-1]:,} ÷ {steps[0]:,} steps",
                                by[workload, steps[-1]]["resume_ms"]
                                / by[workload, steps[0]]["resume_ms"], low=0.8, high=1.2))
    return goals


def table_rows(document: dict[str, Any], goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """The limit, one row per workload and size, then the targets."""
    results = document["results"]
    rows = [("raw durable transactions/s", f"{document['limit_per_second']:,.0f}", "")]
    rows += [(f"{r['workload']} {r['steps']:,}: first run s / MB written / resume ms",
              f"{r['first_execution_seconds']:.3f} / "
              f"{r['written_bytes'] / 1e6:.1f} / {r['resume_ms']:.2f}", "") for r in results]
    rows += [(goal.name, f"{goal.value:.2f}",
              f"{goal.bounds} {'ok' if goal.passed else 'MISSED'}") for goal in goals]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = benchmark_parser("checkpoints", __doc__, FULL).parse_args(argv)
    return run_on_store("checkpoints", args, chosen_sizes(args, FULL, QUICK),
                        measure=measure_store, targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

"""Waiting for capacity: runs queued on concurrency keys, handed their slot as others end.

    nice -n 10 .venv/bin/python bench/slots.py [--quick] [--store URL] [--json PATH]
                                               [--runs N] [--keys N] [--limit N]

A flow with ``concurrency: {key: "{{ k }}", limit: L}`` whose runs hold their slot through a
5 ms timer, then log. Per store, on a
fresh database each, ``--runs`` runs are started at once (``start_many``) and one in-process
worker works until every run has ended:

- **one key** — every run on one key of limit 1: the runs go through one at a time, each
  started by the transaction that ended the one before;
- **many keys** — the runs spread over ``--keys`` keys of limit ``--limit``;
- **limit** — the store's raw rate of minimal durable transactions, measured in the same run.

From the history: the hand-over latency (a holder's end to the next run's ``slot.taken``,
p50/p99), the runs ended per second and that rate against the raw rate, and the most runs
of one key ever inside their steps at once (which must not pass the key's limit). Without
``--store``, a SQLite file and, when ``TARRY_TEST_POSTGRES`` names a server, a scratch
PostgreSQL database.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    Target,
    chosen_sizes,
    measure_limit,
    percentile,
    run_per_store,
    say,
    scratch_store,
    store_benchmark_args,
    store_kind,
)

from tarry import eventloop
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus
from tarry.store import open_store
from tarry.store.sqlstore import SqlStore

FLOW = """\
flow: paced
inputs:
  k: {{ type: string, required: true }}
concurrency: {{ key: "{{{{ k }}}}", limit: {limit} }}
steps:
  - work: {{ wait: {{ for: 5ms }} }}
  - done: {{ log: {{ message: "{{{{ k }}}}" }} }}
"""


@dataclass(frozen=True)
class Sizes:
    """How much to measure."""

    runs: int = 10_000
    keys: int = 100
    limit: int = 10
    limit_seconds: float = 1.0


FULL = Sizes()
QUICK = Sizes(runs=1_000, keys=20, limit_seconds=0.5)


def project(folder: Path, url: str, limit: int) -> Engine:
    """An engine over the store at ``url`` for a project holding the ``paced`` flow."""
    flows = folder / "flows"
    flows.mkdir(parents=True, exist_ok=True)
    (flows / "paced.yaml").write_text(FLOW.format(limit=limit), encoding="utf-8")
    return Engine.from_settings(load_settings(folder, env={"TARRY_DATABASE": url}))


def work_until_done(engine: Engine, runs: int) -> None:
    """One worker, in this process, until every run of the flow has ended."""
    async def main() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(engine.worker(concurrency=64).run(stop))
        while True:
            counts = await engine.async_store.count_runs_per_status(flow="paced")
            if sum(counts.get(status, 0) for status in RunStatus if status.is_terminal) >= runs:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await worker

    eventloop.run(main())


@dataclass(frozen=True)
class Span:
    """One run's holding of its key's slot: from its ``slot.taken`` entry to its end, as
    instants (epoch ms) and as the entries' places in the history (its order of writes)."""

    start: int
    end: int
    start_seq: int
    end_seq: int


def spans_by_key(url: str) -> dict[str, list[Span]]:
    """Per key, each run's :class:`Span`, from the history."""
    store = open_store(url)
    assert isinstance(store, SqlStore)
    try:
        with store._transaction(write=False) as tx:
            tx.cursor.execute(
                "SELECT h.id, h.run_id, h.kind, h.at, r.inputs FROM history h JOIN runs r "
                "ON r.id = h.run_id WHERE h.kind IN ('slot.taken', 'succeeded', 'failed')")
            found = tx.cursor.fetchall()
    finally:
        store.close()
    taken: dict[str, tuple[int, int]] = {}
    ended: dict[str, tuple[int, int]] = {}
    keys: dict[str, str] = {}
    for row in found:
        inputs = row["inputs"] if isinstance(row["inputs"], dict) else json.loads(row["inputs"])
        keys[row["run_id"]] = inputs["k"]
        place = (int(row["at"]), int(row["id"]))
        (taken if row["kind"] == "slot.taken" else ended)[row["run_id"]] = place
    by_key: dict[str, list[Span]] = defaultdict(list)
    for run_id, (start, start_seq) in taken.items():
        end, end_seq = ended[run_id]
        by_key[keys[run_id]].append(Span(start, end, start_seq, end_seq))
    return by_key


def most_at_once(spans: list[Span]) -> int:
    """The most spans open at once, in the order the history was written (a run's slot is
    handed over by the transaction that writes its end, before the next run's start is
    written; instants alone cannot order what happens within one millisecond)."""
    edges = sorted([(span.end_seq, -1) for span in spans]
                   + [(span.start_seq, 1) for span in spans])
    most = inside = 0
    for _, step in edges:
        inside += step
        most = max(most, inside)
    return most


def hand_overs(spans: list[Span], limit: int) -> list[int]:
    """Each run's wait from the end that freed its slot to its own start (ms): the j-th start
    after the first ``limit`` takes the slot of the j-th end."""
    starts = sorted(span.start for span in spans)[limit:]
    ends = sorted(span.end for span in spans)
    return [start - end for start, end in zip(starts, ends, strict=False)]


def phase(base: str, folder: Path, name: str, *, runs: int, keys: int,
          limit: int) -> dict[str, Any]:
    """Start ``runs`` runs over ``keys`` keys of ``limit``, work them, read the history."""
    with scratch_store(base, f"slots_{name}") as url:
        engine = project(folder / name, url, limit)
        try:
            say(f"{store_kind(base)}: {runs} runs on {keys} key(s) of limit {limit}")
            for first in range(0, runs, 1000):
                engine.start_many("paced", [{"k": f"key-{n % keys}"}
                                            for n in range(first, min(first + 1000, runs))])
            work_until_done(engine, runs)
        finally:
            engine.close()
        spans = spans_by_key(url)
    every = [span for each in spans.values() for span in each]
    waits = [wait for each in spans.values() for wait in hand_overs(each, limit)] or [0]
    seconds = (max(span.end for span in every) - min(span.start for span in every)) / 1000
    return {"runs": runs, "keys": keys, "limit": limit, "ended": len(every),
            "per_second": len(every) / max(seconds, 0.001),
            "hand_over_ms_p50": percentile(waits, 50), "hand_over_ms_p99": percentile(waits, 99),
            "most_at_once": max(most_at_once(each) for each in spans.values())}


def measure_store(base: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    """Every figure on one store kind."""
    kind = store_kind(base)
    with scratch_store(base, "slots_limit") as url:
        say(f"{kind}: raw durable transactions")
        limit = measure_limit(url, seconds=sizes.limit_seconds)
    folder = folder / kind
    folder.mkdir()
    return {"store": kind, "limit_per_second": limit.per_second,
            "one_key": phase(base, folder, "one_key", runs=sizes.runs, keys=1, limit=1),
            "many_keys": phase(base, folder, "many_keys", runs=sizes.runs, keys=sizes.keys,
                               limit=sizes.limit)}


def _label(result: dict[str, Any], name: str) -> str:
    """``sqlite, 100×10``: the store, then runs a key × the key's limit."""
    got = result[name]
    return f"{result['store']}, {got['runs'] // got['keys']:,}×{got['limit']}"


def targets(results: Sequence[dict[str, Any]]) -> list[Target]:
    """No key ever over its limit."""
    return [Target(f"{_label(result, name)}: most at once",
                   result[name]["most_at_once"], high=result[name]["limit"])
            for result in results for name in ("one_key", "many_keys")]


def table_rows(results: Sequence[dict[str, Any]],
               goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """One group of rows per store and phase (``runs a key × limit``), then the targets."""
    rows = []
    for result in results:
        raw = result["limit_per_second"]
        rows.append((f"{result['store']}: raw durable tx/s", f"{raw:,.0f}", ""))
        for name in ("one_key", "many_keys"):
            got = result[name]
            rows += [
                (f"{_label(result, name)}: hand-over p50 / p99 ms; runs/s (× raw)",
                 f"{got['hand_over_ms_p50']:.0f} / {got['hand_over_ms_p99']:.0f}; "
                 f"{got['per_second']:,.0f} ({got['per_second'] / raw:.2f}×)", ""),
            ]
    rows += [(goal.name, f"{goal.value:,.0f}", f"{goal.bounds} "
              f"{'ok' if goal.passed else 'MISSED'}") for goal in goals]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = store_benchmark_args("slots", __doc__, FULL, argv)
    return run_per_store("slots", args, chosen_sizes(args, FULL, QUICK), measure=measure_store,
                         targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

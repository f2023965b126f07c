"""``tarry serve`` under load: HTTP starts and events per second, send-to-resume, loop lag.

    nice -n 10 .venv/bin/python bench/serve.py [--quick] [--store URL] [--json PATH]
        [--clients N] [--starts N] [--events N] [--resumes N] [--timers N]

Per store, each phase on a fresh database of its own:

- **limit** — the store's raw rate of minimal durable transactions on this machine, measured
  in the same run (the physical limit behind every acknowledged start and event);
- **HTTP** — ``tarry serve`` in its own process (port 0); ``--clients`` concurrent clients on
  keep-alive connections send ``--starts`` ``POST /v1/runs`` and then ``--events`` ``POST
  /v1/events/{type}`` (events no run waits for: recorded, unmatched); starts/s, events/s and
  the HTTP latency p50/p99 of each;
- **send-to-resume** — in-process: ``--resumes`` runs wait for an event; one event at a time
  is sent through the engine's async boundary and the worker woken, as the server does; the
  time from the event's receipt to the run's resume (its ``event.received`` history entry);
- **loop lag** — in-process: ``--timers`` runs wait on timers that fall due together; while
  the worker wakes them all, a probe measures how late the event loop runs a 5 ms sleep.

Targets: send-to-resume p99 <= 15 ms on SQLite; loop lag p99 <= 10 ms on both stores. Without
``--store``, a SQLite file in a temporary folder and, when ``TARRY_TEST_POSTGRES`` names a
server, a scratch PostgreSQL database are measured.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
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
from tarry.clock import from_iso
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus


@dataclass(frozen=True)
class Sizes:
    """How much work each phase does."""

    clients: int
    starts: int
    events: int
    resumes: int
    timers: int
    limit_seconds: float


FULL = Sizes(clients=8, starts=2000, events=2000, resumes=300, timers=10_000, limit_seconds=2.0)
QUICK = Sizes(clients=4, starts=400, events=400, resumes=100, timers=2000, limit_seconds=0.5)

EVENTS = """\
events:
  bench.reply:
    correlate_on: [key]
    buffer: 0
"""
FLOWS = {
    "nap": "flow: nap\nsteps:\n  - nap:\n      wait: { for: 1d }\n",
    "reply": ("flow: reply\ninputs:\n  key: { type: string, required: true }\nsteps:\n"
              "  - reply:\n      wait_for: bench.reply\n      match: { key: \"{{ key }}\" }\n"
              "      timeout: 1h\n"),
    "tick": ("flow: tick\ninputs:\n  at: { type: string, required: true }\nsteps:\n"
             "  - tick:\n      wait: { until: \"{{ at }}\" }\n"),
}


def project(folder: Path, url: str) -> Path:
    """A project with the benchmark's flows and event type on ``url``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "flows").mkdir(exist_ok=True)
    for name, text in FLOWS.items():
        (folder / "flows" / f"{name}.yaml").write_text(text)
    (folder / "events.yaml").write_text(EVENTS)
    (folder / "tarry.toml").write_text(f'[tarry]\ndatabase = "{url}"\n')
    return folder


# -- HTTP ------------------------------------------------------------------------------------

@contextmanager
def served(root: Path) -> Iterator[str]:
    """``tarry serve`` on a free port in its own process; its base URL."""
    tarry = Path(sys.executable).with_name("tarry")
    process = subprocess.Popen([str(tarry), "serve", "--port", "0"], cwd=root,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TARRY_DATABASE": ""})
    assert process.stderr is not None
    try:
        for line in process.stderr:
            found = re.search(r"running on (http://127\.0\.0\.1:\d+)", line)
            if found:
                break
        else:
            raise RuntimeError("tarry serve did not start")
        threading.Thread(target=process.stderr.read, daemon=True).start()
        yield found.group(1)
    finally:
        process.terminate()
        process.wait(timeout=60)


def _load(url: str, clients: int, bodies: list[tuple[str, dict[str, Any]]]) -> dict[str, float]:
    """Send ``bodies`` (path, JSON) from ``clients`` keep-alive clients at once."""
    latencies: list[float] = []
    lock = threading.Lock()
    share = [bodies[index::clients] for index in range(clients)]

    def client(work: list[tuple[str, dict[str, Any]]]) -> None:
        mine = []
        with httpx.Client(base_url=url, timeout=60) as http:
            for path, body in work:
                began = time.perf_counter()
                response = http.post(path, json=body)
                mine.append(time.perf_counter() - began)
                assert response.status_code in (201, 202), response.text
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(work,)) for work in share]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    return {"per_second": len(bodies) / elapsed, "p50_ms": percentile(latencies, 50) * 1000,
            "p99_ms": percentile(latencies, 99) * 1000}


def measure_http(root: Path, sizes: Sizes) -> dict[str, Any]:
    """Starts and events over HTTP against a served project."""
    with served(root) as url:
        with httpx.Client(base_url=url) as warm:
            warm.post("/v1/runs", json={"flow": "nap"})
        starts = _load(url, sizes.clients, [("/v1/runs", {"flow": "nap"})] * sizes.starts)
        events = _load(url, sizes.clients, [("/v1/events/bench.reply",
                                             {"data": {"key": f"nobody-{n}"}})
                                            for n in range(sizes.events)])
    return {"starts": starts, "events": events}


# -- in-process: send-to-resume and loop lag -------------------------------------------------

async def _with_worker(engine: Engine, body: Any) -> Any:
    worker = engine.worker(concurrency=64)
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    try:
        return await body(worker)
    finally:
        stop.set()
        await running


def measure_resume(root: Path, count: int) -> dict[str, float]:
    """Send one event at a time to waiting runs; receipt to resume, per run."""
    engine = Engine.from_settings(load_settings(root, {}))
    try:
        ids = [engine.start("reply", {"key": f"k{n}"}).id for n in range(count)]

        async def body(worker: Any) -> list[float]:
            while engine.store.count_runs(status=RunStatus.WAITING) < count:
                await asyncio.sleep(0.01)
            for n in range(count):
                await engine.aio.send("bench.reply", {"key": f"k{n}"})
                worker.wake()
                await asyncio.sleep(0.01)
            while engine.store.count_runs(status=RunStatus.SUCCEEDED) < count:
                await asyncio.sleep(0.01)
            return [_resume_seconds(engine, run_id) for run_id in ids]

        delays = eventloop.run(_with_worker(engine, body))
    finally:
        engine.close()
    return {"p50_ms": percentile(delays, 50) * 1000, "p99_ms": percentile(delays, 99) * 1000}


def _resume_seconds(engine: Engine, run_id: str) -> float:
    history = engine.store.history(run_id)
    received = next(entry for entry in history if entry.kind == "event.received")
    event = engine.store.get_event(received.data["event_id"])
    return (received.at - event.received_at).total_seconds()


def measure_lag(root: Path, count: int) -> dict[str, float]:
    """Wake ``count`` timers that fall due together; the loop's lag meanwhile."""
    engine = Engine.from_settings(load_settings(root, {}))
    try:
        due = engine.clock.now().timestamp() + 3 + count / 5000
        at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(due) + 1)) + "Z"
        engine.start_many("tick", [{"at": at}] * count)
        lags: list[float] = []

        async def body(worker: Any) -> float:
            loop = asyncio.get_running_loop()
            while engine.store.count_runs(status=RunStatus.SUCCEEDED) < count:
                expected = loop.time() + 0.005
                await asyncio.sleep(0.005)
                if engine.clock.now() >= from_iso(at):
                    lags.append(loop.time() - expected)
            return engine.clock.now().timestamp() - from_iso(at).timestamp()

        woken_in = eventloop.run(_with_worker(engine, body))
    finally:
        engine.close()
    return {"p50_ms": percentile(lags, 50) * 1000, "p99_ms": percentile(lags, 99) * 1000,
            "max_ms": max(lags) * 1000, "wakes_per_second": count / max(woken_in, 1e-9)}


def measure_store(base: str, folder: Path, sizes: Sizes) -> dict[str, Any]:
    """Every figure on one store kind, each phase on a fresh database."""
    kind = store_kind(base)
    with scratch_store(base, "serve_limit") as url:
        say(f"{kind}: raw durable transactions")
        limit = measure_limit(url, seconds=sizes.limit_seconds)
    with scratch_store(base, "serve_http") as url:
        say(f"{kind}: {sizes.starts} starts and {sizes.events} events over HTTP")
        http = measure_http(project(folder / f"{kind}-http", url), sizes)
    with scratch_store(base, "serve_resume") as url:
        say(f"{kind}: send-to-resume of {sizes.resumes} events")
        resume = measure_resume(project(folder / f"{kind}-resume", url), sizes.resumes)
    with scratch_store(base, "serve_lag") as url:
        say(f"{kind}: loop lag while {sizes.timers} timers wake")
        lag = measure_lag(project(folder / f"{kind}-lag", url), sizes.timers)
    return {"store": kind, "limit_per_second": limit.per_second, "http": http,
            "send_to_resume": resume, "loop_lag": lag}


def targets(results: Sequence[dict[str, Any]]) -> list[Target]:
    """Send-to-resume p99 on SQLite; loop lag p99 on every store."""
    goals = [Target(f"{r['store']} loop lag p99 ms", r["loop_lag"]["p99_ms"], high=10)
             for r in results]
    goals += [Target("sqlite send-to-resume p99 ms", r["send_to_resume"]["p99_ms"], high=15)
              for r in results if r["store"] == "sqlite"]
    return goals


def table_rows(results: Sequence[dict[str, Any]],
               goals: Sequence[Target]) -> list[tuple[str, str, str]]:
    """One group of rows per store, then the targets."""
    rows = []
    for result in results:
        kind, http = result["store"], result["http"]
        rows += [
            (f"{kind}: raw durable transactions/s", f"{result['limit_per_second']:,.0f}", ""),
            (f"{kind}: HTTP starts/s", f"{http['starts']['per_second']:,.0f}", ""),
            (f"{kind}: HTTP start p50 / p99 ms",
             f"{http['starts']['p50_ms']:.1f} / {http['starts']['p99_ms']:.1f}", ""),
            (f"{kind}: HTTP events/s", f"{http['events']['per_second']:,.0f}", ""),
            (f"{kind}: HTTP event p50 / p99 ms",
             f"{http['events']['p50_ms']:.1f} / {http['events']['p99_ms']:.1f}", ""),
            (f"{kind}: send-to-resume p50 / p99 ms",
             f"{result['send_to_resume']['p50_ms']:.1f} / "
             f"{result['send_to_resume']['p99_ms']:.1f}", ""),
            (f"{kind}: loop lag p50 / p99 / max ms",
             f"{result['loop_lag']['p50_ms']:.1f} / {result['loop_lag']['p99_ms']:.1f} / "
             f"{result['loop_lag']['max_ms']:.1f}", ""),
            (f"{kind}: timer wakes/s", f"{result['loop_lag']['wakes_per_second']:,.0f}", ""),
        ]
    rows += [(goal.name, f"{goal.value:,.1f}", f"{goal.bounds} "
              f"{'ok' if goal.passed else 'MISSED'}") for goal in goals]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, print the table, write the JSON."""
    args = store_benchmark_args("serve", __doc__, FULL, argv)
    return run_per_store("serve", args, chosen_sizes(args, FULL, QUICK), measure=measure_store,
                         targets=targets, rows=table_rows)


if __name__ == "__main__":
    sys.exit(main())

"""tarry's adapter: YAML flows on the store the request names (SQLite or PostgreSQL).

Runs in the repository's own environment. The runs are started in this process with
``Engine.start`` (``start_many`` for batches) on the real clock; a worker in its own process
(``bench/common.py``'s ``WorkerProcess``, concurrency 64) executes them, so its memory is its
own. The durable wait is ``wait: {until: "{{ due }}"}``; the wait for an event is
``wait_for: bench.reply`` correlated on ``key``. A run's wake is recorded as every peer's is:
its ``done`` step (the trivial step after the wait) is the action ``bench.woke``, which
appends ``time.time()`` to the wakes log (``_kit.record_wake``); the run's history, in whole
milliseconds, would flatter tarry by up to a millisecond against the peers' microseconds.
Every system is given due instants in whole milliseconds (``_kit.due_in``), the resolution of
an ``instant`` input, so tarry waits until exactly the instant the peers are given.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/, for common

from common import WorkerProcess, store_size_bytes

from adapters import _kit
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.model import RunStatus

FLOWS = {
    "timer": """\
flow: timer
inputs:
  key: { type: string, required: true }
  due: { type: instant, required: true }
steps:
  - pause:
      wait: { until: "{{ due }}" }
  - done:
      bench.woke: { key: "{{ key }}" }
""",
    "hour": """\
flow: hour
steps:
  - pause:
      wait: { for: 1h }
  - done:
      set: { woke: true }
""",
    "day": """\
flow: day
steps:
  - pause:
      wait: { for: 1d }
  - done:
      set: { woke: true }
""",
    "reply": """\
flow: reply
inputs:
  key: { type: string, required: true }
steps:
  - reply:
      wait_for: bench.reply
      match: { key: "{{ key }}" }
      timeout: 1d
  - done:
      bench.woke: { key: "{{ key }}" }
""",
}
MANIFESTS = """\
events:
  bench.reply:
    correlate_on: [key]
"""
PROJECT = """\
[actions]
"bench.woke" = "adapters.tarry:woke"
"""
CONCURRENCY = 64
SETUP_CHUNK = 500
COUNT_POLL = 0.1
"""Seconds between two counts of the runs that succeeded (or wait), while waiting for them."""


def project(url: str) -> Engine:
    """The flows and the event manifest in the working directory, and an engine over them."""
    folder = Path.cwd()
    (folder / "flows").mkdir(exist_ok=True)
    for name, source in FLOWS.items():
        (folder / "flows" / f"{name}.yaml").write_text(source, encoding="utf-8")
    (folder / "events.yaml").write_text(MANIFESTS, encoding="utf-8")
    (folder / "tarry.toml").write_text(PROJECT, encoding="utf-8")
    return Engine.from_settings(load_settings(folder, env={"TARRY_DATABASE": url}))


def instant(epoch: float) -> str:
    """An epoch instant as the ISO text an ``instant`` input takes: whole milliseconds,
    rounded up (never before ``epoch``; ``_kit.due_in`` gives whole milliseconds already)."""
    moment = datetime.fromtimestamp(math.ceil(round(epoch * 1000, 3)) / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def woke(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The action ``bench.woke``: record that the item ``args["key"]`` woke now (in the
    worker)."""
    _kit.record_wake(args["key"])
    return {}


class Bench:
    """An engine over the request's store, a worker process, and the runs started."""

    def __init__(self, request: _kit.Request) -> None:
        self.url: str = request["store"]
        self.engine = project(self.url)

    def worker(self) -> WorkerProcess:
        """A worker process over the store (a context manager)."""
        return WorkerProcess(self.url, Path.cwd(), concurrency=CONCURRENCY)

    def start(self, flow: str, inputs: dict[str, Any]) -> None:
        """Start one run."""
        self.engine.start(flow, inputs)

    def await_waiting(self, count: int, timeout: float) -> None:
        """Return once ``count`` runs wait."""
        _kit.await_count(count, lambda: self.engine.store.count_runs(status=RunStatus.WAITING),
                         timeout, "runs waiting", poll=COUNT_POLL)

    def timer(self) -> _kit.Timer:
        """The timer workloads' runs: ``wait: {until: due}``."""
        return _kit.Timer(self.worker, lambda item, due: self.start(
            "timer", {"key": item, "due": instant(due)}))

    def close(self) -> None:
        """Release the store."""
        self.engine.close()


def with_bench(measure: Callable[[Bench, _kit.Request], _kit.Reply]) -> _kit.Handler:
    """A handler that measures on a fresh :class:`Bench`."""
    def handler(request: _kit.Request) -> _kit.Reply:
        bench = Bench(request)
        try:
            return measure(bench, request)
        finally:
            bench.close()
    return handler


def starts(bench: Bench, request: _kit.Request) -> _kit.Reply:
    """Starts one at a time, then in ``start_many`` batches (no worker running)."""
    return _kit.starts(request, lambda item: bench.start("hour", {}),
                       lambda items: bench.engine.start_many("hour", [{}] * len(items)))


def events(bench: Bench, request: _kit.Request) -> _kit.Reply:
    """Runs waiting for ``bench.reply`` with their key; ``Engine.send`` of the event, and
    ``Engine.send_many`` of a batch."""
    return _kit.events(request, _kit.Waiter(
        bench.worker, lambda key: bench.start("reply", {"key": key}), bench.await_waiting,
        lambda key: bench.engine.send("bench.reply", {"key": key}),
        lambda keys: bench.engine.send_many("bench.reply", [{"key": key} for key in keys])))


def suspension(bench: Bench, request: _kit.Request) -> _kit.Reply:
    """Runs of ``wait: {for: 1h}``, started in batches."""
    def grow(count: int, total: int) -> None:
        for chunk in _chunks(count, SETUP_CHUNK):
            bench.engine.start_many("hour", [{}] * chunk)
        bench.await_waiting(total, request["timeout_s"])

    server = _kit.SQLITE_SERVER if bench.url.startswith("sqlite") else _kit.POSTGRES_SERVER
    return _kit.suspension(request, bench.worker, grow, lambda: store_size_bytes(bench.url),
                           server=server)


def million(bench: Bench, request: _kit.Request) -> _kit.Reply:
    """``baseline`` and then ``items`` runs of ``wait: {for: 1d}`` (a day, so that none falls
    due during a long setup): created with ``start_many`` in batches of ``batch`` with no
    worker running, then taken to their wait by a worker in this process (concurrency 64,
    until nothing is due). At each size, the store's size, then a fresh worker process
    started against the store and idle ``idle_s``: its memory and threads."""
    points: list[dict[str, Any]] = []
    create_s: list[float] = []
    suspend_s: list[float] = []
    waiting = 0
    for target in (request["baseline"], request["items"]):
        began = time.perf_counter()
        for chunk in _chunks(target - waiting, request["batch"]):
            bench.engine.start_many("day", [{}] * chunk)
        create_s.append(time.perf_counter() - began)
        began = time.perf_counter()
        asyncio.run(bench.engine.worker(concurrency=CONCURRENCY, name="bench-setup").run_once())
        suspend_s.append(time.perf_counter() - began)
        found = bench.engine.store.count_runs(status=RunStatus.WAITING)
        if found != target:
            raise RuntimeError(f"{found} runs wait, not {target}")
        waiting = target
        size = store_size_bytes(bench.url)
        with bench.worker() as worker:
            time.sleep(request["idle_s"])
            points.append({"waiting": waiting, "store_bytes": size,
                           **_kit.tree_status(worker.pid)})
    return {"result": {"points": points, "create_s": create_s, "suspend_s": suspend_s},
            "notes": {"batch": request["batch"], "setup_concurrency": CONCURRENCY,
                      "wait": "1d"}}


def _chunks(count: int, size: int) -> Iterable[int]:
    while count > 0:
        yield min(count, size)
        count -= size


if __name__ == "__main__":
    _kit.serve({name: with_bench(measure) for name, measure in {
        "timers": lambda bench, request: _kit.timers(request, bench.timer()),
        "burst": lambda bench, request: _kit.burst(request, bench.timer()),
        "flood": lambda bench, request: _kit.flood(request, bench.timer()),
        "starts": starts, "events": events, "suspension": suspension,
        "million": million}.items()}
        | {"probe": _kit.versions("tarry")}, {})

"""Huey's adapter: ``SqliteHuey`` on the request's SQLite file.

The durable delay is ``task.schedule(eta=…)``: the message is stored at once; the consumer
moves it to its schedule and its scheduler enqueues it again when due (it reads the schedule
every ``scheduler_interval`` = 1 s, the default). The consumer is its own process
(``huey.create_consumer``, 4 thread workers, otherwise Huey's defaults: queue polling from
0.1 s backing off ×1.15 to 10 s when idle). Huey has no wait for an external event.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from huey import SqliteHuey

from adapters import _kit

WORKERS = 4
READY = Path("consumer.ready")
SETTINGS = {"workers": WORKERS, "worker_type": "thread", "scheduler_interval_s": 1,
            "polling": "0.1 s backing off x1.15 to 10 s (defaults)"}


def app(path: str) -> tuple[SqliteHuey, Any]:
    """The Huey instance on ``path`` and its one task (records the wake)."""
    huey = SqliteHuey("bench", filename=path, results=False)
    return huey, huey.task(name="wake")(_kit.record_wake)


def consume(path: str) -> None:
    """The consumer process: run until SIGTERM."""
    huey, _ = app(path)
    consumer = huey.create_consumer(workers=WORKERS, worker_type="thread", periodic=False)
    _kit.mark_ready(READY)
    consumer.run()


def handlers() -> dict[str, _kit.Handler]:
    """The workloads Huey has a mechanism for."""
    def with_app(measure: Callable[[str, SqliteHuey, Any, _kit.Request], _kit.Reply],
                 ) -> _kit.Handler:
        def handler(request: _kit.Request) -> _kit.Reply:
            path = request["store"].removeprefix("sqlite:///")
            huey, wake = app(path)
            reply = measure(path, huey, wake, request)
            return {**reply, "notes": SETTINGS}
        return handler

    def consumer(path: str) -> Callable[[], _kit.Child]:
        return lambda: _kit.python_child("adapters.huey", "consume", path,
                                         ready=_kit.marker_ready(READY))

    def timer(path: str, wake: Any) -> _kit.Timer:
        return _kit.Timer(consumer(path), lambda item, due: wake.schedule(
            args=(item,), eta=datetime.fromtimestamp(due, UTC)))

    def suspension(path: str, huey: SqliteHuey, wake: Any, request: _kit.Request) -> _kit.Reply:
        def grow(count: int, total: int) -> None:
            for index in range(count):
                wake.schedule(args=(f"w{total}-{index}",), delay=_kit.HOUR)
            _kit.await_count(total, huey.scheduled_count, request["timeout_s"],
                             "tasks in the schedule")
        return _kit.suspension(request, consumer(path), grow, lambda: _kit.sqlite_bytes(path),
                               server=_kit.SQLITE_SERVER)

    return {
        "probe": _kit.versions("huey"),
        "timers": with_app(lambda path, _, wake, request: _kit.timers(request,
                                                                      timer(path, wake))),
        "burst": with_app(lambda path, _, wake, request: _kit.burst(request, timer(path, wake))),
        "flood": with_app(lambda path, _, wake, request: _kit.flood(request, timer(path, wake))),
        "starts": with_app(lambda _, __, wake, request: _kit.starts(
            request, lambda item: wake.schedule(args=(item,), delay=_kit.HOUR),
            "no batch enqueue in Huey's API (one storage write per task)")),
        "suspension": with_app(suspension),
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["consume"]:
        consume(sys.argv[2])
    else:
        _kit.serve(handlers(), {"events": "Huey has no durable wait for an external event: "
                                          "a task can only be enqueued (or scheduled) anew"})

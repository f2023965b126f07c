"""Procrastinate's adapter: jobs in the request's PostgreSQL database.

The durable delay is ``task.configure(schedule_at=…).defer(…)`` (a job row with its
``scheduled_at``); batches use ``batch_defer``. The worker is its own process
(``app.run_worker``, concurrency 4, otherwise Procrastinate's defaults: it is told of new
jobs by ``LISTEN``/``NOTIFY``, but a scheduled job that falls due sends no notification, so
it is found by the fetch poll, every ``fetch_job_polling_interval`` = 5 s by default).
Procrastinate has no wait for an external event.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from procrastinate import App, PsycopgConnector, SyncPsycopgConnector

from adapters import _kit

CONCURRENCY = 4
READY = Path("worker.ready")
SETTINGS = {"concurrency": CONCURRENCY, "fetch_job_polling_interval_s": 5.0}


def app(connector: Any) -> tuple[App, Any]:
    """An app over ``connector`` and its one task (records the wake)."""
    application = App(connector=connector)
    return application, application.task(name="wake")(_kit.record_wake)


def work(url: str) -> None:
    """The worker process: run until SIGTERM."""
    application, _ = app(PsycopgConnector(conninfo=url))
    _kit.mark_ready(READY)
    application.run_worker(concurrency=CONCURRENCY)


def database_bytes(url: str) -> int:
    """``pg_database_size`` of the database at ``url``."""
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return int(row[0])


def handlers() -> dict[str, _kit.Handler]:
    """The workloads Procrastinate has a mechanism for."""
    def with_app(measure: Callable[[str, Any, _kit.Request], _kit.Reply]) -> _kit.Handler:
        def handler(request: _kit.Request) -> _kit.Reply:
            url = request["store"]
            application, wake = app(SyncPsycopgConnector(conninfo=url))
            with application.open():
                application.schema_manager.apply_schema()
                reply = measure(url, wake, request)
            return {**reply, "notes": SETTINGS}
        return handler

    def worker(url: str) -> Callable[[], _kit.Child]:
        return lambda: _kit.python_child("adapters.procrastinate", "work", url,
                                         ready=_kit.marker_ready(READY))

    def timer(url: str, wake: Any) -> _kit.Timer:
        return _kit.Timer(worker(url), lambda item, due: wake.configure(
            schedule_at=datetime.fromtimestamp(due, UTC)).defer(item=item))

    def later(wake: Any) -> Any:
        return wake.configure(schedule_in={"hours": 1})

    def suspension(url: str, wake: Any, request: _kit.Request) -> _kit.Reply:
        def grow(count: int, total: int) -> None:
            for index in range(count):
                later(wake).defer(item=f"w{total}-{index}")
        return _kit.suspension(request, worker(url), grow, lambda: database_bytes(url),
                               server=_kit.POSTGRES_SERVER)

    return {
        "probe": _kit.versions("procrastinate", "psycopg"),
        "timers": with_app(lambda url, wake, request: _kit.timers(request, timer(url, wake))),
        "burst": with_app(lambda url, wake, request: _kit.burst(request, timer(url, wake))),
        "flood": with_app(lambda url, wake, request: _kit.flood(request, timer(url, wake))),
        "starts": with_app(lambda _, wake, request: _kit.starts(
            request, lambda item: later(wake).defer(item=item),
            lambda items: later(wake).batch_defer(*({"item": item} for item in items)))),
        "suspension": with_app(suspension),
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["work"]:
        work(sys.argv[2])
    else:
        _kit.serve(handlers(), {"events": "Procrastinate has no durable wait for an external "
                                          "event: a job can only be deferred anew"})

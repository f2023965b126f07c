"""APScheduler 3's adapter: a ``BackgroundScheduler`` with a ``SQLAlchemyJobStore`` on the
request's SQLite file.

APScheduler is a library inside the application: the scheduler thread and its executor (a
thread pool of 10, the default) run in this adapter's own process, so the worker's memory is
this process's. The durable delay is a job with a ``date`` trigger (``add_job(…, "date",
run_date=due)``), written to the job store at once. Jobs run however late they are
(``misfire_grace_time=None``; APScheduler's default, 1 s, would drop a job that is later than
that). APScheduler has no wait for an external event and no batch add.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler

from adapters import _kit

SETTINGS = {"executor": "thread pool of 10 (default)", "misfire_grace_time": None,
            "coalesce": False}
WAKE = "adapters._kit:record_wake"
"""The job's function, by reference (a persistent job store keeps references)."""


@contextmanager
def running(url: str) -> Iterator[BackgroundScheduler]:
    """A scheduler on the SQLite file at ``url``, started; shut down afterwards."""
    scheduler = BackgroundScheduler(
        jobstores={"default": SQLAlchemyJobStore(url=url)}, timezone=UTC,
        job_defaults={"misfire_grace_time": None, "coalesce": False})
    scheduler.start()
    try:
        yield scheduler
    finally:
        scheduler.shutdown(wait=False)


def with_scheduler(measure: Callable[[str, BackgroundScheduler, _kit.Request], _kit.Reply],
                   ) -> _kit.Handler:
    """A handler that measures with a running scheduler."""
    def handler(request: _kit.Request) -> _kit.Reply:
        with running(request["store"]) as scheduler:
            return {**measure(request["store"], scheduler, request), "notes": SETTINGS}
    return handler


def at(scheduler: BackgroundScheduler, item: str, instant: datetime) -> None:
    """Add the job of ``item``, due at ``instant``."""
    scheduler.add_job(WAKE, "date", run_date=instant, args=[item], id=item)


def timer(scheduler: BackgroundScheduler) -> _kit.Timer:
    """Timers: one ``date`` job per item."""
    return _kit.Timer(_kit.this_process, lambda item, due: at(
        scheduler, item, datetime.fromtimestamp(due, UTC)))


def later(scheduler: BackgroundScheduler, item: str) -> None:
    """Add the job of ``item``, due in an hour."""
    at(scheduler, item, datetime.now(UTC) + timedelta(seconds=_kit.HOUR))


def suspension(url: str, scheduler: BackgroundScheduler, request: _kit.Request) -> _kit.Reply:
    """Jobs an hour away, in the job store."""
    def grow(count: int, total: int) -> None:
        for index in range(count):
            later(scheduler, f"w{total}-{index}")
    return _kit.suspension(request, _kit.this_process, grow,
                           lambda: _kit.sqlite_bytes(url.removeprefix("sqlite:///")),
                           server=_kit.SQLITE_SERVER)


HANDLERS: dict[str, _kit.Handler] = {
    "probe": _kit.versions("apscheduler", "sqlalchemy"),
    "timers": with_scheduler(lambda _, scheduler, request: _kit.timers(request,
                                                                       timer(scheduler))),
    "burst": with_scheduler(lambda _, scheduler, request: _kit.burst(request,
                                                                     timer(scheduler))),
    "flood": with_scheduler(lambda _, scheduler, request: _kit.flood(request,
                                                                     timer(scheduler))),
    "starts": with_scheduler(lambda _, scheduler, request: _kit.starts(
        request, lambda item: later(scheduler, item),
        "no batch add in APScheduler: one job store write per job")),
    "suspension": with_scheduler(suspension),
}

if __name__ == "__main__":
    _kit.serve(HANDLERS, {"events": "APScheduler has no wait for an external event: a job "
                                    "can only be added or modified anew"})

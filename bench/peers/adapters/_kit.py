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
import math
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
from dataclasses import asdict, dataclass, field
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
SAMPLE = 0.1
"""Seconds between two readings of a worker's threads (:class:`Sampler`)."""
STOP_TIMEOUT = 30.0


class NotAvailable(Exception):
    """The system has no mechanism for this workload (the message says why)."""


MEASURED_AS = {"paced": "timers"}
"""Workloads an adapter measures with another's handler: the paced workload is the timers
workload at its own sizes (items started at a rate, each due a delay after its start)."""


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
    workload = MEASURED_AS.get(request["workload"], request["workload"])
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


class WakeLog:
    """The wakes recorded so far, read incrementally: each read parses only the lines
    appended since the previous one (a poll over 100,000 wakes stays cheap)."""

    def __init__(self, path: Path = WAKES) -> None:
        self.path = path
        self._offset = 0
        self.first: dict[str, float] = {}
        """Each item's first recorded wake (a replayed workflow may record it twice)."""
        self.armed = 0
        """How many of them are :func:`record_armed` marks."""

    def read(self) -> dict[str, float]:
        """Take in what was appended; :attr:`first`."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                appended = handle.read()
        except FileNotFoundError:
            return self.first
        complete = appended.rfind(b"\n") + 1  # a line being written is read next time
        self._offset += complete
        for line in appended[:complete].decode().splitlines():
            item, _, at = line.partition(" ")
            if item not in self.first:
                self.first[item] = float(at)
                self.armed += item.startswith(ARMED)
        return self.first


_LOG = WakeLog()


def wakes() -> dict[str, float]:
    """Each item's first recorded wake (in this process's working directory)."""
    return _LOG.read()


def await_armed(count: int, timeout: float) -> None:
    """Return once ``count`` items recorded reaching their wait."""
    def armed() -> int:
        _LOG.read()
        return _LOG.armed
    await_count(count, armed, timeout, "items waiting")


def await_wakes(items: Iterable[str], timeout: float) -> dict[str, float]:
    """The wakes of ``items`` once all have woken; ``TimeoutError`` once ``timeout`` s have
    passed with nothing waking. A system far behind is waited for as long as it goes on
    waking items (a flood of 100,000 can leave one minutes late); one that stopped is not."""
    wanted = set(items)
    heard = -1
    deadline = time.monotonic() + timeout
    while True:
        seen = wakes()
        if len(seen) - _LOG.armed >= len(wanted) and wanted <= seen.keys():
            return {item: seen[item] for item in wanted}
        if len(seen) > heard:
            heard, deadline = len(seen), time.monotonic() + timeout
        elif time.monotonic() > deadline:
            missing = sorted(wanted - seen.keys())
            raise TimeoutError(f"{len(missing)} of {len(wanted)} items never woke, nothing "
                               f"in the last {timeout:g} s (first: {missing[:3]})")
        time.sleep(POLL)


def due_in(seconds: float) -> float:
    """The epoch instant ``seconds`` from now, rounded up to the millisecond: every system is
    given the same kind of instant, at the resolution the coarsest takes (tarry's ``instant``
    inputs and store: milliseconds), so none wakes late by its rounding of the due."""
    return math.ceil((time.time() + seconds) * 1000) / 1000


def lateness_ms(due: Mapping[str, float], woke: Mapping[str, float]) -> list[float]:
    """Wake − due of every item, in milliseconds."""
    return [(woke[item] - instant) * 1000 for item, instant in due.items()]


def paced(count: int, rate: float, submit: Callable[[int], object],
          cap_s: float = math.inf) -> float:
    """Call ``submit(0 … count-1)`` at ``rate`` per second (or as fast as it can, if slower),
    stopping early once ``cap_s`` seconds have passed; the seconds it took."""
    began = time.monotonic()
    for index in range(count):
        time.sleep(max(began + index / rate - time.monotonic(), 0))
        if time.monotonic() - began >= cap_s:
            break
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
    """Items submitted at ``rate`` per second, each due ``delay_s`` after its submit, for up
    to ``cap_s`` seconds if the request has one (the paced workload: a system slower than
    the pace submits fewer); ``submitted`` says how many were."""
    due: dict[str, float] = {}

    def one(index: int) -> None:
        item = f"t{index}"
        due[item] = due_in(request["delay_s"])
        system.submit(item, due[item])

    with system.worker() as worker, Sampler(worker.pid) as sampler:
        submit_s = paced(request["items"], request["rate"], one,
                         request.get("cap_s", math.inf))
        woke = system.woke(due, request["timeout_s"])
        rss = peak_rss_kib(worker.pid)
    return {"result": {"submitted": len(due), "submit_s": submit_s,
                       "lateness_ms": lateness_ms(due, woke),
                       "worker_rss_kib": rss, **sampler.figures()}}


def flood(request: Request, system: Timer) -> Reply:
    """Up to ``items`` items submitted one at a time, back to back, each due ``delay_s``
    after its own submit, until all are submitted or ``cap_s`` seconds have passed; then
    their wakes. ``submitted`` says how many were (fewer than ``items``: the cap ended the
    submits)."""
    due: dict[str, float] = {}
    with system.worker() as worker, Sampler(worker.pid) as sampler:
        began = time.time()
        cap = time.monotonic() + request["cap_s"]
        for index in range(request["items"]):
            if time.monotonic() >= cap:
                break
            item = f"f{index}"
            due[item] = due_in(request["delay_s"])
            system.submit(item, due[item])
        submit_s = time.time() - began
        woke = system.woke(due, request["timeout_s"] + request["delay_s"])
        rss = peak_rss_kib(worker.pid)
    return {"result": {"submitted": len(due), "submit_s": submit_s,
                       "wall_s": max(woke.values()) - began,
                       "lateness_ms": [round(late, 2) for late in lateness_ms(due, woke)],
                       "worker_rss_kib": rss, **sampler.figures()}}


def burst(request: Request, system: Timer) -> Reply:
    """Items submitted back to back, all due ``lead_s`` after the worker is up."""
    items = [f"b{index}" for index in range(request["items"])]
    with system.worker() as worker, Sampler(worker.pid) as sampler:
        due = due_in(request["lead_s"])
        submit_s = timed(len(items), lambda index: system.submit(items[index], due))
        slack = due - time.time()
        woke = system.woke(items, request["timeout_s"] + request["lead_s"])
        rss = peak_rss_kib(worker.pid)
    return {"result": {"submit_s": submit_s, "due": due, "slack_s": slack,
                       "wakes": sorted(woke.values()), "worker_rss_kib": rss,
                       **sampler.figures()}}


def starts(request: Request, submit: Callable[[str], object],
           batch: Callable[[list[str]], object] | str) -> Reply:
    """Submits of items waiting an hour, one at a time (``submit``), then ``batches`` batches
    of ``batch`` items (``batch``, or why the system has no batch submit).

    The process's first submit is timed on its own (``first_s``) and not in ``single_s``: it
    pays what a process pays once (tarry: reading the flows folder and building its
    expression parser; a peer: its connection or its tables), and the rate is that of a
    process that has submitted before, for every system alike."""
    first_s = timed(1, lambda _: submit("first"))
    single_s = timed(request["items"], lambda index: submit(f"s{index}"))
    result: dict[str, Any] = {"first_s": first_s, "single_s": single_s}
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
    send_batch: Callable[[list[str]], object] | str
    """Send the events of ``keys`` in one call of the system's batch API, or why it has
    none."""
    woke: Callable[[Iterable[str], float], dict[str, float]] = await_wakes


@dataclass
class Sends:
    """The events one phase sent: when each send call began (epoch s), how long each took
    (ms), and when the last one returned."""

    send: Callable[[str], object]
    began_at: dict[str, float] = field(default_factory=dict)
    took_ms: list[float] = field(default_factory=list)
    ended_at: float = 0.0

    def one(self, key: str) -> None:
        """Send the event of ``key``, timed."""
        self.some([key], lambda keys: self.send(keys[0]))

    def some(self, keys: list[str], send: Callable[[list[str]], object]) -> None:
        """Send the events of ``keys`` in one ``send`` call, timed (one duration)."""
        began = time.time()
        self.began_at.update(dict.fromkeys(keys, began))
        started = time.perf_counter()
        send(keys)
        self.took_ms.append((time.perf_counter() - started) * 1000)
        self.ended_at = time.time()

    def figures(self, woke: Mapping[str, float]) -> dict[str, Any]:
        """As the back-to-back phase: how many were sent, the seconds from the first send
        call's start to the last's end (``load_send_s``) and to the last resume
        (``load_span_s``; both None if none was sent), each latency and send call."""
        first = next(iter(self.began_at.values()), None)
        return {"load_sent": len(self.began_at),
                "load_send_s": None if first is None else self.ended_at - first,
                "load_span_s": None if first is None else max(
                    woke[key] for key in self.began_at) - first,
                "load_latency_ms": [round(late, 2)
                                    for late in lateness_ms(self.began_at, woke)],
                "load_send_ms": [round(took, 3) for took in self.took_ms]}


def events(request: Request, system: Waiter) -> Reply:
    """``waiting`` items wait for an event each. First ``events`` of them are sent theirs at
    ``rate`` per second and woken (the send-to-resume latency of an idle system); then the
    others are sent theirs back to back, one send call at a time, until all are or ``cap_s``
    seconds have passed, the worker running throughout (delivered/s: ``load_sent`` ÷
    ``load_span_s``, the first send call's start → the last resume). Each phase: every
    event's send-to-resume latency and every send call's duration.

    Then, where the system has a batch send, as many new items as the back-to-back phase
    had are started and, once they wait, sent theirs in calls of ``batch`` events, under
    the same cap (the ``batched_`` figures, as the back-to-back ones; else ``batched_na``,
    why not)."""
    keys = [f"k{index}" for index in range(request["waiting"])]
    paced_keys, loaded_keys = keys[:request["events"]], keys[request["events"]:]
    with system.worker():
        for key in keys:
            system.start(key)
        system.waiting(len(keys), request["timeout_s"])
        idle = Sends(system.send)
        paced(len(paced_keys), request["rate"], lambda index: idle.one(paced_keys[index]))
        system.woke(paced_keys, request["timeout_s"])
        loaded = Sends(system.send)
        cap = time.monotonic() + request["cap_s"]
        for key in loaded_keys:
            if time.monotonic() >= cap:
                break
            loaded.one(key)
        woke = system.woke([*paced_keys, *loaded.began_at], request["timeout_s"])
        batched = _batched(request, system, len(loaded_keys))
    return {"result": {"latency_ms": lateness_ms(idle.began_at, woke), "send_ms": idle.took_ms,
                       **loaded.figures(woke), **batched}}


def _batched(request: Request, system: Waiter, count: int) -> dict[str, Any]:
    """The batched phase of :func:`events` over ``count`` new items: its figures, prefixed
    ``batched_``."""
    if isinstance(system.send_batch, str):
        return {"batched_na": system.send_batch}
    keys = [f"b{index}" for index in range(count)]
    for key in keys:
        system.start(key)
    system.waiting(len(keys), request["timeout_s"])
    sends = Sends(system.send)
    cap = time.monotonic() + request["cap_s"]
    size = request["batch"]
    for first in range(0, len(keys), size):
        if time.monotonic() >= cap:
            break
        sends.some(keys[first:first + size], system.send_batch)
    woke = system.woke(sends.began_at, request["timeout_s"])
    return {key.replace("load_", "batched_"): value
            for key, value in sends.figures(woke).items()}


def await_count(count: int, counter: Callable[[], int], timeout: float, what: str, *,
                poll: float = POLL) -> None:
    """Return once ``counter()`` reaches ``count`` (asked every ``poll`` seconds);
    ``TimeoutError`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while (seen := counter()) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{seen} of {count} {what} after {timeout}s")
        time.sleep(poll)


# -- memory and storage ----------------------------------------------------------------------


_FIELDS = {"VmRSS": "rss_kib", "VmHWM": "peak_rss_kib", "Threads": "threads"}


def _status(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` (KiB) and ``Threads`` of ``pid`` from ``/proc/<pid>/status``
    (none of them if it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return {}
    found = {}
    for line in status.splitlines():
        name, _, value = line.partition(":")
        if name in _FIELDS:
            found[_FIELDS[name]] = int(value.split()[0])
    return found


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


def tree_status(pid: int) -> dict[str, int]:
    """``pid`` and its descendants now, added up: resident memory (``rss_kib``, ``VmRSS``),
    peak resident memory (``peak_rss_kib``, ``VmHWM``), ``threads``; and ``processes``,
    how many they are."""
    tree = _tree(pid)
    found = {"rss_kib": 0, "peak_rss_kib": 0, "threads": 0, "processes": len(tree)}
    for each in tree:
        for name, value in _status(each).items():
            found[name] += value
    return found


def peak_rss_kib(pid: int) -> int:
    """Peak resident memory (``VmHWM``) of ``pid`` and its descendants, added up, KiB."""
    return tree_status(pid)["peak_rss_kib"]


def rss_kib(pid: int) -> int:
    """Resident memory now (``VmRSS``) of ``pid`` and its descendants, added up, KiB."""
    return tree_status(pid)["rss_kib"]


class Sampler:
    """The most threads and processes the tree of ``pid`` had while the ``with`` block ran,
    read every :data:`SAMPLE` seconds by a thread of its own (not counted when ``pid`` is
    this process)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.threads_max = 0
        self.processes_max = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(STOP_TIMEOUT)
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE):
            self._sample()

    def _sample(self) -> None:
        now = tree_status(self.pid)
        own = self.pid == os.getpid() and self._thread.is_alive()
        if now["threads"]:  # the process may be gone already
            self.threads_max = max(self.threads_max, now["threads"] - own)
            self.processes_max = max(self.processes_max, now["processes"])

    def figures(self) -> dict[str, int]:
        """``worker_threads_max`` and ``worker_processes_max``."""
        return {"worker_threads_max": self.threads_max,
                "worker_processes_max": self.processes_max}


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


SQLITE_SERVER = "none: the store is a SQLite file in the worker's (or the adapter's) process"
POSTGRES_SERVER = ("not measured: PostgreSQL's backends (one per connection, and buffers "
                   "shared by every database on the server) are out of scope")


@dataclass(frozen=True)
class Held:
    """What a system's waiting item is, in each place it could take room (the names of the
    label ``run.py`` derives: a place is named only if the measurement shows it growing with
    the items; see ``report.held_as``)."""

    store: str = "row"
    """In the store (the ``store_bytes`` the adapter reports)."""
    worker_memory: str = "in the worker's memory"
    server_memory: str = "in the server's memory"


def suspension(request: Request, worker: Callable[[], AbstractContextManager[Worker]],
               grow: Callable[[int, int], None], store_bytes: Callable[[], int], *,
               server: Callable[[], int] | str, held: Held = Held()) -> Reply:
    """The worker's memory (``VmRSS``), threads and processes (with its children's) and the
    store's size, with ``small`` and then ``large`` items waiting an hour, each read
    ``idle_s`` seconds after they all wait; and the server's memory and threads, where there
    is a server to measure (``server()`` gives its process id; a text: why not).
    ``grow(n, total)`` submits ``n`` more and returns once ``total`` wait."""
    points = []
    waiting = 0
    with worker() as running:
        for target in (request["small"], request["large"]):
            grow(target - waiting, target)
            waiting = target
            time.sleep(request["idle_s"])
            point = {"waiting": waiting, **tree_status(running.pid),
                     "store_bytes": store_bytes()}
            if not isinstance(server, str):
                serving = tree_status(server())
                point |= {"server_rss_kib": serving["rss_kib"],
                          "server_threads": serving["threads"]}
            points.append(point)
    return {"result": {"points": points, "held": asdict(held),
                       "server": server if isinstance(server, str) else "measured"}}


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

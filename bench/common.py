"""Helpers shared by tarry's benchmarks.

- figures: :func:`percentile`, :func:`median`, :class:`Target` (a goal with pass/fail);
- output: :func:`print_table` (for a terminal, or as the Markdown of :func:`markdown_table`
  that bench/README.md shows), :func:`write_json`, :func:`machine`;
- stores: :func:`scratch_store` (a fresh SQLite file, or a scratch PostgreSQL database created
  and dropped), :func:`store_size_bytes`, :func:`measure_limit` (the rate of minimal durable
  transactions the store's database can do on this machine: the physical limit) and
  :func:`limit_rounds` (the same, one round at a time, to interleave with other work);
- processes: :class:`WorkerProcess` (a worker in its own process, so its memory is its own)
  and :func:`peak_rss_kib`.

Benchmarks read the wall clock: measuring it is their purpose.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import platform
import re
import select
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
from rich.console import Console
from rich.table import Table

from tarry.clock import SystemClock
from tarry.config import sqlite_path
from tarry.store import open_store
from tarry.store.sqlfiles import load_queries

__all__ = [
    "LimitResult",
    "Target",
    "WorkerProcess",
    "add_markdown_option",
    "add_size_options",
    "chosen_sizes",
    "iso",
    "limit_rounds",
    "machine",
    "markdown_table",
    "measure_limit",
    "median",
    "millis",
    "peak_rss_kib",
    "percentile",
    "print_table",
    "redact",
    "say",
    "scratch_store",
    "store_kind",
    "store_size_bytes",
    "wall_now",
    "write_json",
]

# -- figures ---------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) of ``values``, interpolated between closest ranks."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    """The median of ``values``."""
    return float(statistics.median(values))


@dataclass(frozen=True)
class Target:
    """A goal a figure must meet: ``low <= value <= high`` (either bound may be open)."""

    name: str
    value: float
    low: float = -math.inf
    high: float = math.inf

    @property
    def passed(self) -> bool:
        """Whether the value is within bounds."""
        return self.low <= self.value <= self.high

    @property
    def bounds(self) -> str:
        """The goal in words: ``>= 1.5``, ``<= 100`` or ``0.9 .. 1.1``."""
        if math.isinf(self.high):
            return f">= {self.low:.4g}"
        if math.isinf(self.low):
            return f"<= {self.high:.4g}"
        return f"{self.low:.4g} .. {self.high:.4g}"

    def document(self) -> dict[str, Any]:
        """The target as JSON."""
        return {"name": self.name, "value": self.value, "goal": self.bounds,
                "passed": self.passed}


# -- output ----------------------------------------------------------------------------------


def print_table(title: str, rows: Sequence[tuple[str, str, str]], *,
                markdown: bool = False) -> None:
    """Print rows of (figure, value, note) as one table on standard output: for a terminal,
    or with ``markdown`` as :func:`markdown_table` writes it."""
    if markdown:
        print(markdown_table(title, [("figure", "value", "target"), *rows]), end="")
        return
    table = Table(title=title, title_justify="left")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("target")
    for row in rows:
        table.add_row(*row)
    Console().print(table)


def markdown_table(title: str, rows: Sequence[Sequence[str]]) -> str:
    """``rows`` (the first one the header) as a Markdown table under ``title`` in bold, the
    columns after the first aligned right; a ``|`` in a cell is escaped."""
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |\n"

    header, *body = rows
    rule = line(["---", *("---:" for _ in header[1:])])
    return f"**{title}**\n\n" + line(header) + rule + "".join(line(row) for row in body)


def write_json(path: Path, document: dict[str, Any]) -> None:
    """Write ``document`` to ``path`` (parents created), indented, with a final newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n", encoding="utf-8")


def machine(store_url: str) -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
        "store": store_kind(store_url),
        "store_url": redact(store_url),
        "load_average": list(os.getloadavg()),
    }


def _cpu_model() -> str | None:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return found[1].strip() if found else None


def redact(url: str) -> str:
    """``url`` with its password, if any, replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


# -- stores ----------------------------------------------------------------------------------


def store_kind(url: str) -> str:
    """``"sqlite"`` or ``"postgresql"``; ``ValueError`` for another scheme."""
    scheme = url.partition(":")[0].lower()
    kind = {"sqlite": "sqlite", "postgresql": "postgresql", "postgres": "postgresql"}.get(scheme)
    if kind is None:
        raise ValueError(f"unsupported store URL {redact(url)!r}: use sqlite:///… or "
                         "postgresql://…")
    return kind


@contextmanager
def scratch_store(base: str, name: str) -> Iterator[str]:
    """The URL of a fresh, empty database for one benchmark phase, removed afterwards.

    ``base`` is a SQLite URL (the scratch file goes beside its file, ``<stem>-<name>.db``)
    or a PostgreSQL server URL (a database ``tarry_bench_<name>_<random>`` is created on that
    server with the base URL's credentials, and dropped at the end).
    """
    opener = _SCRATCH[store_kind(base)]
    with opener(base, name) as url:
        yield url


@contextmanager
def _scratch_sqlite(base: str, name: str) -> Iterator[str]:
    path = _sqlite_file(base)
    scratch = path.with_name(f"{path.stem}-{name}.db")
    _remove_sqlite_files(scratch)
    try:
        yield f"sqlite:///{scratch}"
    finally:
        _remove_sqlite_files(scratch)


def _sqlite_file(url: str) -> Path:
    path = sqlite_path(url)
    if path is None or str(path) == ":memory:":
        raise ValueError(f"a benchmark needs a SQLite file, not {url!r}")
    return path.resolve()


def _remove_sqlite_files(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


@contextmanager
def _scratch_postgres(base: str, name: str) -> Iterator[str]:
    database = f"tarry_bench_{name}_{uuid.uuid4().hex[:8]}"
    _postgres_admin(base, f"CREATE DATABASE {database}")
    try:
        yield urlunsplit(urlsplit(base)._replace(path=f"/{database}"))
    finally:
        _postgres_admin(base, f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")


def _postgres_admin(url: str, statement: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(statement.encode())


_SCRATCH: dict[str, Callable[[str, str], Any]] = {
    "sqlite": _scratch_sqlite,
    "postgresql": _scratch_postgres,
}


def store_size_bytes(url: str) -> int:
    """The bytes the database at ``url`` occupies (SQLite: the file after a WAL checkpoint;
    PostgreSQL: ``pg_database_size``)."""
    return _SIZERS[store_kind(url)](url)


def _sqlite_size(url: str) -> int:
    path = _sqlite_file(url)
    connection = sqlite3.connect(path)
    try:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    return path.stat().st_size


def _postgres_size(url: str) -> int:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return int(row[0])


_SIZERS: dict[str, Callable[[str], int]] = {"sqlite": _sqlite_size, "postgresql": _postgres_size}


# -- the physical limit ----------------------------------------------------------------------

_LIMIT_ROWS = 100
_LIMIT_STATE = json.dumps({"at": 1, "b": {"pause": {"until": "2026-01-01T00:00:02.000Z"}},
                           "cur": {"until": "2026-01-01T00:00:02.000Z"}})
_SEED_RUN = ("INSERT INTO runs (id, flow, flow_digest, status, inputs, state, due_at, "
             "created_at, updated_at) VALUES (:id, 'limit', 'limit', 'waiting', '{}', "
             ":state, 0, 0, 0)")
_UPDATE_RUN = ("UPDATE runs SET status = :status, state = :state, due_at = :now, "
               "updated_at = :now WHERE id = :id")
_INSERT_HISTORY = ("INSERT INTO history (run_id, at, kind, step, data) "
                   "VALUES (:id, :now, 'step.completed', 'pause', '{}')")


@dataclass(frozen=True)
class LimitResult:
    """Minimal durable transactions per second, per round, and their median; each
    transaction made ``writes`` minimal writes (1: the one-at-a-time limit; more: the
    batched limit, whose rate of writes is :attr:`writes_per_second`)."""

    rounds: tuple[float, ...]
    writes: int = 1

    @property
    def per_second(self) -> float:
        """The median rate of transactions."""
        return median(self.rounds)

    @property
    def writes_per_second(self) -> float:
        """The median rate of minimal writes (transactions × writes in each)."""
        return self.per_second * self.writes

    def document(self) -> dict[str, Any]:
        """The result as JSON."""
        return {"per_second": self.per_second, "rounds": list(self.rounds),
                "writes_per_transaction": self.writes,
                "writes_per_second": self.writes_per_second,
                "transaction": f"{self.writes} × (update one run row + insert one history "
                               "row), then commit"}


class _LimitSession:
    """One connection that runs the limit transaction, in a database driver's dialect."""

    def __init__(self, begin: Callable[[], object],
                 execute: Callable[[str, dict[str, Any]], object],
                 write_many: Callable[[list[dict[str, Any]]], object],
                 commit: Callable[[], object], close: Callable[[], object], *,
                 placeholder: str) -> None:
        self.begin, self.commit, self.close = begin, commit, close
        self._execute = execute
        self._write_many = write_many
        self._placeholder = placeholder

    def execute(self, sql: str, params: dict[str, Any]) -> None:
        """Run one statement written with ``:name`` parameters."""
        self._execute(re.sub(r":(\w+)", self._placeholder, sql), params)

    def transaction(self, number: int, writes: int = 1) -> None:
        """One minimal durable transaction of ``writes`` minimal writes: each a run row
        updated and a history row inserted (more than one: as a store writes a batch, the
        rows of each statement in one call)."""
        param_sets = [{"id": f"limit-{(number * writes + each) % _LIMIT_ROWS}",
                       "now": number, "status": ("waiting", "running")[number % 2],
                       "state": _LIMIT_STATE} for each in range(writes)]
        self.begin()
        if writes == 1:
            self.execute(_UPDATE_RUN, param_sets[0])
            self.execute(_INSERT_HISTORY, param_sets[0])
        else:
            self._write_many(param_sets)
        self.commit()


def _sqlite_session(url: str) -> _LimitSession:
    """A connection set up as the SQLite store sets up its own (WAL and the same pragmas)."""
    queries = load_queries("tarry.store.sqlite", "connection.sql")
    connection = sqlite3.connect(_sqlite_file(url), isolation_level=None, timeout=5.0)
    connection.executescript(queries["configure"])

    def write_many(param_sets: list[dict[str, Any]]) -> None:
        connection.executemany(_UPDATE_RUN, param_sets)  # sqlite3 loops in C
        connection.executemany(_INSERT_HISTORY, param_sets)

    return _LimitSession(lambda: connection.execute(queries["begin_write"]), connection.execute,
                         write_many, connection.commit, connection.close, placeholder=r":\1")


_UPDATE_RUNS_PG = ("UPDATE runs SET status = r.status, state = r.state::jsonb, due_at = r.now, "
                   "updated_at = r.now FROM jsonb_to_recordset(%(rows)s::jsonb) "
                   "AS r(id text, status text, state text, now bigint) WHERE runs.id = r.id")
_INSERT_HISTORY_PG = ("INSERT INTO history (run_id, at, kind, step, data) "
                      "SELECT id, now, 'step.completed', 'pause', '{}' "
                      "FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, now bigint)")


def _postgres_session(url: str) -> _LimitSession:
    """A plain psycopg connection, autocommit off (one transaction per commit). A batch's
    rows go as one JSON array per statement, as the PostgreSQL store sends them (one
    statement per row would measure psycopg's Python work per statement, not the server)."""
    connection = psycopg.connect(url)

    def write_many(param_sets: list[dict[str, Any]]) -> None:
        rows = {"rows": json.dumps(param_sets)}
        connection.execute(_UPDATE_RUNS_PG, rows)
        connection.execute(_INSERT_HISTORY_PG, rows)

    return _LimitSession(lambda: None, connection.execute, write_many, connection.commit,
                         connection.close, placeholder=r"%(\1)s")


_SESSIONS: dict[str, Callable[[str], _LimitSession]] = {
    "sqlite": _sqlite_session,
    "postgresql": _postgres_session,
}


def measure_limit(url: str, *, seconds: float, rounds: int = 3,
                  writes: int = 1) -> LimitResult:
    """The rate of minimal durable transactions on the empty store at ``url``.

    The tarry schema is created first (so indexes and triggers are the real ones), then
    ``rounds`` rounds of ``seconds`` each run back-to-back transactions that update one run
    row and insert one history row, ``writes`` times each (more than 1: the batched limit).
    """
    with limit_rounds(url, writes=writes) as limit_round:
        return LimitResult(tuple(limit_round(seconds) for _ in range(rounds)), writes)


@contextmanager
def limit_rounds(url: str, *, writes: int = 1) -> Iterator[Callable[[float], float]]:
    """Rounds of the limit measurement (as :func:`measure_limit`) on the empty store at
    ``url``, one at a time: yields ``round(seconds) -> transactions per second``, so that a
    benchmark can interleave them with its own measurements."""
    open_store(url).close()
    session = _SESSIONS[store_kind(url)](url)
    try:
        session.begin()
        for number in range(_LIMIT_ROWS):
            session.execute(_SEED_RUN, {"id": f"limit-{number}", "state": _LIMIT_STATE})
        session.commit()
        yield lambda seconds: _limit_round(session, seconds, writes)
    finally:
        session.close()


def _limit_round(session: _LimitSession, seconds: float, writes: int) -> float:
    count = 0
    started = time.perf_counter()
    deadline = started + seconds
    while (now := time.perf_counter()) < deadline or count == 0:
        session.transaction(count, writes)
        count += 1
    return count / (now - started)


# -- worker processes ------------------------------------------------------------------------

_WORKER_SCRIPT = """\
import asyncio, signal, sys
from tarry import eventloop
from tarry.config import load_settings
from tarry.engine.runtime import Engine
from tarry.engine.worker import freeze_heap

async def main(concurrency):
    engine = Engine.from_settings(load_settings())
    freeze_heap()  # as tarry worker does
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    try:
        await engine.worker(concurrency=concurrency).run(stop)
    finally:
        engine.close()

eventloop.run(main(int(sys.argv[1])))  # as tarry worker does
"""
_READY_TIMEOUT = 30.0
_STOP_TIMEOUT = 30.0


class WorkerProcess:
    """A tarry worker in its own process over the store at ``url``; use as a context manager.

    Entering starts it and returns once it has opened the store; leaving stops it with SIGTERM
    (as an operator would) and waits for it to finish its in-flight runs.
    """

    def __init__(self, url: str, directory: Path, *, concurrency: int = 64,
                 env: dict[str, str] | None = None) -> None:
        self.url = url
        self.directory = directory
        self.concurrency = concurrency
        self.env = env or {}
        """More variables for the worker (``TARRY_RETENTION_RUNS``, say)."""
        self._log = directory / f"worker-{uuid.uuid4().hex[:6]}.log"
        self._process: subprocess.Popen[str] | None = None

    @property
    def pid(self) -> int:
        """The worker's process id."""
        return self._require().pid

    def __enter__(self) -> WorkerProcess:
        env = {**os.environ, "TARRY_DATABASE": self.url, **self.env}
        with self._log.open("w", encoding="utf-8") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _WORKER_SCRIPT, str(self.concurrency)],
                cwd=self.directory, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        self._await_ready()
        return self

    def __exit__(self, *exc_info: object) -> None:
        process = self._require()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise RuntimeError(f"the worker did not stop within {_STOP_TIMEOUT:.0f}s; "
                               f"see {self._log}") from None
        finally:
            assert process.stdout is not None
            process.stdout.close()

    def peak_rss_kib(self) -> int:
        """The worker's peak resident memory so far (``VmHWM``), in KiB."""
        return peak_rss_kib(self.pid)

    def _await_ready(self) -> None:
        process = self._require()
        assert process.stdout is not None
        readable, _, _ = select.select([process.stdout], [], [], _READY_TIMEOUT)
        line = process.stdout.readline() if readable else ""
        if line.strip() != "ready":
            process.kill()
            process.wait()
            raise RuntimeError(f"the worker did not start; its log:\n{self._log_tail()}")

    def _log_tail(self) -> str:
        return "\n".join(self._log.read_text(encoding="utf-8").splitlines()[-20:])

    def _require(self) -> subprocess.Popen[str]:
        if self._process is None:
            raise RuntimeError("the worker process is not started")
        return self._process


def peak_rss_kib(pid: int) -> int:
    """``VmHWM`` (peak resident set size) of process ``pid`` from ``/proc``, in KiB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    found = re.search(r"^VmHWM:\s*(\d+)\s*kB$", status, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no VmHWM in /proc/{pid}/status")
    return int(found[1])


# -- time, progress and the command line, shared by every benchmark script ------------------

_wall_clock = SystemClock()
Sizes = TypeVar("Sizes")


def wall_now() -> datetime:
    """The real instant, as tarry stamps it (UTC, milliseconds)."""
    return _wall_clock.now()


def iso(instant: datetime) -> str:
    """An instant as ISO 8601 UTC with milliseconds."""
    return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def millis(delta: timedelta) -> float:
    """A duration in milliseconds."""
    return delta.total_seconds() * 1000


def say(message: str) -> None:
    """Progress, on standard error."""
    print(message, file=sys.stderr, flush=True)


def add_size_options(parser: argparse.ArgumentParser, full: Any, *,
                     quick_takes: str = "about a minute") -> None:
    """``--quick`` (which takes ``quick_takes``) and one ``--<size>`` option per field of the
    sizes dataclass of ``full`` (the smoke tests run every script with tiny sizes this
    way)."""
    parser.add_argument("--quick", action="store_true",
                        help=f"smaller sizes ({quick_takes})")
    for field in dataclasses.fields(full):
        parser.add_argument(f"--{field.name.replace('_', '-')}", dest=field.name,
                            type=type(getattr(full, field.name)), help=field.name)


def chosen_sizes(args: argparse.Namespace, full: Sizes, quick: Sizes) -> Sizes:
    """The preset (full or ``--quick``) with any size overridden on the command line."""
    preset = quick if args.quick else full
    overrides = {field.name: getattr(args, field.name)
                 for field in dataclasses.fields(preset)  # type: ignore[arg-type]
                 if getattr(args, field.name) is not None}
    return dataclasses.replace(preset, **overrides)  # type: ignore[type-var]


def publish(benchmark: str, args: argparse.Namespace, *, sizes: dict[str, Any],
            facts: dict[str, Any], results: dict[str, Any], goals: Sequence[Target],
            rows: Sequence[tuple[str, str, str]], began: float) -> int:
    """Print a benchmark's table, write its JSON document to ``args.json``; exit status 0."""
    document = {
        "benchmark": benchmark,
        "finished_at": iso(wall_now()),
        "seconds": time.perf_counter() - began,
        "preset": "quick" if args.quick else "full",
        "sizes": sizes,
        "machine": facts,
        **results,
        "targets": [goal.document() for goal in goals],
        "passed": all(goal.passed for goal in goals),
    }
    print_table(f"tarry {benchmark}: {facts['store']}, {facts['nproc']} cores, "
                f"Python {facts['python']}, load average {facts['load_average'][0]:.1f}, "
                f"{document['preset']} preset, {document['finished_at'][:10]}", rows,
                markdown=args.markdown)
    write_json(args.json, document)
    say(f"results written to {args.json}")
    return 0


SQLITE_OR_POSTGRES = ("sqlite:///path.db (scratch files beside it) or postgresql://user@host/db "
                      "(scratch databases on that server)")
"""The ``--store`` help of a benchmark that measures one store, SQLite unless told."""

LOCAL_POSTGRES = "postgresql://postgres@127.0.0.1:5432/postgres"
"""The store of the benchmarks that measure PostgreSQL alone, unless ``--store`` names one."""
POSTGRES_ONLY = "postgresql://user@host/db (scratch databases on that server)"
"""The ``--store`` help of a benchmark that measures PostgreSQL alone."""


def benchmark_parser(name: str, doc: str | None, full: Any, *, store_help: str = SQLITE_OR_POSTGRES,
                     default_store: str | None = None) -> argparse.ArgumentParser:
    """The command line every benchmark shares: the size options of ``full`` (and
    ``--quick``), ``--store`` and ``--json`` (``results/<name>.json`` by default); a script
    adds its own options to it."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0] if doc else None)
    add_size_options(parser, full)
    parser.add_argument("--store", default=default_store, help=store_help)
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results" /
                        f"{name}.json", help="where to write the results")
    add_markdown_option(parser)
    return parser


def add_markdown_option(parser: argparse.ArgumentParser) -> None:
    """``--markdown``: print the results as the Markdown tables bench/README.md shows."""
    parser.add_argument("--markdown", action="store_true",
                        help="print the table as Markdown (as bench/README.md shows it)")


def store_benchmark_args(name: str, doc: str | None, full: Any,
                         argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line of a benchmark run once per store (``--store``, else SQLite and
    PostgreSQL when ``TARRY_TEST_POSTGRES`` is set)."""
    return benchmark_parser(name, doc, full, store_help=(
        "sqlite:///path.db or postgresql://… (default: SQLite, and PostgreSQL when "
        "TARRY_TEST_POSTGRES is set)")).parse_args(argv)


Measure = Callable[[str, Path, Any], dict[str, Any]]
"""A benchmark's measurement: (the store's URL, a scratch folder, the sizes) → its results."""


def run_on_store(name: str, args: argparse.Namespace, sizes: Any, *, measure: Measure,
                 targets: Callable[[dict[str, Any]], list[Target]],
                 rows: Callable[[dict[str, Any], list[Target]], list[tuple[str, str, str]]],
                 ) -> int:
    """Measure the one store of ``args.store`` (default: a scratch SQLite file), then print
    and write the results."""
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tarry-bench-") as folder:
        base = args.store or f"sqlite:///{folder}/bench.db"
        facts = machine(base)  # before the work: the load average says how busy
        results = measure(base, Path(folder), sizes)
    goals = targets(results)
    return publish(name, args, sizes=dataclasses.asdict(sizes), facts=facts, results=results,
                   goals=goals, rows=rows(results, goals), began=began)


def run_per_store(name: str, args: argparse.Namespace, sizes: Any, *,
                  measure: Measure,
                  targets: Callable[[list[dict[str, Any]]], list[Target]],
                  rows: Callable[[list[dict[str, Any]], list[Target]],
                                 list[tuple[str, str, str]]]) -> int:
    """Measure each store the command line names, then print and write the results."""
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tarry-bench-") as folder:
        bases = [args.store] if args.store else [
            f"sqlite:///{folder}/bench.db",
            *([os.environ["TARRY_TEST_POSTGRES"]] if os.environ.get("TARRY_TEST_POSTGRES")
              else [])]
        facts = machine(bases[0])
        results = [measure(base, Path(folder), sizes) for base in bases]
    goals = targets(results)
    return publish(name, args, sizes=dataclasses.asdict(sizes), facts=facts,
                   results={"stores": results}, goals=goals, rows=rows(results, goals),
                   began=began)

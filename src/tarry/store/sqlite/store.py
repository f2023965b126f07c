"""The SQLite store: one file, one connection per store, every write ``BEGIN IMMEDIATE``.

The connection runs in WAL mode with a busy timeout (5 s by default), foreign keys on and
``synchronous=FULL`` (a commit is on disk before it returns: durable against power loss; a
claim, being a lease, commits without the sync; see ``connection.sql`` and
docs/durability.md). A write waits for another connection's write lock by polling it every
50 µs to 1 ms (:data:`WRITE_LOCK_POLL`), not in SQLite's busy handler.
A store may be shared by threads (an asyncio worker and ``asyncio.to_thread``): a lock lets
one transaction use the connection at a time. Several processes, or several stores in one
process, each hold their own connection; SQLite's file locks serialise their writes.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tarry.errors import StoreError, StoreUnavailable
from tarry.files import file_signature
from tarry.store.migrations import load_migrations
from tarry.store.sqlfiles import load_queries
from tarry.store.sqlstore import SqlStore, Tx

__all__ = ["SQLiteStore"]

_PACKAGE = __package__ or "tarry.store.sqlite"
_QUERIES = load_queries(_PACKAGE, "queries.sql", "connection.sql", "slots.sql")
_MIGRATIONS = load_migrations(_PACKAGE)

_UNAVAILABLE = frozenset({
    sqlite3.SQLITE_BUSY,
    sqlite3.SQLITE_LOCKED,
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_FULL,
})
"""Primary result codes that mean "try again later" rather than "this is wrong"."""

WRITE_LOCK_POLL = (0.00005, 0.001)
"""The first and the longest pause, in seconds, between two attempts at the write lock
(each pause doubles the one before). SQLite's busy handler sleeps 1, 2, 5, 10, 15 ms … between
its attempts, so a writer that finds another process committing back to back (a loop of
starts beside a worker) sleeps past its gaps again and again: 8 ms at the 90th percentile,
34 at the 99th. Polling finds a gap within a millisecond or two."""

_OPENING_POLL = (0.005, 0.1)
"""The pauses between two attempts at switching the file to WAL (:func:`_configure`)."""


class SQLiteStore(SqlStore):
    """:class:`tarry.store.base.Store` in a SQLite file (``":memory:"`` for a private one)."""

    def __init__(self, path: str | Path, *, busy_timeout: float = 5.0) -> None:
        """Open (creating it if needed) the database at ``path``; a write waits up to
        ``busy_timeout`` seconds for another connection's write to finish."""
        super().__init__(_QUERIES, _MIGRATIONS)
        self._path = str(path)
        self._lock = threading.Lock()
        self._commits = 0
        self._busy_timeout = busy_timeout
        self._busy_wait = self._queries["busy_timeout"].format(
            milliseconds=round(busy_timeout * 1000))
        self._no_busy_wait = self._queries["busy_timeout"].format(milliseconds=0)
        self._polls_for_locks = False
        self._write_waited = False
        with self._translated():
            self._connection = sqlite3.connect(self._path, isolation_level=None,
                                               check_same_thread=False, timeout=busy_timeout)
            self._connection.row_factory = _dict_row
            _configure(self._connection, self._queries["configure"], busy_timeout)
        self._begin_write = functools.partial(self._connection.execute,
                                              self._queries["begin_write"])

    @property
    def concurrency(self) -> int:
        """1: one connection, one writer."""
        return 1

    @property
    def write_waited(self) -> bool:
        """Whether the last write found the file's write lock held by another connection (a
        process writing beside this one) and waited for it."""
        return self._write_waited

    @property
    def path(self) -> str:
        """The database file."""
        return self._path

    def change_token(self) -> object:
        """``PRAGMA data_version`` (moves on other connections' commits) paired with the
        count of this store's own commits (which data_version does not see)."""
        with self._lock, self._translated():
            self._wait_for_locks(polled=False)
            version = self._connection.execute(self._queries["data_version"]).fetchone()
        return (version["data_version"], self._commits)

    def change_hint(self) -> Callable[[], object] | None:
        """The write-ahead log file's identity, size and modification time: every commit of
        any connection appends to it (a checkpoint restarts it). None for ``":memory:"``."""
        if self._path == ":memory:":
            return None
        return functools.partial(file_signature, self._path + "-wal")

    def close(self) -> None:
        """Close the connection."""
        with self._lock, self._translated():
            self._connection.close()

    @contextmanager
    def _transaction(self, *, write: bool, lease: bool = False) -> Iterator[Tx]:
        """One transaction on the connection, its driver errors as :meth:`_store_error`.

        A lease (:meth:`SqlStore._transaction`) lowers ``synchronous`` before its ``BEGIN``
        and sets it back after its commit, so its commit does not sync the WAL file."""
        connection = self._connection
        with self._lock:
            try:
                if lease:
                    connection.execute(self._queries["commit_without_waiting_for_disk"])
                try:
                    self._begin(connection, write=write)
                    try:
                        yield _FileLockedTx(connection.cursor(), self._queries)
                    except BaseException:
                        connection.rollback()
                        raise
                    connection.commit()
                    if write:
                        self._commits += 1
                finally:
                    if lease:
                        connection.execute(self._queries["commit_waiting_for_disk"])
            except sqlite3.Error as error:
                raise self._store_error(error) from error

    def _begin(self, connection: sqlite3.Connection, *, write: bool) -> None:
        """``BEGIN IMMEDIATE`` for a write: at once when no other connection holds the write
        lock, else polling for it (:data:`WRITE_LOCK_POLL`) for up to the busy timeout;
        notes whether it had to (:attr:`write_waited`). ``BEGIN DEFERRED`` for a read."""
        if not write:
            self._wait_for_locks(polled=False)
            connection.execute(self._queries["begin_read"])
            return
        self._wait_for_locks(polled=True)
        self._write_waited = _while_busy(self._begin_write, self._busy_timeout,
                                         *WRITE_LOCK_POLL)

    def _wait_for_locks(self, *, polled: bool) -> None:
        """How the next statements wait for another connection's lock: ``polled`` (busy
        timeout 0; :meth:`_begin_write` polls), for a write, or in SQLite's busy handler, for
        everything else. The write's own statements keep the timeout 0: holding the write
        lock, none of them waits for another connection (its commit's automatic checkpoint is
        PASSIVE, which never waits). The pragma runs only when the way changes, so a run of
        writes (starts one after another) sets it once rather than twice per write."""
        if polled != self._polls_for_locks:
            self._connection.execute(self._no_busy_wait if polled else self._busy_wait)
            self._polls_for_locks = polled

    def _run_script(self, tx: Tx, script: str) -> None:
        for statement in _statements(script):
            tx.cursor.execute(statement)

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Driver errors as :meth:`_store_error`."""
        try:
            yield
        except sqlite3.Error as error:
            raise self._store_error(error) from error

    def _store_error(self, error: sqlite3.Error) -> StoreError:
        """A driver error as :class:`StoreError`; busy, locked or unreachable files as
        :class:`StoreUnavailable`."""
        code = getattr(error, "sqlite_errorcode", None)
        unavailable = code is not None and code & 0xFF in _UNAVAILABLE
        kind = StoreUnavailable if unavailable else StoreError
        return kind(f"SQLite store {self._path}: {error}")


class _FileLockedTx(Tx):
    """A transaction on the file: a write holds the whole file's write lock from its ``BEGIN
    IMMEDIATE`` to its commit, so the row locks another backend takes (:meth:`Tx.take`:
    PostgreSQL's ``FOR UPDATE`` and advisory locks) are held already."""

    def take(self, name: str, param_sets: Sequence[Mapping[str, Any]]) -> None:
        """Nothing to run: the write lock covers every row (and a read locks nothing)."""


def _configure(connection: sqlite3.Connection, script: str, busy_timeout: float) -> None:
    """Run the ``configure`` pragmas, retrying for up to ``busy_timeout`` seconds while the
    file is busy. Two connections switching a new file to WAL at once can deadlock on its
    lock; SQLite then fails one of them at once instead of calling its busy handler."""
    _while_busy(functools.partial(connection.executescript, script), busy_timeout,
                *_OPENING_POLL)


def _while_busy(attempt: Callable[[], object], timeout: float, first: float,
                most: float) -> bool:
    """``attempt()``, and again after a pause (``first`` seconds, doubling up to ``most``)
    each time it fails because the file is busy, for up to ``timeout`` seconds; past that,
    its last error. Whether it had to try again."""
    deadline = time.monotonic() + timeout
    pause = first
    retried = False
    while True:
        try:
            attempt()
            return retried
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF != sqlite3.SQLITE_BUSY \
                    or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, most)
        retried = True


def _dict_row(cursor: sqlite3.Cursor, values: tuple[Any, ...]) -> dict[str, Any]:
    return {column[0]: value for column, value in zip(cursor.description, values, strict=True)}


def _statements(script: str) -> Iterator[str]:
    """The statements of ``script``, split where SQLite says a statement is complete."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending
            pending = ""
    if pending.strip():
        yield pending  # trailing comments, or a last statement without its semicolon

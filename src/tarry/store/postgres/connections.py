"""Connections of the PostgreSQL store: one per thread that calls it, no round trip to lend it.

The async store boundary calls the store from a fixed set of threads (``pool_size`` of them),
the CLI from its main thread; each thread keeps one connection of its own, opened on its
first call. There is nothing to borrow, so nothing to wait for, and no query to check a
connection before a transaction: a connection the server closed (a restart, an
administrator's ``pg_terminate_backend``) has sent its goodbye or reached end-of-file, which
a zero-timeout poll of its socket sees without asking the server anything; such a connection
is replaced before it is used. One whose goodbye is still on its way fails at ``BEGIN``,
before anything was done, and the transaction begins again once on a new connection (a read,
which runs without ``BEGIN``, sends its first statement again once on a new connection). A
connection that breaks *later* in a transaction fails that call with ``StoreUnavailable`` and
is replaced on the next one.

Connecting fails at once on a refused connection, a database that does not exist or bad
credentials (libpq's ``connect_timeout`` bounds an unanswered connect), with one line.
"""

from __future__ import annotations

import math
import select
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

__all__ = ["ThreadConnections", "commit_with"]

Connection = psycopg.Connection[dict[str, Any]]
Cursor = psycopg.Cursor[dict[str, Any]]


class ThreadConnections:
    """One connection per calling thread to ``conninfo``, each set up by ``configure``."""

    def __init__(self, conninfo: str, *, connect_timeout: float,
                 configure: Callable[[Connection], None]) -> None:
        self._conninfo = conninfo
        self._connect_timeout = max(2, math.ceil(connect_timeout))  # libpq's minimum
        self._configure = configure
        self._local = threading.local()
        self._opened: list[Connection] = []
        self._lock = threading.Lock()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """This thread's connection, in a transaction committed when the block ends normally
        (unless the block committed it, e.g. in one flight with its last statements: see
        :func:`commit_with`) and rolled back when it raises."""
        connection = self._begun()
        try:
            yield connection
            if connection.info.transaction_status is not TransactionStatus.IDLE:
                connection.execute("COMMIT")
        except BaseException:
            if not connection.broken:
                with suppress(psycopg.Error):
                    connection.execute("ROLLBACK")
            raise

    def read_cursor(self, *, fresh: bool = False) -> Cursor:
        """A cursor on this thread's connection for statements that each commit on their
        own (no ``BEGIN`` or ``COMMIT``: two round trips fewer); for reads, which at READ
        COMMITTED see one snapshot per statement inside a transaction too. ``fresh``: on a
        new connection, the current one having turned out to be gone."""
        if fresh:
            connection: Connection | None = getattr(self._local, "connection", None)
            if connection is not None:
                self._forget(connection)
        return self._current().cursor()

    def _begun(self) -> Connection:
        """This thread's connection with a transaction begun (on a new connection, once,
        when the old one turns out to be gone)."""
        connection = self._current()
        try:
            connection.execute("BEGIN")
        except psycopg.OperationalError:
            self._forget(connection)
            connection = self._current()
            connection.execute("BEGIN")
        return connection

    def open(self) -> None:
        """Open this thread's connection now (raises what connecting raises)."""
        self._current()

    def connect(self, **options: Any) -> Connection:
        """A new connection of the store's own (not a thread's), with ``options``."""
        return psycopg.connect(self._conninfo, connect_timeout=self._connect_timeout,
                               row_factory=dict_row, **options)

    def close(self) -> None:
        """Close every connection any thread opened."""
        with self._lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()

    def _current(self) -> Connection:
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is not None and _usable(connection):
            return connection
        if connection is not None:
            self._forget(connection)
        connection = self.connect(autocommit=True)  # transactions are begun explicitly
        try:
            self._configure(connection)
        except BaseException:
            connection.close()
            raise
        self._local.connection = connection
        with self._lock:
            self._opened.append(connection)
        return connection

    def _forget(self, connection: Connection) -> None:
        with self._lock:
            if connection in self._opened:
                self._opened.remove(connection)
        connection.close()
        self._local.connection = None


def commit_with(connection: Connection, send: Callable[[], None]) -> None:
    """Commit the open transaction of ``connection`` in one flight with the statements
    ``send`` sends (whose results nobody waits for): one round trip for them all."""
    with connection.pipeline():
        send()
        connection.execute("COMMIT")


def _usable(connection: Connection) -> bool:
    """Whether an idle connection is still open: not closed or broken, and nothing waiting
    on its socket (an idle connection receives nothing unless the server is hanging up)."""
    if connection.closed or connection.broken:
        return False
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError):
        return False
    return not readable

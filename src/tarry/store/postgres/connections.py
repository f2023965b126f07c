"""Connections of the PostgreSQL store: one per thread that calls it, no round trip to lend it.

The async store boundary calls the store from a fixed set of threads (``pool_size`` of them),
the CLI from its main thread; each thread keeps one connection of its own, opened on its
first call. There is nothing to borrow, so nothing to wait for, and no query to check a
connection before a transaction: a connection the server closed (a restart, an
administrator's ``pg_terminate_backend``) has sent its goodbye or reached end-of-file, which
a zero-timeout poll of its socket sees without asking the server anything; such a connection
is replaced before it is used. One whose goodbye is still on its way fails a call's first
flight, before anything was done, and the caller sends it again once on a new connection
(:mod:`tarry.store.postgres.statements`). A connection that breaks *later* in a call fails
that call with ``StoreUnavailable`` and is replaced on the next one; so is one whose call the
server refused (:meth:`ThreadConnections.discard`).

Connecting fails at once on a refused connection, a database that does not exist or bad
credentials (libpq's ``connect_timeout`` bounds an unanswered connect), with one line.
"""

from __future__ import annotations

import math
import select
import threading
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.rows import dict_row

__all__ = ["ThreadConnections"]

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

    def cursor(self, *, fresh: bool = False) -> Cursor:
        """A cursor on this thread's connection (autocommit: a caller that wants a
        transaction sends ``BEGIN``); ``fresh``: on a new connection, the current one having
        turned out to be gone."""
        if fresh:
            self.discard()
        return self._current().cursor()

    def discard(self) -> None:
        """Close this thread's connection, if it has one: its next call opens a new one."""
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            self._forget(connection)

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

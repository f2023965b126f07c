"""One store call's statements on PostgreSQL, with as few round trips as the call allows.

- **A read** runs its statements without ``BEGIN`` and ``COMMIT``: at READ COMMITTED each
  statement of a transaction sees a snapshot of its own anyway, so the two would buy nothing.
- **A write** is one transaction whose ``BEGIN`` goes out in one flight (psycopg's pipeline
  mode) with its first statement; statements whose results nobody waits for
  (:meth:`~tarry.store.sqlstore.Tx.many`) are queued and go out with the next statement that
  returns something, or with the ``COMMIT``; rows inserted together
  (:meth:`~tarry.store.sqlstore.Tx.insert`) are one statement, however many. A write that
  ends with a statement whose rows it returns (:meth:`~tarry.store.sqlstore.Tx.final`: a
  claim) sends the ``COMMIT`` with it and reads the rows after: a claim alone is one flight,
  a checkpoint that claims two.

The first flight of either is sent again, once, on a new connection when the connection turns
out to be gone (the server's goodbye was still on its way when its socket was looked at):
nothing was done on it, so nothing is done twice. A call the server refused (an error in one
of its flights) closes its connection rather than rolling back on it: see
:meth:`Statements.rollback`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any, TypeVar, cast

import psycopg

from tarry.store.postgres.connections import ThreadConnections
from tarry.store.rows import Row
from tarry.store.sqlstore import Tx

__all__ = ["Statements"]

T = TypeVar("T")


class Statements(Tx):
    """The statements of one store call: a ``transaction`` (a write) or not (a read)."""

    def __init__(self, connections: ThreadConnections, queries: Mapping[str, str], *,
                 transaction: bool) -> None:
        self._connections = connections
        self._own = connections.cursor()
        self._transaction = transaction
        self._begun = False
        self._ended = False
        self._first = True
        self._failed = False
        self._writer = self._own.connection.cursor()
        super().__init__(self._own, queries, together=self._pipeline if transaction else None,
                         writes=self._writer)

    def all(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Every row the query returns."""
        return self._flight(lambda: Tx.all(self, name, params))

    def run(self, name: str, params: Mapping[str, Any] | None = None) -> int:
        """Run a statement that returns no rows; the number of rows it changed."""
        return self._flight(lambda: Tx.run(self, name, params))

    def insert(self, name: str, param_sets: Sequence[Mapping[str, Any]]) -> None:
        """Queue one statement for all the rows: the query takes them as one JSON array,
        ``rows`` (``jsonb_to_recordset``), in order. psycopg's Python work per statement
        (about 20 µs of CPU), not the server's, is what a checkpoint's many history rows
        cost."""
        if param_sets:
            self.many(name, [{"rows": json.dumps(param_sets, separators=(",", ":"))}])

    def reads(self, *queries: tuple[str, Mapping[str, Any]]) -> list[list[Row]]:
        """Every row of each query, in order, the queries sent in one flight (each on a
        cursor of its own) with the queued statements, and the write's ``BEGIN`` if it has
        not gone out yet."""
        return self._flight(lambda: self._reads(queries))

    def final(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Every row the last statement returns, sent with the queued statements and, in a
        write, the ``COMMIT`` in one flight; the rows are read after the commit (which
        raises what it fails with, before they are returned)."""
        if not self._transaction:
            return self.all(name, params)
        return self._flight(lambda: self._final(name, params))

    def commit(self) -> None:
        """End the call: a write's queued statements and its ``COMMIT``, in one flight (a
        write that sent and queued nothing sends nothing, nor one that :meth:`final`
        ended)."""
        if self._ended:
            if self._queued:
                raise RuntimeError("a statement was queued after the transaction's final one")
            return
        if self._transaction and (self._begun or self._queued):
            self._flight(self._commit)

    def rollback(self) -> None:
        """Undo a write begun on a connection still open; after an error the server
        reported in one of the call's flights, close the connection instead (the server
        rolls back what it began) and let the next call open a new one.

        In a flight the server aborted, psycopg (3.3) may count as prepared a statement whose
        ``Parse`` the server skipped, and would then name that statement on every later call
        in vain (``prepared statement "_pg3_3" does not exist``): after two refused writes,
        every write of that thread could fail so, for good. A new connection starts with no
        prepared statements at all."""
        if self._failed:
            self._connections.discard()
        elif self._begun and not self._ended and not self._own.connection.broken:
            with suppress(psycopg.Error):
                self._own.connection.execute("ROLLBACK")

    def close(self) -> None:
        """Close the cursors."""
        self._own.close()
        self._writer.close()

    @contextmanager
    def _after_queued(self) -> Iterator[None]:
        if not self._transaction or self._begun:
            with super()._after_queued():
                yield
            return
        with self._together_with_queued():
            yield

    @contextmanager
    def _together_with_queued(self) -> Iterator[None]:
        """One flight: the write's ``BEGIN`` if it has not gone out, the queued statements,
        then the block's; its results are read once the block (the flight) has ended."""
        with self._pipeline():
            if self._transaction and not self._begun:
                self._begin()
            self.flush()
            yield

    def _commit(self) -> None:
        with self._together_with_queued():
            self._own.execute("COMMIT")

    def _reads(self, queries: Sequence[tuple[str, Mapping[str, Any]]]) -> list[list[Row]]:
        cursors = [self._own.connection.cursor() for _ in queries]
        try:
            with self._together_with_queued():
                for cursor, (name, params) in zip(cursors, queries, strict=True):
                    cursor.execute(self._queries[name], params)
            return [cast(list[Row], cursor.fetchall()) for cursor in cursors]
        finally:
            for cursor in cursors:
                cursor.close()

    def _final(self, name: str, params: Mapping[str, Any] | None) -> list[Row]:
        with self._together_with_queued():
            self._own.execute(self._queries[name], params or {})
            self._writer.execute("COMMIT")  # its own cursor: the rows fetched are the read's
        self._ended = True
        return cast(list[Row], self._own.fetchall())

    def _begin(self) -> None:
        self._own.execute("BEGIN")
        self._begun = True

    def _pipeline(self) -> AbstractContextManager[psycopg.Pipeline]:
        return self._own.connection.pipeline()

    def _flight(self, send: Callable[[], T]) -> T:
        """``send``, noting whether the server refused it (see :meth:`rollback`)."""
        try:
            return self._sent(send)
        except psycopg.Error:
            self._failed = True
            raise

    def _sent(self, send: Callable[[], T]) -> T:
        """``send``; the first flight again on a new connection if the old one was gone."""
        if not self._first:
            return send()
        self._first = False
        queued = list(self._queued)
        try:
            return send()
        except psycopg.OperationalError:
            if not self._own.connection.broken:
                raise
            self.close()
            self._own = self.cursor = self._connections.cursor(fresh=True)
            self._writer = self.writes = self._own.connection.cursor()
            self._queued, self._begun = queued, False
            return send()

"""The PostgreSQL store: a small connection pool, row locks, and LISTEN/NOTIFY.

Each verb borrows a pooled connection for one transaction. The pool checks a connection
before lending it and replaces broken ones, so the store outlives a server restart: a call
during the outage raises ``StoreUnavailable``, calls after it succeed. Claims lock the rows
they take with ``FOR UPDATE SKIP LOCKED``, so workers on many machines never take the same
run and never wait for each other. A trigger notifies ``tarry_changes`` whenever a run
becomes unleased (created, suspended, ended, cancelled) or is asked to cancel; a dedicated
listening connection turns those notifications into the change token.

Payload columns are JSONB (validated and queryable on the server); the connections load
them as JSON text so both backends share :mod:`tarry.store.rows`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.string import TextLoader
from psycopg_pool import ConnectionPool

from tarry.store.migrations import load_migrations
from tarry.store.postgres.errors import translated
from tarry.store.postgres.listener import ChangeListener
from tarry.store.sqlfiles import load_queries
from tarry.store.sqlstore import SqlStore, Tx

__all__ = ["PostgresStore"]

_PACKAGE = __package__ or "tarry.store.postgres"
_QUERIES = load_queries(_PACKAGE, "queries.sql", "connection.sql")
_MIGRATIONS = load_migrations(_PACKAGE)


class PostgresStore(SqlStore):
    """:class:`tarry.store.base.Store` in a PostgreSQL database."""

    def __init__(self, conninfo: str, *, pool_size: int = 8, pool_timeout: float = 10.0) -> None:
        """Connect to ``conninfo`` (a libpq URL or key=value string) with at most
        ``pool_size`` connections; a call waits at most ``pool_timeout`` seconds for one."""
        super().__init__(_QUERIES, _MIGRATIONS)
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            conninfo, min_size=1, max_size=pool_size, timeout=pool_timeout, open=False,
            kwargs={"row_factory": dict_row}, configure=_configure,
            check=ConnectionPool.check_connection, name="tarry")
        self._pool.open()
        self._pool_size = pool_size
        self._listener = ChangeListener(conninfo, self._queries["listen"],
                                        connect_timeout=pool_timeout)

    @property
    def concurrency(self) -> int:
        """The pool's size: that many transactions can be in progress at once."""
        return self._pool_size

    def change_token(self) -> object:
        """The number of change notifications heard so far (see :class:`ChangeListener`)."""
        return self._listener.token()

    def close(self) -> None:
        """Stop listening and close the pool."""
        self._listener.close()
        self._pool.close()

    @contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Tx]:
        # Reads and writes open the same kind of transaction: rows are locked per statement.
        with translated(), self._pool.connection() as connection, \
                connection.cursor() as cursor:
            yield Tx(cursor, self._queries)

    @contextmanager
    def _migration_transaction(self) -> Iterator[Tx]:
        with self._transaction(write=True) as tx:
            tx.run("lock_migrations")
            yield tx

    def _run_script(self, tx: Tx, script: str) -> None:
        tx.cursor.execute(script)  # no parameters: the server splits the statements


def _configure(connection: psycopg.Connection[Any]) -> None:
    """Read JSONB as text (the shared row mapping parses it)."""
    connection.adapters.register_loader("jsonb", TextLoader)

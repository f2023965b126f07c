"""The PostgreSQL store: a connection per calling thread, row locks, and LISTEN/NOTIFY.

Each writing verb runs one transaction, each read its statements without one, on its
thread's own connection (see
:class:`~tarry.store.postgres.connections.ThreadConnections`): the async store boundary calls
from ``pool_size`` threads, so a process holds at most that many connections for it, plus one
for a thread that calls directly (the CLI) and the listener's. A connection is never checked
with a query before use; one the server closed is seen on its socket and replaced, so the
store outlives a server restart: a call during the outage raises ``StoreUnavailable``, calls
after it succeed. Claims lock the rows they take with ``FOR UPDATE SKIP LOCKED``, so workers
on many machines never take the same run and never wait for each other. A trigger notifies
``tarry_changes`` whenever a run becomes unleased (created, suspended, ended, cancelled) or is
asked to cancel; a listening thread counts those notifications (the change token) and
pushes them to subscribers (the async boundary's waiters).

Payload columns are JSONB (validated and queryable on the server); the connections load
them as JSON text so both backends share :mod:`tarry.store.rows`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.string import TextLoader

from tarry.clock import to_millis
from tarry.model import InboxEvent, RunRecord, RunUpdate
from tarry.store import eventstore, rows
from tarry.store.migrations import load_migrations
from tarry.store.postgres.connections import ThreadConnections
from tarry.store.postgres.errors import translated
from tarry.store.postgres.listener import ChangeListener
from tarry.store.postgres.statements import Statements
from tarry.store.rows import Row
from tarry.store.sqlfiles import load_queries
from tarry.store.sqlstore import SqlStore, Tx

__all__ = ["PostgresStore"]

_PACKAGE = __package__ or "tarry.store.postgres"
_QUERIES = load_queries(_PACKAGE, "queries.sql", "connection.sql", "claims.sql",
                       "slots.sql")
_MIGRATIONS = load_migrations(_PACKAGE)


class PostgresStore(SqlStore):
    """:class:`tarry.store.base.Store` in a PostgreSQL database."""

    def __init__(self, conninfo: str, *, pool_size: int = 8, pool_timeout: float = 10.0) -> None:
        """Connect to ``conninfo`` (a libpq URL or key=value string); ``pool_size`` is how
        many threads of the async boundary (each with its connection) may call at once, and
        a connect the server does not answer fails after ``pool_timeout`` seconds.

        Connects at once, so a refused connection, a missing database or bad credentials
        raise ``StoreUnavailable`` here, in one line."""
        super().__init__(_QUERIES, _MIGRATIONS)
        self._pool_size = pool_size
        self._connections = ThreadConnections(conninfo, connect_timeout=pool_timeout,
                                              configure=_configure)
        self._listener = ChangeListener(
            lambda: self._connections.connect(autocommit=True), self._queries["listen"])
        with translated():
            self._connections.open()

    @property
    def concurrency(self) -> int:
        """The pool's size: that many transactions can be in progress at once."""
        return self._pool_size

    def change_token(self) -> object:
        """The number of change notifications heard so far (see :class:`ChangeListener`)."""
        return self._listener.token()

    def subscribe(self, callback: Callable[[], None]) -> bool:
        """Call ``callback`` (from the listening thread) whenever the change token moves;
        True: PostgreSQL pushes."""
        self._listener.subscribe(callback)
        return True

    def close(self) -> None:
        """Stop listening and close every connection."""
        self._listener.close()
        self._connections.close()

    @contextmanager
    def _transaction(self, *, write: bool, lease: bool = False) -> Iterator[Tx]:
        # A read runs its statements without a transaction; a write is one, its BEGIN and its
        # queued statements riding with other statements (see statements.py); a lease's
        # SET LOCAL goes out with its first statement.
        with translated():
            statements = Statements(self._connections, self._queries, transaction=write)
            if lease:
                statements.many("commit_without_waiting_for_disk", [{}])
            try:
                yield statements
                statements.commit()
            except BaseException:
                statements.rollback()
                raise
            finally:
                statements.close()

    def claim_due(self, now: datetime, worker: str, lease_until: datetime,
                  limit: int) -> list[RunRecord]:
        """:meth:`claim_due_with_inbox`, without the inboxes: one statement claims both."""
        return [record for record, _ in self.claim_due_with_inbox(now, worker, lease_until,
                                                                  limit)]

    def _claim_with_inbox(self, tx: Tx, *, now: datetime, worker: str, lease_until: datetime,
                          limit: int, ahead: datetime | None
                          ) -> list[tuple[RunRecord, list[InboxEvent]]]:
        """The claim and the inboxes in one statement (``claim_due_runs_with_inbox``): a
        claim is one round trip with its ``COMMIT``, and no fsync (a lease transaction)."""
        leased = self._leased(tx, "claim_due_runs_with_inbox",
                              rows.claim_params(limit, now, ahead), now=now, worker=worker,
                              lease_until=lease_until)
        return [(rows.claimed_record(row, row["claimed_from"], row["was_due"]),
                 [eventstore.inbox_event(item) for item in row["inbox_rows"]])
                for row in leased]

    def _claim(self, tx: Tx, due: str, params: Mapping[str, Any], *, now: datetime,
               worker: str, lease_until: datetime) -> list[RunRecord]:
        """The selection and the lease in one statement (``claim_<due>``)."""
        leased = self._leased(tx, f"claim_{due}", params, now=now, worker=worker,
                              lease_until=lease_until)
        return [rows.claimed_record(row, row["claimed_from"], row["was_due"])
                for row in leased]

    def _write_runs(self, tx: Tx, worker: str, now: datetime,
                    updates: Sequence[RunUpdate]) -> dict[str, bool]:
        """The run rows of a batch in one statement (``checkpoint_runs``), however many."""
        if len({update.run_id for update in updates}) < len(updates):
            return super()._write_runs(tx, worker, now, updates)  # one run twice: in order
        params = [rows.update_params(worker, now, update) for update in updates]
        columns = {"run_ids": "run_id", "statuses": "status", "states": "state",
                   "exits": "exit", "errors": "error", "reasons": "reason",
                   "results": "result", "waiting_fors": "waiting_for",
                   "at_steps": "at_step", "releases": "release", "due_ats": "due_at"}
        arrays = {name: [each[column] for each in params] for name, column in columns.items()}
        found = tx.all("checkpoint_runs", {**arrays, "worker": worker, "now": to_millis(now)})
        return {row["id"]: bool(row["cancel_requested"]) for row in found}

    @staticmethod
    def _leased(tx: Tx, claim: str, params: Mapping[str, Any], *, now: datetime, worker: str,
                lease_until: datetime) -> list[Row]:
        """The rows the ``claim`` statement leased, the earliest due first: the
        transaction's final statement, sent with its ``COMMIT``."""
        leased = tx.final(claim, {**params, "now": to_millis(now), "worker": worker,
                                  "lease_until": to_millis(lease_until)})
        leased.sort(key=lambda row: (row["was_due"], row["id"]))
        return leased

    @contextmanager
    def _schema_lock(self) -> Iterator[None]:
        """Held (on this thread's connection) while the schema is checked and migrated: a
        process that finds the database empty migrates it whole before another reads its
        version."""
        with self._transaction(write=True) as tx:
            tx.run("lock_schema")
        try:
            yield
        finally:
            with self._transaction(write=True) as tx:
                tx.run("unlock_schema")

    @contextmanager
    def _migration_transaction(self) -> Iterator[Tx]:
        with self._transaction(write=True) as tx:
            tx.run("lock_migrations")
            yield tx

    def _run_script(self, tx: Tx, script: str) -> None:
        tx.flush()
        tx.cursor.execute(script)  # no parameters: the server splits the statements


def _configure(connection: psycopg.Connection[Any]) -> None:
    """Read JSONB as text (the shared row mapping parses it)."""
    connection.adapters.register_loader("jsonb", TextLoader)

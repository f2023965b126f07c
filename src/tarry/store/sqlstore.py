"""The store verbs, written once over named queries; backends supply connections and SQL.

A backend subclasses :class:`SqlStore` with its dialect's queries and migrations, and
implements how a transaction is opened (``BEGIN IMMEDIATE`` on one SQLite connection, a
pooled PostgreSQL connection), how a migration script runs, and how changes are noticed.
Every backend defines the same query names with the same named parameters, so each verb
below is the same sequence of statements on every database.
"""

from __future__ import annotations

import itertools
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol, cast

from tarry.clock import from_millis, to_millis
from tarry.errors import FlowNotFound, RunNotFound, RunStateError
from tarry.model import (
    BatchRecord,
    CheckpointOutcome,
    DebounceRecord,
    EventRecord,
    EventState,
    HistoryEntry,
    InboxEvent,
    JournalEntry,
    MovePlan,
    NewEvent,
    NewRun,
    RetryPlan,
    RunRecord,
    RunStatus,
    RunUpdate,
    ScheduleFiring,
    ScheduleRecord,
    SlotClaim,
    SlotTurn,
    SlotView,
    Successor,
    TaskCompletion,
    TaskRecord,
    TaskState,
    ThrottleKey,
    TriggerStarts,
)
from tarry.store import (
    childstore,
    eventstore,
    holdstore,
    opstore,
    pacingstore,
    rows,
    runstore,
    slotstore,
    taskstore,
    triggerstore,
)
from tarry.store.base import IDEMPOTENCY_KEY_RETENTION, SETTLED_EVENT_STATES, RetryPlanner
from tarry.store.migrations import Migration, pending, require_current
from tarry.store.rows import Row

__all__ = ["Cursor", "SqlStore", "Tx"]


class Cursor(Protocol):
    """The part of a DB-API cursor the store uses (rows come back as mappings)."""

    @property
    def rowcount(self) -> int:
        """Rows changed by the last statement."""
        ...

    def execute(self, sql: Any, params: Any = ..., /) -> Any:
        """Run one statement."""
        ...

    def executemany(self, sql: Any, params: Any, /) -> Any:
        """Run one statement once per parameter set."""
        ...

    def fetchall(self) -> Any:
        """The remaining rows of the last statement."""
        ...


class Tx:
    """One open transaction: runs named queries with named parameters.

    Given ``together`` (PostgreSQL: the connection's pipeline mode), :meth:`many` only queues
    its statements, which nobody waits for: they go out in one flight with the next statement
    that returns something, or with the ``COMMIT`` (see :meth:`flush`), so the inserts and
    updates between two reads cost no round trips of their own. They are sent on a cursor of
    their own, ``writes``: in one flight, each cursor's results are its own, so the results a
    read fetches are never those of a queued statement sent before it.
    """

    def __init__(self, cursor: Cursor, queries: Mapping[str, str], *,
                 together: Callable[[], AbstractContextManager[Any]] | None = None,
                 writes: Cursor | None = None) -> None:
        self.cursor = cursor
        self.writes = writes or cursor
        self._queries = queries
        self._together = together
        self._queued: list[tuple[str, Sequence[Mapping[str, Any]]]] = []

    def all(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Every row the query returns (read once its flight is over: in one flight, the
        results come back with the ``Sync`` that ends it, not with a round trip of their
        own)."""
        with self._after_queued():
            self.cursor.execute(self._queries[name], params or {})
        return cast(list[Row], self.cursor.fetchall())

    def one(self, name: str, params: Mapping[str, Any] | None = None) -> Row | None:
        """The first row the query returns, or None."""
        found = self.all(name, params)
        return found[0] if found else None

    def reads(self, *queries: tuple[str, Mapping[str, Any]]) -> list[list[Row]]:
        """Every row of each query, in order. A backend that pipelines (PostgreSQL) sends
        them in one flight, so no query may depend on the rows of another."""
        return [self.all(name, params) for name, params in queries]

    def final(self, name: str, params: Mapping[str, Any] | None = None) -> list[Row]:
        """Every row the transaction's last statement returns: nothing may follow it. A
        backend that pipelines (PostgreSQL) sends the ``COMMIT`` in its flight and reads the
        rows after it; here it is :meth:`all`, the commit following as usual."""
        return self.all(name, params)

    def run(self, name: str, params: Mapping[str, Any] | None = None) -> int:
        """Run a statement that returns no rows; the number of rows it changed."""
        with self._after_queued():
            self.cursor.execute(self._queries[name], params or {})
        return self.cursor.rowcount

    def many(self, name: str, param_sets: Sequence[Mapping[str, Any]]) -> None:
        """Run a statement once per parameter set (queued, given ``together``)."""
        if not param_sets:
            return
        if self._together is not None:
            self._queued.append((name, param_sets))
        else:
            self.cursor.executemany(self._queries[name], param_sets)

    def insert(self, name: str, param_sets: Sequence[Mapping[str, Any]]) -> None:
        """Insert one row per parameter set, queued as :meth:`many`, in order. A backend that
        inserts them all with one statement overrides this (PostgreSQL: the rows as one JSON
        array)."""
        self.many(name, param_sets)

    def take(self, name: str, param_sets: Sequence[Mapping[str, Any]]) -> None:
        """Run a statement whose rows nobody reads (a lock) once per parameter set, in
        order: given ``together``, queued like :meth:`many`, so the server takes the locks
        just before the statement that goes out with them, in the same flight."""
        if self._together is not None:
            self.many(name, param_sets)
            return
        for params in param_sets:
            self.cursor.execute(self._queries[name], params)

    def flush(self) -> None:
        """Send the queued statements."""
        queued, self._queued = self._queued, []
        for name, param_sets in queued:
            self.writes.executemany(self._queries[name], param_sets)

    @contextmanager
    def _after_queued(self) -> Iterator[None]:
        """The block's statement, sent in one flight after the queued ones, if any."""
        if not self._queued or self._together is None:
            yield
            return
        with self._together():
            self.flush()
            yield


_COUNT_QUERIES = {
    (False, False): "count_runs",
    (True, False): "count_runs_by_status",
    (False, True): "count_runs_by_flow",
    (True, True): "count_runs_by_status_and_flow",
}
"""Which query counts runs, by (filtered by status, filtered by flow)."""


class SqlStore(ABC):
    """:class:`tarry.store.base.Store` over a SQL database."""

    def __init__(self, queries: Mapping[str, str], migrations: Sequence[Migration]) -> None:
        self._queries = queries
        self._migrations = tuple(migrations)

    # -- what a backend provides ----------------------------------------------------------

    @abstractmethod
    def _transaction(self, *, write: bool, lease: bool = False) -> AbstractContextManager[Tx]:
        """One transaction, committed when the block ends normally; driver errors
        translated into :class:`tarry.errors.StoreError`.

        A ``lease`` (a write that only leases due runs to a worker) commits without waiting
        for the disk. If the machine or the server crashes before the disk has it, the lease
        is lost and the run is due again, claimed anew as if its worker had died; and the
        checkpoint that follows a lease does wait, which puts everything written before it
        on the disk, the lease included. That saves a sync per wake."""

    @abstractmethod
    def _run_script(self, tx: Tx, script: str) -> None:
        """Run a migration script (several statements) inside ``tx``."""

    @property
    @abstractmethod
    def concurrency(self) -> int:
        """How many calls can usefully run at once."""

    @property
    def write_waited(self) -> bool:
        """Whether the last write waited for another connection's (False: writers do not
        take turns)."""
        return False

    @abstractmethod
    def change_token(self) -> object:
        """A cheap value that differs after another connection or process commits."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""

    def subscribe(self, callback: Callable[[], None]) -> bool:
        """Have ``callback`` called (from any thread) whenever the change token moves, if
        this store can push; whether it can (else the caller polls :meth:`change_token`)."""
        del callback
        return False

    def change_hint(self) -> Callable[[], object] | None:
        """None: no probe cheaper than :meth:`change_token`."""
        return None

    @contextmanager
    def _schema_lock(self) -> Iterator[None]:
        """Held while :meth:`ensure_schema` reads the schema's version and migrates: no
        other process migrates meanwhile. A no-op where one writer serialises anyway."""
        yield

    @contextmanager
    def _migration_transaction(self) -> Iterator[Tx]:
        """A write transaction that no other migrating process runs at the same time."""
        with self._transaction(write=True) as tx:
            yield tx

    # -- schema ---------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply pending schema migrations, all in one transaction (all of them or, on an
        error, none); return the names of those applied. Another process that opens the
        database meanwhile sees it empty or migrated, never halfway."""
        with self._migration_transaction() as tx:  # what another process applied meanwhile
            todo = pending(self._migrations, self._applied_in(tx) or [])  # counts as applied
            for migration in todo:
                self._run_script(tx, migration.sql)
                tx.run("record_migration", {"version": migration.version,
                                            "name": migration.name})
        return [migration.name for migration in todo]

    def ensure_schema(self) -> None:
        """Migrate an empty database; refuse (``MigrationError``) one behind or ahead."""
        with self._schema_lock():
            applied = self._applied_versions()
            if applied is None:
                self.migrate()
            else:
                require_current(self._migrations, applied)

    def pending_migrations(self) -> list[str] | None:
        """The names of the migrations not applied yet; None for a database without a tarry
        schema (migrated on first use). Raises ``MigrationError`` when the database is newer
        than this code."""
        applied = self._applied_versions()
        if applied is None:
            return None
        return [migration.name for migration in pending(self._migrations, applied)]

    def _applied_versions(self) -> list[int] | None:
        with self._transaction(write=False) as tx:
            return self._applied_in(tx)

    @staticmethod
    def _applied_in(tx: Tx) -> list[int] | None:
        """Applied migration versions, or None when the database has no tarry schema."""
        if tx.one("schema_exists") is None:
            return None
        return [row["version"] for row in tx.all("applied_migrations")]

    # -- flows ----------------------------------------------------------------------------

    def save_flow(self, digest: str, name: str, source: str) -> None:
        """Keep a flow's source by digest (idempotent)."""
        with self._transaction(write=True) as tx:
            tx.run("save_flow", {"digest": digest, "name": name, "source": source})

    def flow_source(self, digest: str) -> str:
        """The source saved under ``digest``; raises ``FlowNotFound``."""
        with self._transaction(write=False) as tx:
            row = tx.one("flow_source", {"digest": digest})
        if row is None:
            raise FlowNotFound(f"no flow source saved under digest {digest!r}", key=digest)
        return str(row["source"])

    # -- runs -----------------------------------------------------------------------------

    def create_run(self, run: NewRun, history: list[HistoryEntry]) -> None:
        """Insert a run and its first history entries."""
        self.create_runs([(run, history)])

    def create_runs(self, runs: Sequence[tuple[NewRun, Sequence[HistoryEntry]]]) -> None:
        """Insert runs and their first history entries, all in one transaction."""
        if not runs:
            return
        with self._transaction(write=True) as tx:
            runstore.insert_runs(tx, runs)

    def claim_due(self, now: datetime, worker: str, lease_until: datetime,
                  limit: int) -> list[RunRecord]:
        """Lease up to ``limit`` runs with ``due_at <= now``, the earliest due first.

        Each record carries the status the run had before the claim.
        """
        if limit <= 0:
            return []
        with self._transaction(write=True, lease=True) as tx:
            return self._claim(tx, "due_runs", rows.claim_params(limit, now, None), now=now,
                               worker=worker, lease_until=lease_until)

    def claim_due_with_inbox(self, now: datetime, worker: str, lease_until: datetime,
                             limit: int, *, ahead: datetime | None = None
                             ) -> list[tuple[RunRecord, list[InboxEvent]]]:
        """:meth:`claim_due` and the inbox of each run it claimed, in one transaction; with
        ``ahead``, also the runs nothing can reach before their instant, due by then."""
        if limit <= 0:
            return []
        with self._transaction(write=True, lease=True) as tx:
            return self._claim_with_inbox(tx, now=now, worker=worker, lease_until=lease_until,
                                          limit=limit, ahead=ahead)

    def _claim_with_inbox(self, tx: Tx, *, now: datetime, worker: str, lease_until: datetime,
                          limit: int, ahead: datetime | None
                          ) -> list[tuple[RunRecord, list[InboxEvent]]]:
        """:meth:`claim_due_with_inbox` inside ``tx``: the claim, then the inboxes. A backend
        that can do both in one statement overrides this."""
        claimed = self._claim(tx, "due_runs", rows.claim_params(limit, now, ahead), now=now,
                              worker=worker, lease_until=lease_until)
        inboxes = eventstore.inbox_of(tx, [record.id for record in claimed]) if claimed else {}
        return [(record, inboxes.get(record.id, [])) for record in claimed]

    def claim_run(self, run_id: str, now: datetime, worker: str,
                  lease_until: datetime) -> RunRecord | None:
        """Lease one specific run if it is due (as :meth:`claim_due` would); else None."""
        with self._transaction(write=True, lease=True) as tx:
            claimed = self._claim(tx, "due_run", {"id": run_id}, now=now, worker=worker,
                                  lease_until=lease_until)
        return claimed[0] if claimed else None

    def _claim(self, tx: Tx, due: str, params: Mapping[str, Any], *, now: datetime,
               worker: str, lease_until: datetime) -> list[RunRecord]:
        """Lease the runs the query ``due`` selects (rows of id, status, due_at, the
        earliest due first), in that order: two statements, the selection then the lease.
        A backend that can do both in one statement overrides this."""
        selected = tx.all(due, {**params, "now": to_millis(now)})
        if not selected:
            return []
        lease = {"ids": json.dumps([row["id"] for row in selected]), "worker": worker,
                 "lease_until": to_millis(lease_until), "now": to_millis(now)}
        leased = {row["id"]: row for row in tx.all("lease_runs", lease)}
        return [rows.claimed_record(leased[row["id"]], row["status"], row["due_at"])
                for row in selected]

    def renew_leases(self, worker: str, run_ids: list[str], lease_until: datetime) -> set[str]:
        """Extend the leases ``worker`` still holds; return the ids it still holds."""
        if not run_ids:
            return set()
        params = {"worker": worker, "ids": json.dumps(run_ids),
                  "lease_until": to_millis(lease_until)}
        with self._transaction(write=True) as tx:
            return {row["id"] for row in tx.all("renew_leases", params)}

    def count_recovery(self, run_id: str, worker: str) -> int | None:
        """Note that ``worker`` begins executing ``run_id``, which it took over from a
        worker that died running it: the run's recoveries in a row since its last checkpoint,
        this one included; None if ``worker`` no longer holds the run."""
        with self._transaction(write=True) as tx:
            row = tx.one("count_recovery", {"run_id": run_id, "worker": worker})
        return None if row is None else int(row["recoveries"])

    def checkpoint(self, worker: str, now: datetime,
                   updates: list[RunUpdate]) -> dict[str, CheckpointOutcome]:
        """Write updates for runs ``worker`` holds, all in one transaction.

        An update for a run whose lease ``worker`` lost writes nothing (``LEASE_LOST``).
        """
        with self._transaction(write=True) as tx:
            return self._checkpoint(tx, worker, now, updates)

    def checkpoint_and_claim(self, worker: str, now: datetime, updates: list[RunUpdate], *,
                             lease_until: datetime, limit: int, ahead: datetime | None = None
                             ) -> tuple[dict[str, CheckpointOutcome],
                                        list[tuple[RunRecord, list[InboxEvent]]]]:
        """:meth:`checkpoint`, then :meth:`claim_due_with_inbox`, in one transaction."""
        with self._transaction(write=True) as tx:
            outcomes = self._checkpoint(tx, worker, now, updates)
            claimed = [] if limit <= 0 else self._claim_with_inbox(
                tx, now=now, worker=worker, lease_until=lease_until, limit=limit, ahead=ahead)
        return outcomes, claimed

    def _checkpoint(self, tx: Tx, worker: str, now: datetime,
                    updates: list[RunUpdate]) -> dict[str, CheckpointOutcome]:
        """:meth:`checkpoint` inside ``tx``."""
        outcomes: dict[str, CheckpointOutcome] = {}
        history: list[dict[str, Any]] = []
        journal: list[dict[str, Any]] = []
        slotstore.lock_keys(tx, [key for update in updates for key in update.slot_keys])
        plans = eventstore.plan_wait_changes(tx, updates)
        ordered = sorted(updates, key=lambda update: update.run_id)
        written = self._write_runs(tx, worker, now, ordered)
        ended: list[str] = []
        for update in ordered:
            cancel_requested = written.get(update.run_id)
            if cancel_requested is None:
                outcomes[update.run_id] = CheckpointOutcome.LEASE_LOST
                continue
            history += rows.history_params(update.run_id, update.history)
            journal += rows.journal_params(update.run_id, update.journal)
            ended += childstore.start_children(tx, update)
            eventstore.settle_inbox(tx, update, now,
                                    plans.get(update.run_id, eventstore.WaitChanges()))
            taskstore.settle_tasks(tx, update, now)
            holdstore.settle_hold(tx, update)
            if update.successor is not None:
                self._continue(tx, update.run_id, update.successor, now)
            outcome = rows.checkpoint_outcome(update, cancel_requested)
            if outcome is CheckpointOutcome.CANCELLED:
                history += self._cancel_suspended(tx, update.run_id, now)
            slotstore.settle_slots(tx, update, update.status.is_terminal
                                   or outcome is CheckpointOutcome.CANCELLED, now)
            if update.related and (outcome is CheckpointOutcome.CANCELLED or (
                    update.release and update.status.is_terminal)):
                ended.append(update.run_id)
            outcomes[update.run_id] = outcome
        tx.insert("insert_history", history)
        tx.insert("insert_journal", journal)
        given_up = [child for update in ordered if update.run_id in written
                    for child in update.cancel_children]
        self._end_children(tx, ended, given_up, now)
        return outcomes

    @staticmethod
    def _end_children(tx: Tx, ended: Sequence[str], given_up: Sequence[str],
                      now: datetime) -> None:
        """Tell the parents of the runs that ``ended`` and cancel their live children, and
        the children their parents gave up waiting for (``given_up``, whose parents are
        not told: they no longer wait)."""
        if given_up:
            opstore.cancel_runs(tx, given_up, "parent", "its parent stopped waiting for it "
                                "(the call's timeout)", now, notify=False)
        live = childstore.ended(tx, ended, now)
        if live:
            opstore.cancel_runs(tx, live, "parent", "its parent run ended", now)

    @staticmethod
    def _continue(tx: Tx, run_id: str, successor: Successor, now: datetime) -> None:
        """End ``run_id`` into ``successor``: create it, and hand it the events the ended run
        was delivered and did not take in (buffered again)."""
        eventstore.rebuffer_inbox(tx, run_id, now, successor.rebuffer_until)
        runstore.insert_runs(tx, [(successor.run, successor.history)])

    def _write_runs(self, tx: Tx, worker: str, now: datetime,
                    updates: Sequence[RunUpdate]) -> dict[str, bool]:
        """Write the run rows of ``updates`` (ordered by run id) that ``worker`` still holds;
        for each written, whether a cancel was requested. The rows are locked in id order, as
        a lease renewal locks them, so a renewal and a checkpoint never deadlock. A backend
        that can write a batch in one statement overrides this."""
        written: dict[str, bool] = {}
        for update in updates:
            row = tx.one("checkpoint_run", rows.update_params(worker, now, update))
            if row is not None:
                written[update.run_id] = bool(row["cancel_requested"])
        return written

    def read_journal(self, run_id: str, *, scopes: Sequence[str], selective: str | None = None,
                     keys: Sequence[str] = ()) -> list[JournalEntry]:
        """The journal entries of ``run_id`` in ``scopes``, oldest first; in the scope
        ``selective``, only those whose key is in ``keys``."""
        params = {"run_id": run_id, "scopes": json.dumps(list(scopes)),
                  "selective": selective, "keys": json.dumps(list(keys))}
        with self._transaction(write=False) as tx:
            found = tx.all("journal_entries", params)
        return rows.journal_entries(found)

    def journals(self, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        """Every journal entry of each run in ``run_ids``, oldest first (runs with none are
        absent)."""
        if not run_ids:
            return {}
        with self._transaction(write=False) as tx:
            return runstore.journals_of(tx, run_ids)

    @staticmethod
    def _cancel_suspended(tx: Tx, run_id: str, now: datetime) -> list[dict[str, Any]]:
        """End, within a checkpoint, a run asked to cancel while it ran; its history."""
        tx.one("cancel_run", {"id": run_id, "by": "request", "now": to_millis(now)})
        tx.run("delete_run_waits", {"run_id": run_id})  # no event reaches it now
        taskstore.close_run_tasks(tx, run_id, now)
        entry = HistoryEntry(at=now, kind="cancelled", data={"by": "request"})
        return rows.history_params(run_id, [entry])

    def cancel(self, run_id: str, by: str, now: datetime, *,
               reason: str | None = None) -> RunRecord:
        """Cancel a held, pending or waiting run at once; flag a running one
        (``cancel_requested``). Raises ``RunNotFound``, or ``RunStateError`` for a
        finished run."""
        with self._transaction(write=True) as tx:
            acted = opstore.cancel_runs(tx, [run_id], by, reason, now)
            found = self._found(tx, run_id)
            if not acted:
                status = RunStatus(found["status"])
                raise RunStateError(run_id, status.value, f"run {run_id} already {status}")
        return rows.record_from_row(found)

    @staticmethod
    def _found(tx: Tx, run_id: str) -> Row:
        row = tx.one("get_run", {"id": run_id})
        if row is None:
            raise RunNotFound(run_id)
        return row

    def retry_runs(self, plans: Sequence[RetryPlan], now: datetime) -> list[RunRecord | None]:
        """Carry out each retry plan (see ``Store``), all in one transaction."""
        with self._transaction(write=True) as tx:
            return opstore.retry_all(tx, plans, now)

    def move_run(self, plan: MovePlan, now: datetime) -> RunRecord | None:
        """Move one run to another definition if it is as the plan saw it (see ``Store``)."""
        with self._transaction(write=True) as tx:
            return opstore.move(tx, plan, now)

    def continued_as(self, run_id: str) -> str | None:
        """The id of the run ``run_id`` continued as, if it did."""
        with self._transaction(write=False) as tx:
            row = tx.one("continued_as", {"id": run_id})
        return None if row is None else str(row["id"])

    def reruns(self, run_id: str) -> list[str]:
        """The ids of the reruns of ``run_id``, oldest first."""
        with self._transaction(write=False) as tx:
            return [str(row["id"]) for row in tx.all("reruns_of", {"id": run_id})]

    def children(self, run_id: str) -> list[str]:
        """The ids of the child runs of ``run_id``, oldest first."""
        with self._transaction(write=False) as tx:
            return childstore.children_of(tx, run_id)

    def create_batch(self, batch: BatchRecord) -> BatchRecord:
        """Record ``batch`` with its ``total``: the runs its filter selects now."""
        with self._transaction(write=True) as tx:
            counted = replace(batch, total=opstore.count_selected(tx, batch.action,
                                                                  batch.filter, batch.cursor))
            opstore.insert_batch(tx, counted)
        return counted

    def count_batch(self, batch: BatchRecord) -> int:
        """How many runs ``batch`` (not recorded) would select now: a dry run's count."""
        with self._transaction(write=False) as tx:
            return opstore.count_selected(tx, batch.action, batch.filter, batch.cursor)

    def get_batch(self, batch_id: str) -> BatchRecord:
        """One batch; raises ``BatchNotFound``."""
        with self._transaction(write=False) as tx:
            return opstore.find_batch(tx, batch_id)

    def unfinished_batches(self) -> list[str]:
        """The ids of the batches not done, oldest first."""
        with self._transaction(write=False) as tx:
            return [str(row["id"]) for row in tx.all("unfinished_batches")]

    def work_batch(self, batch_id: str, now: datetime, *, limit: int,
                   plan: RetryPlanner) -> BatchRecord:
        """Act on the next ``limit`` runs of a batch, in one transaction (see ``Store``)."""
        with self._transaction(write=True) as tx:
            return opstore.work_page(tx, batch_id, now, limit=limit, plan=plan)

    def get_run(self, run_id: str) -> RunRecord:
        """One run; raises ``RunNotFound``."""
        with self._transaction(write=False) as tx:
            row = tx.one("get_run", {"id": run_id})
        if row is None:
            raise RunNotFound(run_id)
        return rows.record_from_row(row)

    def history(self, run_id: str) -> list[HistoryEntry]:
        """A run's history, oldest first; raises ``RunNotFound``."""
        with self._transaction(write=False) as tx:
            entries = tx.all("history", {"run_id": run_id})
            if not entries and tx.one("get_run", {"id": run_id}) is None:
                raise RunNotFound(run_id)
        return [rows.entry_from_row(row) for row in entries]

    def list_runs(self, *, status: RunStatus | None = None, flow: str | None = None,
                  target: str | None = None, waiting_for: str | None = None,
                  at_step: str | None = None, after: tuple[datetime, str] | None = None,
                  limit: int = 100) -> list[RunRecord]:
        """Runs, newest first, optionally filtered; ``after`` is the position (created_at,
        id) of the last run of the previous page."""
        params: dict[str, Any] = {**rows.run_filters(flow, target, waiting_for, at_step),
                                  "limit": limit,
                                  "before_at": to_millis(after[0]) if after else None,
                                  "before_id": after[1] if after else None}
        if status is None and flow is not None:  # one index orders the flow's runs
            query = "list_runs_by_flow"
        else:
            query = "list_runs"
            params["statuses"] = json.dumps([status] if status is not None else list(RunStatus))
        with self._transaction(write=False) as tx:
            found = tx.all(query, params)
        return [rows.record_from_row(row) for row in found]

    def count_runs_per_status(self, *, flow: str | None = None, target: str | None = None,
                              waiting_for: str | None = None, at_step: str | None = None
                              ) -> dict[RunStatus, int]:
        """How many runs have each status (absent: none), filtered as :meth:`list_runs`."""
        with self._transaction(write=False) as tx:
            found = tx.all("count_runs_per_status",
                           rows.run_filters(flow, target, waiting_for, at_step))
        return {RunStatus(row["status"]): int(row["total"]) for row in found}

    def count_runs_per_step(self, flow: str) -> dict[str | None, dict[RunStatus, int]]:
        """How many of ``flow``'s waiting, held, running and failed runs are at each step,
        per status (one index read: ``count_runs_per_step``)."""
        with self._transaction(write=False) as tx:
            found = tx.all("count_runs_per_step", {"flow": flow})
        counts: dict[str | None, dict[RunStatus, int]] = {}
        for row in found:
            counts.setdefault(row["at_step"], {})[RunStatus(row["status"])] = int(row["total"])
        return counts

    def next_due_at(self) -> datetime | None:
        """The earliest instant something is due: a run's ``due_at`` or a schedule's next
        occurrence; None when nothing is."""
        with self._transaction(write=False) as tx:
            row = tx.one("next_due_at")
        due = row["due_at"] if row else None
        return None if due is None else from_millis(due)

    def count_runs(self, *, status: RunStatus | None = None, flow: str | None = None) -> int:
        """How many runs there are, optionally filtered by status and flow."""
        query = _COUNT_QUERIES[status is not None, flow is not None]
        params = {"status": status.value if status else None, "flow": flow}
        with self._transaction(write=False) as tx:
            row = tx.one(query, params)
        return int(row["total"]) if row else 0

    def run_ids_starting(self, prefix: str, *, limit: int) -> list[str]:
        """At most ``limit`` ids that start with ``prefix``, in order."""
        return self._ids_starting("run_ids_from", prefix, limit)

    def task_ids_starting(self, prefix: str, *, limit: int) -> list[str]:
        """At most ``limit`` task ids that start with ``prefix``, in order."""
        return self._ids_starting("task_ids_from", prefix, limit)

    def _ids_starting(self, query: str, prefix: str, limit: int) -> list[str]:
        """The ids ``query`` lists from ``prefix`` on, as long as they start with it."""
        with self._transaction(write=False) as tx:
            found = tx.all(query, {"prefix": prefix, "limit": limit})
        return list(itertools.takewhile(lambda found_id: found_id.startswith(prefix),
                                        (str(row["id"]) for row in found)))

    # -- retention ------------------------------------------------------------------------

    def purge_ended_runs(self, ended_before: datetime, limit: int) -> int:
        """Delete up to ``limit`` runs that ended before ``ended_before`` (see ``Store``)."""
        with self._transaction(write=True) as tx:
            return tx.run("purge_ended_runs", {"before": to_millis(ended_before),
                                               "limit": limit})

    def count_ended_runs(self, ended_before: datetime) -> int:
        """How many runs ended before ``ended_before``."""
        with self._transaction(write=False) as tx:
            row = tx.one("count_ended_runs", {"before": to_millis(ended_before)})
        return int(row["total"]) if row else 0

    def purge_settled_events(self, received_before: datetime, now: datetime,
                             limit: int) -> int:
        """Delete up to ``limit`` settled events received before ``received_before`` (see
        ``Store``), state by state from the (state, received_at) index."""
        deleted = 0
        with self._transaction(write=True) as tx:
            tx.run("expire_buffered", {"now": to_millis(now)})
            for state in SETTLED_EVENT_STATES:
                if deleted < limit:
                    deleted += tx.run("purge_settled_events", {
                        "state": state.value, "before": to_millis(received_before),
                        "limit": limit - deleted})
        return deleted

    def count_settled_events(self, received_before: datetime, now: datetime) -> int:
        """How many events :meth:`purge_settled_events` would delete at ``now``."""
        with self._transaction(write=False) as tx:
            row = tx.one("count_settled_events", {"before": to_millis(received_before),
                                                  "now": to_millis(now)})
        return int(row["total"]) if row else 0

    def reserve_idempotency_key(self, principal: str, key: str, fingerprint: str,
                                run_id: str, now: datetime) -> tuple[str, str]:
        """Tie the key to ``run_id`` unless it is tied already; what it is tied to. Keys
        older than :data:`IDEMPOTENCY_KEY_RETENTION` are forgotten first."""
        params = {"principal": principal, "key": key, "fingerprint": fingerprint,
                  "run_id": run_id, "now": to_millis(now),
                  "cutoff": to_millis(now - IDEMPOTENCY_KEY_RETENTION)}
        with self._transaction(write=True) as tx:
            tx.run("purge_idempotency_keys", params)
            tx.run("reserve_idempotency_key", params)
            row = tx.one("idempotency_key", params)
        assert row is not None
        return str(row["run_id"]), str(row["fingerprint"])

    # -- holds ----------------------------------------------------------------------------

    def create_held_run(self, run: NewRun, history: list[HistoryEntry], *,
                        recent_since: datetime) -> str | None:
        """Insert a held run unless a sibling supersedes it (see ``Store``)."""
        with self._transaction(write=True) as tx:
            return holdstore.create_held(tx, run, history, recent_since)

    def acquire_check_slot(self, holder: str, now: datetime, lease_until: datetime,
                           slots: int) -> bool:
        """Take a fleet-wide check slot for ``holder`` if one of ``slots`` is free."""
        with self._transaction(write=True) as tx:
            return holdstore.acquire_slot(tx, holder, now, lease_until, slots)

    def release_check_slot(self, holder: str) -> None:
        """Give back the check slot of ``holder`` (nothing if it holds none)."""
        with self._transaction(write=True) as tx:
            tx.run("release_check_slot", {"holder": holder})

    # -- slots ----------------------------------------------------------------------------

    def take_slot(self, claim: SlotClaim, now: datetime) -> SlotTurn:
        """Take a slot for ``claim``, or queue it for the next one (see ``Store``)."""
        with self._transaction(write=True) as tx:
            return slotstore.take(tx, claim, now)

    def give_slot_back(self, claim: SlotClaim, now: datetime) -> None:
        """Give back the slot ``claim`` holds, to the next in line (see ``Store``)."""
        with self._transaction(write=True) as tx:
            slotstore.give_back(tx, claim, now)

    def slot_view(self, key: str, run_id: str, holder: str = "") -> SlotView:
        """Who holds the slots of ``key`` and who waits (see ``Store``)."""
        with self._transaction(write=False) as tx:
            return slotstore.view(tx, key, run_id, holder)

    # -- events ---------------------------------------------------------------------------

    def record_event(self, event: NewEvent, now: datetime,
                     starts: TriggerStarts | None = None) -> EventRecord:
        """Record an event, deliver it and start its triggers' runs, in one transaction
        (see ``Store``)."""
        return self.record_events([(event, starts)], now)[0]

    def record_events(self, events: Sequence[tuple[NewEvent, TriggerStarts | None]],
                      now: datetime) -> list[EventRecord]:
        """:meth:`record_event` for each event in order, all in one transaction."""
        if not events:
            return []
        with self._transaction(write=True) as tx:
            return eventstore.deliver_new(tx, events, now)

    def inbox(self, run_ids: list[str]) -> dict[str, list[InboxEvent]]:
        """The undelivered inbox of each run, oldest first."""
        if not run_ids:
            return {}
        with self._transaction(write=False) as tx:
            return eventstore.inbox_of(tx, run_ids)

    def list_events(self, *, state: EventState | None = None, type: str | None = None,
                    after: tuple[datetime, str, str] | None = None, now: datetime,
                    limit: int = 100) -> list[EventRecord]:
        """Events, newest first, after recording lapsed buffers as unmatched."""
        params = {"states": json.dumps([state] if state is not None else list(EventState)),
                  "type": type, "limit": limit,
                  "before_at": to_millis(after[0]) if after else None,
                  "before_type": after[1] if after else None,
                  "before_id": after[2] if after else None}
        with self._transaction(write=True) as tx:
            tx.run("expire_buffered", {"now": to_millis(now)})
            found = tx.all("list_events", params)
        return [eventstore.record_from_row(row) for row in found]

    def count_inbox_events(self) -> dict[EventState, int]:
        """How many events are invalid, buffered and unmatched (absent: none)."""
        with self._transaction(write=False) as tx:
            found = tx.all("count_inbox_events")
        return {EventState(row["state"]): int(row["total"]) for row in found}

    def get_event(self, event_id: str) -> EventRecord:
        """One event by id."""
        with self._transaction(write=False) as tx:
            return eventstore.find_by_id(tx, event_id)

    def redeliver(self, event: NewEvent, now: datetime,
                  starts: TriggerStarts | None = None) -> EventRecord:
        """Deliver a stored invalid, unmatched or buffered event again (an invalid one
        corrected also starts its triggers' runs)."""
        with self._transaction(write=True) as tx:
            tx.run("expire_buffered", {"now": to_millis(now)})
            return eventstore.redeliver(tx, event, now, starts)

    def discard(self, event_id: str, now: datetime) -> EventRecord:
        """Mark a quarantined, unmatched or buffered event discarded."""
        with self._transaction(write=True) as tx:
            tx.run("expire_buffered", {"now": to_millis(now)})
            return eventstore.discard(tx, event_id, now)

    # -- tasks ----------------------------------------------------------------------------

    def get_task(self, task_id: str) -> TaskRecord:
        """One task; raises ``TaskNotFound``."""
        with self._transaction(write=False) as tx:
            return taskstore.find(tx, task_id)

    def list_tasks(self, *, state: TaskState | None = None,
                   limit: int = 100) -> list[TaskRecord]:
        """Tasks, newest first, optionally of one state."""
        params = {"state": state.value if state else None, "limit": limit}
        with self._transaction(write=False) as tx:
            found = tx.all("list_tasks", params)
        return [taskstore.record_from_row(row) for row in found]

    def complete_task(self, completion: TaskCompletion) -> TaskRecord:
        """Complete an open task and deliver the completion to its run (see ``Store``)."""
        with self._transaction(write=True) as tx:
            return taskstore.complete(tx, completion)

    def append_history(self, run_id: str, entries: list[HistoryEntry]) -> None:
        """Add entries to a run's history (a refused request about it, say)."""
        with self._transaction(write=True) as tx:
            tx.insert("insert_history", rows.history_params(run_id, entries))
    # -- schedules ------------------------------------------------------------------------

    def sync_schedules(self, schedules: Sequence[tuple[str, str, datetime]],
                       now: datetime) -> None:
        """Make the stored schedules exactly ``schedules`` (key, flow, next occurrence)."""
        with self._transaction(write=True) as tx:
            triggerstore.sync(tx, schedules, now)

    def due_schedules(self, now: datetime, limit: int) -> list[ScheduleRecord]:
        """Schedules whose next occurrence is at or before ``now``, earliest first."""
        with self._transaction(write=False) as tx:
            return triggerstore.due(tx, now, limit)

    def fire_schedule(self, firing: ScheduleFiring, now: datetime) -> bool:
        """Carry out a schedule's firing, unless another worker did (see ``Store``)."""
        with self._transaction(write=True) as tx:
            return triggerstore.fire(tx, firing, now)

    # -- pacing starts --------------------------------------------------------------------

    def take_throttle_turn(self, throttle: ThrottleKey, run_id: str,
                           now: datetime) -> datetime:
        """Take the next turn of a throttle's key for ``run_id`` (see ``Store``)."""
        with self._transaction(write=True) as tx:
            return pacingstore.take_turn(tx, throttle, run_id, now)

    def pending_debounces(self, now: datetime, limit: int) -> list[DebounceRecord]:
        """The debounced bursts whose run starts after ``now``, soonest first."""
        with self._transaction(write=False) as tx:
            return pacingstore.pending_debounces(tx, now, limit)

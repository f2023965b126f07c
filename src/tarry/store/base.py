"""The store interface: everything tarry persists, in domain verbs.

The engine talks to storage only through :class:`Store`. Backends (SQLite, PostgreSQL) keep
their SQL in ``.sql`` files and their locking strategy (``BEGIN IMMEDIATE`` versus
``FOR UPDATE SKIP LOCKED``) behind these methods; nothing backend-specific leaks above.

Claiming rests on one column, ``due_at``: a run is due when ``due_at <= now``. A pending run is
due at creation; a waiting or held run at its next wake; a running run at its lease expiry
(so a run whose worker died becomes due again by itself); a finished run, never (``None``).

All instants are aware UTC datetimes; backends store them as integer epoch milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Protocol

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
    TaskCompletion,
    TaskRecord,
    TaskState,
    ThrottleKey,
    TriggerStarts,
)

__all__ = ["IDEMPOTENCY_KEY_RETENTION", "SETTLED_EVENT_STATES", "RetryPlanner", "Store",
           "pages_of_runs"]

RetryPlanner = Callable[[RunRecord, list[JournalEntry]], RetryPlan | None]
"""Plans the retry of one failed run from its record and journal (pure; None: leave it)."""

IDEMPOTENCY_KEY_RETENTION = timedelta(hours=24)
"""How long an ``Idempotency-Key`` of a start is remembered: a retry within a day returns the
first run; after that the key is free again (as with most payment APIs' keys)."""


SETTLED_EVENT_STATES = (EventState.DELIVERED, EventState.DUPLICATE, EventState.DISCARDED,
                        EventState.UNMATCHED)
"""The states of the events retention deletes: none that a waiting run may still take (a
buffered event) or that awaits an operator (a quarantined one)."""


class Store(Protocol):
    """Persistence for runs, their history and their flows. Every method is one transaction.

    The methods block; code on an event loop awaits them through
    :class:`tarry.store.aio.AsyncStore` instead.
    """

    @property
    def concurrency(self) -> int:
        """How many calls can usefully run at once (the threads of the async boundary):
        1 for SQLite's single writer, the connection pool's size for PostgreSQL."""
        ...

    @property
    def write_waited(self) -> bool:
        """Whether this store's last write transaction had to wait for another connection's
        to finish before it could begin: SQLite's one write lock, taken in turns by every
        process on the file. Always False for PostgreSQL, whose writers do not take turns.
        A worker that sees it gathers more runs into each checkpoint (see
        :data:`tarry.engine.committer.CONTENDED_GATHER`)."""
        ...

    def migrate(self) -> list[str]:
        """Apply pending schema migrations; return the names of those applied."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...

    def pending_migrations(self) -> list[str] | None:
        """The names of the migrations not applied yet; None for a database without a tarry
        schema (migrated on first use). Raises ``MigrationError`` when the database is newer
        than this code."""
        ...

    def save_flow(self, digest: str, name: str, source: str) -> None:
        """Keep a flow's source by digest (idempotent)."""
        ...

    def flow_source(self, digest: str) -> str:
        """The source saved under ``digest``."""
        ...

    def create_run(self, run: NewRun, history: list[HistoryEntry]) -> None:
        """Insert a run and its first history entries."""
        ...

    def create_runs(self, runs: Sequence[tuple[NewRun, Sequence[HistoryEntry]]]) -> None:
        """Insert runs and their first history entries, all in one transaction (all or
        none)."""
        ...

    def claim_due(self, now: datetime, worker: str, lease_until: datetime,
                  limit: int) -> list[RunRecord]:
        """Lease up to ``limit`` runs with ``due_at <= now``, earliest first.

        Claimed runs become ``running`` with ``due_at = lease_until``. No run is ever handed
        to two workers whose leases are both live. The returned records carry the status the
        run had *before* the claim (``pending``, ``waiting``, ``held``, or ``running`` when a
        lapsed lease is taken over), so the caller knows whether it starts, resumes or
        recovers the run, and the instant it was due (``due_at``).
        """
        ...

    def claim_due_with_inbox(self, now: datetime, worker: str, lease_until: datetime,
                             limit: int, *, ahead: datetime | None = None
                             ) -> list[tuple[RunRecord, list[InboxEvent]]]:
        """:meth:`claim_due` and the inbox of each run it claimed (as :meth:`inbox`), in one
        transaction: what a worker needs to execute them.

        With ``ahead`` (later than ``now``), it also claims the runs due by ``ahead`` that
        nothing can reach before their instant (waiting or held, with no event wait and no
        open task, so their inbox stays as claimed): the worker runs each at its ``due_at``,
        with the claim's commit already behind it.
        """
        ...

    def claim_run(self, run_id: str, now: datetime, worker: str,
                  lease_until: datetime) -> RunRecord | None:
        """Lease one specific run if it is due (as :meth:`claim_due` would); else None."""
        ...

    def renew_leases(self, worker: str, run_ids: list[str], lease_until: datetime) -> set[str]:
        """Extend the leases ``worker`` still holds; return the ids it still holds."""
        ...

    def count_recovery(self, run_id: str, worker: str) -> int | None:
        """Note that ``worker`` begins executing ``run_id``, which it took over from a
        worker that died running it: the run's recoveries in a row since its last checkpoint,
        this one included; None if ``worker`` no longer holds the run."""
        ...

    def checkpoint(self, worker: str, now: datetime,
                   updates: list[RunUpdate]) -> dict[str, CheckpointOutcome]:
        """Write updates for runs ``worker`` holds, all in one transaction.

        Per update, besides the run row and its history: the inbox entries in ``consumed``
        are deleted; on release, the run's open tasks become ``tasks`` (new ones opened, the
        ones no longer listed closed: ``timeout`` once past their deadline, else
        ``cancelled``), the run's event waits are replaced by ``waits``, and a new
        wait (or one named in ``rescan``) whose branch has no inbox entry takes the oldest
        buffered event received before its deadline at once (it becomes delivered to this
        run); a released run that still has inbox entries is due at ``now``.
        """
        ...

    def checkpoint_and_claim(self, worker: str, now: datetime, updates: list[RunUpdate], *,
                             lease_until: datetime, limit: int, ahead: datetime | None = None
                             ) -> tuple[dict[str, CheckpointOutcome],
                                        list[tuple[RunRecord, list[InboxEvent]]]]:
        """:meth:`checkpoint`, then :meth:`claim_due_with_inbox` of up to ``limit`` runs, in
        one transaction: a busy worker's next runs cost no transaction of their own (the
        checkpoint's commit waits for the disk, as a checkpoint's does). A run the checkpoint
        left due may be claimed right back."""
        ...

    def read_journal(self, run_id: str, *, scopes: Sequence[str], selective: str | None = None,
                     keys: Sequence[str] = ()) -> list[JournalEntry]:
        """The journal entries of ``run_id`` in ``scopes``, oldest first; in the scope
        ``selective``, only those whose key is in ``keys`` (what a resume reads)."""
        ...

    def journals(self, run_ids: Sequence[str]) -> dict[str, list[JournalEntry]]:
        """Every journal entry of each run in ``run_ids``, oldest first (runs with none are
        absent): what a run document shows."""
        ...

    def cancel(self, run_id: str, by: str, now: datetime, *,
               reason: str | None = None) -> RunRecord:
        """Cancel a run: at once when held, pending or waiting; a running one is flagged
        (``cancel_requested``) and its worker ends it at the next checkpoint. The history
        records ``by`` and ``reason``. Raises ``RunNotFound``, or ``RunStateError`` for a
        finished run."""
        ...

    def retry_runs(self, plans: Sequence[RetryPlan], now: datetime) -> list[RunRecord | None]:
        """Make each planned failed run pending again (due ``now``) with the plan's state and
        inputs, forget the journal entries it names and record its ``retried`` entry; for
        each plan, the run, or None when the run is no longer the failed run the plan was
        made from (another retry came first): nothing is written for it."""
        ...

    def move_run(self, plan: MovePlan, now: datetime) -> RunRecord | None:
        """Move one held or waiting run to another definition of its flow, in one
        transaction: if the run is still as the plan saw it (its status, definition and
        stored state, and no worker holds it), write its new definition and state (due
        ``now`` with ``wake``) and its ``migrated`` entry; the run as written, or None, with
        nothing written, when it changed meanwhile (it woke, or another move came first)."""
        ...

    def continued_as(self, run_id: str) -> str | None:
        """The id of the run ``run_id`` continued as (``NewRun.continued_from``), if it
        did."""
        ...

    def reruns(self, run_id: str) -> list[str]:
        """The ids of the runs started as reruns of ``run_id`` (``NewRun.rerun_of``), oldest
        first."""
        ...

    def children(self, run_id: str) -> list[str]:
        """The ids of the child runs ``run_id`` started (``NewRun.parent_id``), oldest
        first."""
        ...

    def create_batch(self, batch: BatchRecord) -> BatchRecord:
        """Record a new batch; returned with its ``total``, how many runs its filter selects
        before its cursor now."""
        ...

    def count_batch(self, batch: BatchRecord) -> int:
        """How many runs ``batch`` would select now (it is not recorded): a dry run."""
        ...

    def get_batch(self, batch_id: str) -> BatchRecord:
        """One batch; raises ``BatchNotFound``."""
        ...

    def unfinished_batches(self) -> list[str]:
        """The ids of the batches not done yet (a server stopped while it worked them),
        oldest first."""
        ...

    def work_batch(self, batch_id: str, now: datetime, *, limit: int,
                   plan: RetryPlanner) -> BatchRecord:
        """Act on the next ``limit`` runs the batch selects after its cursor, in one
        transaction with its counts and cursor (so a batch is never worked twice over the same
        runs): cancel each, or retry each as ``plan`` says; a run that no longer qualifies is
        skipped. The batch is done once a page comes back short. Returns it as written."""
        ...

    def get_run(self, run_id: str) -> RunRecord:
        """One run; raises ``RunNotFound``."""
        ...

    def history(self, run_id: str) -> list[HistoryEntry]:
        """A run's history, oldest first."""
        ...

    def list_runs(self, *, status: RunStatus | None = None, flow: str | None = None,
                  target: str | None = None, waiting_for: str | None = None,
                  at_step: str | None = None, after: tuple[datetime, str] | None = None,
                  limit: int = 100) -> list[RunRecord]:
        """Runs, newest first (by ``created_at``, then id), optionally filtered.

        ``waiting_for`` is a wait kind (:data:`tarry.model.WAIT_KINDS`: the kind of the run's
        ``waiting_for``) or an event type (any event wait of the run, every branch and
        alternative). ``at_step`` is a step of the run's flow without loop indices
        (:func:`tarry.model.step_node`): the step the run waits at or failed at. ``after`` is
        the position ``(created_at, id)`` of the last run of the previous page (keyset
        paging: a run created meanwhile never shifts a page).
        """
        ...

    def count_runs_per_status(self, *, flow: str | None = None, target: str | None = None,
                              waiting_for: str | None = None, at_step: str | None = None
                              ) -> dict[RunStatus, int]:
        """How many runs have each status (a status without runs is absent), with the
        filters of :meth:`list_runs`."""
        ...

    def count_runs_per_step(self, flow: str) -> dict[str | None, dict[RunStatus, int]]:
        """How many of ``flow``'s waiting, held, running and failed runs are at each step
        (``at_step`` of :meth:`list_runs`; None: at no step, as a held run), per status."""
        ...

    def next_due_at(self) -> datetime | None:
        """The earliest instant something is due: a run's ``due_at`` or a schedule's next
        occurrence; None when nothing is."""
        ...

    def count_runs(self, *, status: RunStatus | None = None, flow: str | None = None) -> int:
        """How many runs there are, optionally filtered by status and flow."""
        ...

    def run_ids_starting(self, prefix: str, *, limit: int) -> list[str]:
        """At most ``limit`` run ids that start with ``prefix``, in order."""
        ...

    def purge_ended_runs(self, ended_before: datetime, limit: int) -> int:
        """Delete up to ``limit`` runs that ended (succeeded, failed, were cancelled or
        refused) before ``ended_before``, the earliest ended first, each with every row of
        its own (history, journal, tasks, inbox), all in one transaction; how many. A run
        that has not ended is never touched."""
        ...

    def count_ended_runs(self, ended_before: datetime) -> int:
        """How many runs ended before ``ended_before``."""
        ...

    def purge_settled_events(self, received_before: datetime, now: datetime,
                             limit: int) -> int:
        """Delete up to ``limit`` events in :data:`SETTLED_EVENT_STATES` received before
        ``received_before`` (a buffer lapsed by ``now`` first turns unmatched), in one
        transaction; how many."""
        ...

    def count_settled_events(self, received_before: datetime, now: datetime) -> int:
        """How many events :meth:`purge_settled_events` would delete at ``now``."""
        ...

    def create_held_run(self, run: NewRun, history: list[HistoryEntry], *,
                        recent_since: datetime) -> str | None:
        """Insert a held run and its first history entries, unless it is superseded.

        A run with a target is superseded by a run of the same flow and target whose hold
        has not cleared (and that was not refused or cancelled), or cleared after
        ``recent_since``: then nothing is inserted and that sibling's id comes back. Starts
        of one flow and target are serialised, so two can never both pass.
        """
        ...

    def acquire_check_slot(self, holder: str, now: datetime, lease_until: datetime,
                           slots: int) -> bool:
        """Take a check slot for ``holder`` until ``lease_until`` if fewer than ``slots`` are
        taken by others across every worker sharing the store (lapsed leases do not count);
        whether it did. Taking it again renews it."""
        ...

    def release_check_slot(self, holder: str) -> None:
        """Give back the check slot of ``holder`` (nothing if it holds none)."""
        ...

    def take_slot(self, claim: SlotClaim, now: datetime) -> SlotTurn:
        """Take a slot of ``claim.key`` for its run (or step), fleet-wide, if it holds one
        already (handed to it while it waited), or if fewer than ``claim.limit`` are held and
        nobody waits before it; otherwise queue it, once, behind those waiting (first come,
        first served). A queued run is handed a slot by the transaction that frees one, which
        makes it due now."""
        ...

    def give_slot_back(self, claim: SlotClaim, now: datetime) -> None:
        """Give back the slot ``claim`` holds (nothing if none), in a transaction that hands
        it to the oldest entry of the key's queue. A run that ends gives back every slot it
        holds in the transaction that ends it."""
        ...

    def slot_view(self, key: str, run_id: str, holder: str = "") -> SlotView:
        """The runs holding slots of ``key``, how many wait for one, and how many of those
        wait before ``run_id`` (its step ``holder``)."""
        ...

    def record_event(self, event: NewEvent, now: datetime,
                     starts: TriggerStarts | None = None) -> EventRecord:
        """Record an event and deliver it, in one transaction.

        A known ``(type, id)`` is a duplicate: nothing changes and the stored record comes
        back with state ``duplicate``. An invalid event is quarantined. A valid one goes into
        the inbox of every branch waiting on ``(type, match_key)`` (found by index) whose
        deadline is after the event's ``received_at``, and their runs become due now; the
        waits stay registered until their runs move on. With no such branch it is buffered
        until ``buffer_until`` (or unmatched at once). A valid new event also starts the runs
        of ``starts`` (its triggers'), noted on its record as ``started``.
        """
        ...

    def record_events(self, events: Sequence[tuple[NewEvent, TriggerStarts | None]],
                      now: datetime) -> list[EventRecord]:
        """:meth:`record_event` for each ``(event, starts)`` in order, all in one
        transaction (all of them or, on an error, none); their records, in order. An id
        sent twice in ``events`` is a duplicate the second time, as if sent one by one."""
        ...

    def inbox(self, run_ids: list[str]) -> dict[str, list[InboxEvent]]:
        """The undelivered inbox of each run, oldest first (runs with none are absent)."""
        ...

    def list_events(self, *, state: EventState | None = None, type: str | None = None,
                    after: tuple[datetime, str, str] | None = None, now: datetime,
                    limit: int = 100) -> list[EventRecord]:
        """Events, newest first (by ``received_at``, then type and id), optionally filtered;
        buffered ones whose buffer lapsed by ``now`` are recorded as unmatched first.
        ``after`` is the position ``(received_at, type, id)`` of the last event of the
        previous page (keyset paging)."""
        ...

    def count_inbox_events(self) -> dict[EventState, int]:
        """How many events are invalid, buffered and unmatched (a state with none is
        absent): what an operator may redeliver or discard."""
        ...

    def get_event(self, event_id: str) -> EventRecord:
        """One event by id; raises ``EventError`` when none (or several types) have it."""
        ...

    def redeliver(self, event: NewEvent, now: datetime,
                  starts: TriggerStarts | None = None) -> EventRecord:
        """Deliver a stored invalid, unmatched or buffered event again, with (possibly
        corrected) data: like :meth:`record_event` but replacing that record (only a
        corrected invalid event starts ``starts``: a valid one did when first recorded)."""
        ...

    def discard(self, event_id: str, now: datetime) -> EventRecord:
        """Mark a quarantined, unmatched or buffered event discarded."""
        ...

    def get_task(self, task_id: str) -> TaskRecord:
        """One task; raises ``TaskNotFound``."""
        ...

    def list_tasks(self, *, state: TaskState | None = None,
                   limit: int = 100) -> list[TaskRecord]:
        """Tasks, newest first (by creation, then id), optionally of one state."""
        ...

    def task_ids_starting(self, prefix: str, *, limit: int) -> list[str]:
        """At most ``limit`` task ids that start with ``prefix``, in order."""
        ...

    def complete_task(self, completion: TaskCompletion) -> TaskRecord:
        """Complete an open task, in one transaction: record the completion, put it in the
        run's inbox under the asking step's path, wake the run, and add ``task.completed``
        to its history. Raises ``TaskNotFound``, or ``TaskStateError`` when the task is not
        open or its deadline is not after ``completion.at`` (nothing changes)."""
        ...

    def append_history(self, run_id: str, entries: list[HistoryEntry]) -> None:
        """Add entries to a run's history."""

    def reserve_idempotency_key(self, principal: str, key: str, fingerprint: str,
                                run_id: str, now: datetime) -> tuple[str, str]:
        """Tie ``(principal, key)`` to ``run_id`` and the request's ``fingerprint`` unless it
        is tied already; either way, the ``(run_id, fingerprint)`` it is tied to. A key tied
        longer ago than :data:`IDEMPOTENCY_KEY_RETENTION` is forgotten (tied anew)."""
        ...

    def change_token(self) -> object:
        """A cheap value that differs after another connection or process commits.

        Workers compare tokens to notice new work without querying for it.
        """
        ...

    def sync_schedules(self, schedules: Sequence[tuple[str, str, datetime]],
                       now: datetime) -> None:
        """Make the stored schedules exactly ``schedules`` (key, flow, next occurrence): a
        new one is handled up to ``now`` (nothing before it is caught up); one no longer
        listed is dropped."""
        ...

    def due_schedules(self, now: datetime, limit: int) -> list[ScheduleRecord]:
        """Schedules whose next occurrence is at or before ``now``, earliest first."""
        ...

    def fire_schedule(self, firing: ScheduleFiring, now: datetime) -> bool:
        """Carry out ``firing`` in one transaction: advance its schedule (from the value
        read) and create its starts' runs, oldest first, each refusing ``hold-superseded``
        the occurrences still held before it. False, with nothing changed, when another
        worker advanced the schedule first."""
        ...

    def take_throttle_turn(self, throttle: ThrottleKey, run_id: str,
                           now: datetime) -> datetime:
        """Take, in one transaction under the key's lock (fleet-wide), the next turn of the
        ``throttle`` key for ``run_id``: the instant it may run its first step, ``now`` when
        fewer than its limit of turns fell within its period;
        turns are handed out first come, first served (:mod:`tarry.pacing`)."""
        ...

    def pending_debounces(self, now: datetime, limit: int) -> list[DebounceRecord]:
        """The debounced bursts whose run starts after ``now``, soonest first."""
        ...

    def subscribe(self, callback: Callable[[], None]) -> bool:
        """Have ``callback`` called (from any thread) whenever the change token moves, if the
        store can push (PostgreSQL's LISTEN); whether it can (SQLite cannot: poll
        :meth:`change_token`)."""
        ...

    def change_hint(self) -> Callable[[], object] | None:
        """For a store that cannot push, a probe cheap enough to call on the event loop many
        times a second, without a query: its value moves whenever the change token may have
        (and sometimes when it has not); None when the store has none."""
        ...


def pages_of_runs(store: Store, statuses: Sequence[RunStatus], flow: str | None, *,
                  page_size: int = 200) -> Iterator[list[RunRecord]]:
    """The runs of each of ``statuses`` in turn (of ``flow`` only, unless None), newest first,
    a page of at most ``page_size`` at a time: a walk over many runs that never holds them all
    (each page is one short read, keyed on the last run of the page before)."""
    for status in statuses:
        after: tuple[datetime, str] | None = None
        while True:
            page = store.list_runs(status=status, flow=flow, after=after, limit=page_size)
            if page:
                yield page
            if len(page) < page_size:
                break
            after = (page[-1].created_at, page[-1].id)

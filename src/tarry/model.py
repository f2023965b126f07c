"""tarry's domain types: runs, their history, events, tasks for people and what a worker
writes for a run.

These are the values every layer passes around (the engine, holds, the store, the CLI and the
server); they live below all of them, so none has to import another to name a run.

All instants are aware UTC datetimes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

__all__ = [
    "CHILD_INBOX_TYPE",
    "CONTINUED",
    "CREATED",
    "HOLD_CLEARED",
    "MIGRATED",
    "RETRIED",
    "TASK_INBOX_TYPE",
    "WAIT_KINDS",
    "BatchAction",
    "BatchFilter",
    "BatchRecord",
    "CheckpointOutcome",
    "DebounceRecord",
    "DebouncedStart",
    "EncodedJSON",
    "EventRecord",
    "EventState",
    "EventWait",
    "HistoryEntry",
    "InboxEvent",
    "JournalEntry",
    "MovePlan",
    "NewEvent",
    "NewRun",
    "RetryPlan",
    "RunRecord",
    "RunStatus",
    "RunUpdate",
    "ScheduleFiring",
    "ScheduleRecord",
    "ScheduledStart",
    "SlotClaim",
    "SlotTurn",
    "SlotView",
    "Successor",
    "TaskCompletion",
    "TaskRecord",
    "TaskRequest",
    "TaskState",
    "ThrottleKey",
    "TriggerStarts",
    "step_node",
]


_LOOP_INDEX = re.compile(r"\[\d+\]")


def step_node(step_path: str) -> str:
    """The place of a step in its flow, the same for every iteration of its loops: a run's
    step path without its loop indices (``quotes[2].request`` → ``quotes.request``)."""
    return _LOOP_INDEX.sub("", step_path)


class RunStatus(StrEnum):
    """The lifecycle of a run."""

    HELD = "held"
    PENDING = "pending"
    RUNNING = "running"
    WAITING = "waiting"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    REFUSED = "refused"

    @property
    def is_terminal(self) -> bool:
        """Whether the run has ended for good."""
        return self in _TERMINAL


_TERMINAL = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED,
                       RunStatus.REFUSED})

CREATED = "created"
"""A run's first history entry: its creation, with its target and what started it. The
stores keep it in the run's own row (``tarry.store.rows.creation_params``)."""

HOLD_CLEARED = "hold.cleared"
"""The history entry of a run whose hold cleared. The update that writes it also stamps the
run's supersede marker, in the same transaction (``tarry.store.holdstore``)."""

CONTINUED = "continued"
"""A run that continued as new: its exit, and the history entry on both runs (the ended
run's names its successor, ``as``; the successor's the run it continues, ``from``)."""

RETRIED = "retried"
"""The history entry of a failed run retried by an operator (``by``, ``reason``,
``attempt``, and the names of the ``inputs`` corrected)."""

MIGRATED = "migrated"
"""The history entry of a run an operator moved to a new definition of its flow (``from``
and ``to``: the two definitions' digests; ``by``)."""

WAIT_KINDS = frozenset({"timer", "event", "hold", "poll", "task", "retry", "child", "slot",
                        "throttle", "window"})
"""What a run can wait for (``waiting_for.kind``). A listing filtered on ``waiting_for`` with
any other value filters on an event type."""


@dataclass(frozen=True)
class HistoryEntry:
    """One transition of a run: when, what kind, at which step, with what details."""

    at: datetime
    kind: str
    step: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NewRun:
    """A run to create. ``due_at`` is when a worker should first pick it up."""

    id: str
    flow: str
    flow_digest: str
    status: RunStatus
    inputs: dict[str, Any]
    target: str | None
    created_at: datetime
    due_at: datetime | None
    state: dict[str, Any] = field(default_factory=dict)
    waiting_for: dict[str, Any] | None = None
    reason: str | None = None
    journal: tuple[JournalEntry, ...] = ()
    """Journal entries the run starts with (a run imported with its progress)."""
    inputs_json: EncodedJSON | None = None
    """``inputs`` as JSON text, when the check of the inputs already encoded them (the store
    writes it as it is)."""
    rerun_of: str | None = None
    """The run this one reruns (an operator's rerun), if any."""
    continued_from: str | None = None
    """The run that continued as this one (``ctx.continue_as_new``), if any."""
    parent_id: str | None = None
    """The run that started this one as its child (a ``call`` step), if any."""
    parent_step: str | None = None
    """The path of the parent's step that waits for this run (the inbox's wait id)."""

    def record(self) -> RunRecord:
        """The run as the store holds it once created (read back without a query)."""
        return RunRecord(id=self.id, flow=self.flow, flow_digest=self.flow_digest,
                         status=self.status, inputs=self.inputs, target=self.target,
                         state=self.state, created_at=self.created_at,
                         updated_at=self.created_at, due_at=self.due_at, reason=self.reason,
                         waiting_for=self.waiting_for, rerun_of=self.rerun_of,
                         continued_from=self.continued_from, parent_id=self.parent_id)


@dataclass(frozen=True)
class RunRecord:
    """A run as stored."""

    id: str
    flow: str
    flow_digest: str
    status: RunStatus
    inputs: dict[str, Any]
    target: str | None
    state: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    due_at: datetime | None = None
    exit: str | None = None
    error: dict[str, Any] | None = None
    reason: str | None = None
    result: Any = None
    waiting_for: dict[str, Any] | None = None
    lease_owner: str | None = None
    cancel_requested: bool = False
    cancelled_by: str | None = None
    recoveries: int = 0
    """How many times in a row the run was taken over from a worker that died running it,
    with no checkpoint since (as a worker counts it when it begins one)."""
    rerun_of: str | None = None
    continued_from: str | None = None
    """The run that continued as this one, if any."""
    parent_id: str | None = None
    """The run that started this one as its child, if any."""


@dataclass(frozen=True)
class EventWait:
    """One event a suspended branch of a run waits for.

    ``wait_id`` is the path of the waiting step (unique within the run); an ``any:`` wait
    registers one EventWait per alternative under the same ``wait_id``. ``match_key`` is the
    canonical text of the correlation values (``tarry.language.manifests.correlation_key``).
    ``first_wins``: the first event delivered settles the wait (nothing, such as ``accept``,
    can turn it down), so another event is not delivered to it but handled as if the wait
    had ended.
    """

    wait_id: str
    type: str
    match_key: str
    until: datetime
    first_wins: bool = False


@dataclass(frozen=True)
class InboxEvent:
    """An event delivered to one waiting branch of a run and not yet consumed by it."""

    inbox_id: str
    wait_id: str
    event_id: str
    type: str
    data: dict[str, Any]
    received_at: datetime


class EventState(StrEnum):
    """What became of an event."""

    DELIVERED = "delivered"
    BUFFERED = "buffered"
    UNMATCHED = "unmatched"
    INVALID = "invalid"
    DUPLICATE = "duplicate"
    DISCARDED = "discarded"


@dataclass(frozen=True)
class NewEvent:
    """An event to record. ``errors`` non-empty means invalid (quarantined, not delivered);
    otherwise ``match_key`` is its correlation key and ``buffer_until`` how long it may wait
    for a run (None or a past instant: it is unmatched at once when no run waits)."""

    id: str
    type: str
    data: Any
    received_at: datetime
    match_key: str | None = None
    errors: tuple[str, ...] = ()
    buffer_until: datetime | None = None
    data_json: EncodedJSON | None = None
    """``data`` as JSON text, when the check of the payload already encoded it (the store
    writes it as it is)."""


@dataclass(frozen=True)
class EventRecord:
    """An event as stored, with the runs it was delivered to and those it started (through
    event triggers)."""

    id: str
    type: str
    state: EventState
    data: Any
    received_at: datetime
    runs: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    buffer_until: datetime | None = None
    started: tuple[str, ...] = ()


CHILD_INBOX_TYPE = "child"
"""The type of the inbox entry that carries a child run's end to the parent's waiting step
(``data``: ``{status, exit, result, error, run}``), written by the transaction that ends
the child."""

TASK_INBOX_TYPE = "task"
"""The type of the inbox entry that carries a task's completion to its run's ``ask`` step
(``data``: ``{outcome, data, by, completed_at}``)."""


class TaskState(StrEnum):
    """What became of a task for a person."""

    OPEN = "open"
    """Waiting for a person; the only state in which it can be completed."""
    COMPLETED = "completed"
    TIMEOUT = "timeout"
    """Its deadline passed first."""
    CANCELLED = "cancelled"
    """Its run stopped waiting for it before the deadline (cancelled, failed, moved on)."""


@dataclass(frozen=True)
class TaskRequest:
    """A task as its run's ``ask`` step registered it.

    ``step`` is the path of the asking step (the wait's id, unique within the run);
    ``assign`` the principals who may complete it (empty: anyone); ``form`` the JSON Schema of
    the data asked for (None: no data); ``reminders`` how many went out so far.
    """

    id: str
    step: str
    title: str
    outcomes: tuple[str, ...]
    created_at: datetime
    until: datetime
    details: str | None = None
    assign: tuple[str, ...] = ()
    form: dict[str, Any] | None = None
    reminders: int = 0


@dataclass(frozen=True)
class TaskCompletion:
    """A person's answer to a task: the chosen ``outcome``, the form ``data``, the principal
    ``by`` and the instant ``at``."""

    task_id: str
    outcome: str
    data: dict[str, Any]
    by: str
    at: datetime


@dataclass(frozen=True)
class TaskRecord:
    """A task as stored, with its run and, once completed, its completion."""

    request: TaskRequest
    run_id: str
    flow: str
    state: TaskState
    target: str | None = None
    completion: TaskCompletion | None = None

    @property
    def id(self) -> str:
        """The task's id."""
        return self.request.id
class EncodedJSON(str):
    """JSON text encoded when a checkpoint was taken: the store writes it as it is (a value
    is serialised once, and never copied first to guard it against later changes)."""

    __slots__ = ()


@dataclass(frozen=True)
class JournalEntry:
    """One completed piece of a run's progress, appended once and never rewritten.

    ``scope`` says where it belongs in the run's state (the path prefix of the frame whose
    binding it is, or ``op`` for a Python flow's finished operation) and ``key`` which piece
    it is there (a step id, an operation's path); ``value`` is its JSON data, or its
    :class:`EncodedJSON` text.
    """

    scope: str
    key: str
    value: Any


@dataclass(frozen=True)
class Successor:
    """The run a run continues as: the new run with its first history entries, and the
    instant until which the events delivered to the ended run and not taken in stay buffered
    for it (at least; an event buffered longer keeps its own deadline)."""

    run: NewRun
    history: tuple[HistoryEntry, ...]
    rebuffer_until: datetime


@dataclass(frozen=True)
class RunUpdate:
    """What a worker writes for a run it holds the lease on: the new state and history.

    ``release`` gives the lease up (the run suspended or ended); otherwise the worker keeps
    it (an intermediate checkpoint) and ``due_at`` is ignored.
    """

    run_id: str
    status: RunStatus
    state: dict[str, Any] | EncodedJSON
    history: list[HistoryEntry]
    release: bool = True
    due_at: datetime | None = None
    exit: str | None = None
    error: dict[str, Any] | None = None
    reason: str | None = None
    result: Any = None
    waiting_for: dict[str, Any] | None = None
    waits: tuple[EventWait, ...] = ()
    """Every event wait the run has after this update (replaces the previous set)."""
    consumed: tuple[str, ...] = ()
    """Inbox entries the run has taken in (deleted with this update)."""
    journal: tuple[JournalEntry, ...] = ()
    """What the run completed since its last checkpoint, appended to its journal."""
    rescan: tuple[str, ...] = ()
    """Waits (by ``wait_id``) that turned a delivered event down in this advance and wait on:
    the store offers each the next buffered event that counts for it."""
    tasks: tuple[TaskRequest, ...] = ()
    """Every task the run waits on after this update (on release; replaces the open set:
    one no longer listed is closed, as timed out once its deadline passed, else cancelled)."""
    had_waits: bool = True
    """False when the run is known to have had no event wait registered before this update
    (its last release registered none): the store need not look them up."""
    had_tasks: bool = True
    """False when the run is known to have had no open task before this update."""
    slot_keys: tuple[str, ...] = ()
    """The slot keys the run holds or waits for (:class:`SlotClaim`), by its state: locked
    first, given back when the update ends the run."""
    slot_queued: tuple[SlotClaim, ...] = ()
    """The slots the run waits for after this update: if one was handed to it meanwhile
    (while it was being advanced), the update leaves it due at once."""
    children: tuple[tuple[NewRun, tuple[HistoryEntry, ...]], ...] = ()
    """Child runs the run started since its last checkpoint (``call`` steps), inserted with
    this update: the step's state that names a child and the child exist together or not
    at all."""
    cancel_children: tuple[str, ...] = ()
    """Child runs the run gave up waiting for (a ``call`` step's timeout), cancelled with
    this update (and their own children with them)."""
    awaits_children: bool = False
    """Whether the run waits for a child after this update (an ended child's outcome may be
    in its inbox already)."""
    related: bool = True
    """False when the run is known to be no child and to have started no child: when it
    ends, the store need not look for a parent to tell or children to cancel."""
    successor: Successor | None = None
    """The run this one continues as (it ends with exit ``continued``): created in the
    transaction that ends this one, which hands it the events delivered to this run and not
    taken in (buffered again until ``Successor.rebuffer_until`` at least)."""

    @property
    def at_step(self) -> str | None:
        """The step the run is at after this update, as a node of its flow's drawing
        (:func:`step_node`): the step it waits at, else the step it failed at."""
        for place in (self.waiting_for, self.error):
            if place and isinstance(place.get("step"), str):
                return step_node(place["step"])
        return None


@dataclass(frozen=True)
class SlotClaim:
    """One slot asked for: of the fleet-wide ``key`` (a flow's concurrency key, or a pool),
    by the run ``run_id`` as a whole (``holder`` empty) or by its step at path ``holder``;
    at most ``limit`` are held at once."""

    key: str
    run_id: str
    limit: int
    holder: str = ""


@dataclass(frozen=True)
class SlotTurn:
    """What asking for a slot came to: ``granted``, or queued with ``ahead`` entries of the
    key's queue before it."""

    granted: bool
    ahead: int = 0


@dataclass(frozen=True)
class SlotView:
    """A key's slots as one run sees them: the runs holding them (the earliest first, at
    most a page), how many wait in its queue, and how many of those are before the run
    (None: the run is not in the queue)."""

    holders: tuple[str, ...]
    queued: int
    ahead: int | None


class CheckpointOutcome(StrEnum):
    """What became of one :class:`RunUpdate`."""

    SAVED = "saved"
    """Written; the worker may go on."""
    CANCEL_REQUESTED = "cancel_requested"
    """Written, but someone asked to cancel: the worker must stop and end the run as
    cancelled (the update kept the lease)."""
    CANCELLED = "cancelled"
    """Written, and the run cancelled in the same transaction: someone asked to cancel while
    it ran, and this update released it (suspended it). Nothing is left to do."""
    LEASE_LOST = "lease_lost"
    """Not written: another worker owns the run now. Drop it."""


@dataclass(frozen=True)
class ScheduleRecord:
    """A schedule trigger as stored: its occurrences up to ``handled_until`` were created (or
    skipped by its catch-up policy); it is due again at ``next_at``."""

    key: str
    flow: str
    handled_until: datetime
    next_at: datetime


@dataclass(frozen=True)
class ScheduledStart:
    """The run of one schedule occurrence: ``occurrence`` is unique across the fleet."""

    run: NewRun
    history: tuple[HistoryEntry, ...]
    occurrence: str
    scheduled_at: datetime


@dataclass(frozen=True)
class ThrottleKey:
    """One key of a flow's throttle, with its pace: at most ``limit`` runs start per
    ``per``."""

    flow: str
    key: str
    limit: int
    per: timedelta


@dataclass(frozen=True)
class DebouncedStart:
    """The run a debounced event trigger asks for (``run``: pending, with the event's inputs
    and target). The store gathers it into the open burst of ``trigger`` (``flow#index``)
    and ``key`` when there is one — that run then takes these inputs and starts ``period``
    after this event, at most ``max_delay`` after the burst's first — or opens a burst."""

    run: NewRun
    history: tuple[HistoryEntry, ...]
    trigger: str
    key: str
    period: timedelta
    max_delay: timedelta | None = None


@dataclass(frozen=True)
class DebounceRecord:
    """A debounced trigger's burst for one key, as stored: its run starts at ``fire_at``
    with the inputs of the last of its ``events``."""

    trigger: str
    key: str
    flow: str
    run_id: str
    first_at: datetime
    last_at: datetime
    fire_at: datetime
    events: int


@dataclass(frozen=True)
class TriggerStarts:
    """The runs an event's triggers start, inserted in the transaction that records the
    event (and not at all when it is a duplicate or invalid). A held one is refused
    ``hold-superseded`` when a sibling of its flow and target is held, or cleared after
    ``supersede_since``. ``debounced`` are the starts of debounced triggers."""

    runs: tuple[tuple[NewRun, tuple[HistoryEntry, ...]], ...]
    supersede_since: datetime
    debounced: tuple[DebouncedStart, ...] = ()


@dataclass(frozen=True)
class ScheduleFiring:
    """What a worker decided for a due schedule: handled up to ``handled_until`` (from the
    value it read in ``schedule``), next due at ``next_at``, with the runs of ``starts``.
    Each start refuses ``hold-superseded`` the schedule's occurrences still held before it;
    a held start is itself refused when a sibling of its flow and target is held, or
    cleared after ``supersede_since``."""

    schedule: ScheduleRecord
    handled_until: datetime
    next_at: datetime
    starts: tuple[ScheduledStart, ...]
    supersede_since: datetime


@dataclass(frozen=True)
class RetryPlan:
    """What retrying one failed run writes: the run, as it was read (``seen``: its
    ``updated_at``, so a run changed since is left alone), made ready to run its failed step
    again (``state``), with its ``inputs`` (corrected or not), the journal entries of the
    failed work to forget (``forget``: ``(scope, key)`` pairs) and its ``retried`` entry."""

    run_id: str
    seen: datetime
    state: dict[str, Any]
    inputs: dict[str, Any]
    entry: HistoryEntry
    forget: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class MovePlan:
    """What moving one held or waiting run to a new definition writes: the run as it was
    read (``status``, ``seen``: its state as stored, and ``from_digest``: its definition), so
    a run that changed since is left alone; its definition's digest ``to_digest`` and its
    ``state`` there; ``wake``: make it due at once (what it waits for changed); its
    ``migrated`` entry."""

    run_id: str
    status: RunStatus
    seen: dict[str, Any]
    from_digest: str
    to_digest: str
    state: dict[str, Any]
    entry: HistoryEntry
    wake: bool = False


class BatchAction(StrEnum):
    """What a batch does to each run its filter selects."""

    CANCEL = "cancel"
    RETRY = "retry"

    @property
    def statuses(self) -> tuple[RunStatus, ...]:
        """The statuses of the runs the action applies to."""
        if self is BatchAction.RETRY:
            return (RunStatus.FAILED,)
        return (RunStatus.HELD, RunStatus.PENDING, RunStatus.RUNNING, RunStatus.WAITING)


@dataclass(frozen=True)
class BatchFilter:
    """The runs a batch selects, as the run list filters them (None: any); ``status``
    narrows the action's own statuses, ``created_before`` keeps the runs created before
    that instant (``--older-than``)."""

    flow: str | None = None
    status: RunStatus | None = None
    waiting_for: str | None = None
    target: str | None = None
    created_before: datetime | None = None

    def statuses(self, action: BatchAction) -> tuple[RunStatus, ...]:
        """The statuses a run must have to be acted on."""
        return tuple(s for s in action.statuses if self.status in (None, s))


@dataclass(frozen=True)
class BatchRecord:
    """A bulk action as stored: how many runs it selected at its creation (``total``), how
    many it acted on and skipped (a run that changed meanwhile), where it stands (``cursor``:
    the keyset position of the last run looked at) and whether it is ``done``."""

    id: str
    action: BatchAction
    filter: BatchFilter
    reason: str | None
    by: str
    total: int
    created_at: datetime
    updated_at: datetime
    cursor: tuple[datetime, str]
    acted: int = 0
    skipped: int = 0
    done: bool = False

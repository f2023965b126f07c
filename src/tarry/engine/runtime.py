"""The engine of one project: store, flows, actions and clock wired together.

The CLI, the HTTP server and the test harness all go through :class:`Engine`; it starts
runs, drives one run in-process (``tarry run``), builds workers, cancels, and renders run
documents.

Its methods block (the CLI calls them directly). Code on an event loop (a server, an action)
awaits the same operations through ``engine.aio`` (:class:`AsyncEngine`), which runs each on
the threads of the async store boundary (``engine.async_store``,
:class:`tarry.store.aio.AsyncStore`); ``drive`` and the workers await that boundary
themselves.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import uuid
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from tarry._suggest import did_you_mean
from tarry.actions import ActionRegistry
from tarry.clock import Clock, SystemClock
from tarry.config import Limits, Retention, Settings
from tarry.engine import migrating, operating, taskdesk
from tarry.engine.batching import Batcher
from tarry.engine.builtins import register_builtins, register_emit
from tarry.engine.catalog import (
    FlowCatalog,
    FlowFinder,
    Program,
    ProgramSource,
    import_program_source,
)
from tarry.engine.documents import run_document
from tarry.engine.operating import checked_reason
from tarry.engine.oplog import Shown
from tarry.engine.replaying import ReplayReport, replay_runs
from tarry.engine.slots import slot_view
from tarry.engine.starting import new_run_id, pending_run
from tarry.engine.taskforms import completion_problems
from tarry.engine.triggers import Triggers
from tarry.engine.worker import LOOK_AHEAD, Worker, worker_name
from tarry.errors import InvalidRequest, InvalidRunRequest, StoreUnavailable, UnknownEventType
from tarry.holds.action import register_check
from tarry.holds.admission import admit, hold_of
from tarry.holds.checks import CheckRunner
from tarry.holds.service import Holds
from tarry.language.manifests import Manifest, load_manifests
from tarry.language.model import Flow
from tarry.model import (
    WAIT_KINDS,
    BatchAction,
    BatchFilter,
    BatchRecord,
    EncodedJSON,
    EventRecord,
    EventState,
    HistoryEntry,
    NewEvent,
    NewRun,
    RunRecord,
    RunStatus,
    TaskRecord,
    TaskState,
    TriggerStarts,
)
from tarry.secrets import Redactor, environment_tokens, secret_values
from tarry.store import open_store
from tarry.store.aio import AsyncStore, offloaded
from tarry.store.base import Store
from tarry.values import ValueLimits, check_key, check_path_segment, check_value

__all__ = ["Engine", "SendRequest", "StartRequest", "find_flow", "new_run_id"]

_INLINE_LEASE = timedelta(seconds=30)
_EVENT_URLS = "the inbox's URLs (/v1/events/{id})"
"""Where an event is named by its id in a URL path (read, redeliver, discard)."""

R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True)
class StartRequest:
    """One run to start: the arguments of :meth:`Engine.start`."""

    flow: str | Flow
    inputs: Mapping[str, Any] | None = None
    target: str | None = None
    hold_after: datetime | None = None
    run_id: str | None = None
    by_name: bool = False
    """Only a flow of the catalog, by name: a path is never looked up (the HTTP API)."""
    rerun_of: str | None = None
    """The run this one reruns (its ``created`` entry and ``rerun_of`` say so)."""


@dataclass(frozen=True)
class SendRequest:
    """One event to send: the arguments of :meth:`Engine.send`."""

    type: str
    data: Any
    id: str | None = None
    problems: tuple[str, ...] | None = None
    """Why ``data`` is not a valid payload of ``type`` (empty: it is), when that was found
    before the send (off the store's threads); None: found with the send."""


def _together_or_alone(write: Callable[[Sequence[T]], Sequence[R]],
                       items: Sequence[T]) -> list[R | Exception]:
    """``write(items)`` (one transaction), or, if that fails, ``write`` of each item alone:
    for each item, in order, its result or the error that kept it out. A failed transaction
    wrote nothing, so nothing is written twice; when the store is unavailable, every item
    is refused with that error (no one is retried)."""
    try:
        return list(write(items))
    except Exception as exc:
        if len(items) < 2 or isinstance(exc, StoreUnavailable):
            return [exc] * len(items)
        return [_together_or_alone(write, [one])[0] for one in items]


def _new_event(manifest: Manifest, event_id: str, data: Any, now: datetime,
               limits: ValueLimits, *, problems: tuple[str, ...] | None = None) -> NewEvent:
    """The event to record, once its id, payload and correlation values are known to be
    portable (``InvalidValue`` otherwise: nothing is stored); ``problems``, when given, are
    the payload's, found before."""
    check_key(event_id, "the event id", limits.key_bytes)
    check_path_segment(event_id, "the event id", _EVENT_URLS)
    encoded = EncodedJSON(check_value(data, "the event's data", limits.event_bytes,
                                      "event_bytes"))
    if problems is None:
        problems = tuple(manifest.problems(data))
    if not problems:
        for key, value in manifest.values_of(data).items():
            check_key(value, f"the correlation value '{key}'", limits.key_bytes)
    return NewEvent(id=event_id, type=manifest.type, data=data, received_at=now,
                    match_key=None if problems else manifest.key_of(data), errors=problems,
                    buffer_until=now + manifest.buffer if manifest.buffer else None,
                    data_json=encoded)


def _schema_of(manifests: Mapping[str, Manifest], event_type: str) -> bool:
    """Whether ``event_type`` is declared with a schema."""
    manifest = manifests.get(event_type)
    return manifest is not None and manifest.schema is not None


def _checked(manifests: Mapping[str, Manifest], requests: Sequence[SendRequest]
             ) -> list[SendRequest]:
    """``requests``, each of a type with a schema carrying its payload's problems."""
    return [replace(request, problems=tuple(manifests[request.type].problems(request.data)))
            if _schema_of(manifests, request.type) else request for request in requests]


def _redactor(settings: Settings | None, environ: Mapping[str, str],
              secret_envs: Iterable[str]) -> Redactor:
    """What masks a deployment's secrets: its API tokens and database password (from
    ``settings``, else from ``environ``) and the values of the ``secret_envs`` variables."""
    tokens: list[str | None] = [*environment_tokens(environ)]
    database = environ.get("TARRY_DATABASE", "")
    if settings is not None:
        database = settings.database
        tokens = [settings.api_token, *settings.api_tokens.values()]
    return Redactor(secret_values(database=database, tokens=tokens, environ=environ,
                                  secret_envs=secret_envs))


class Engine:
    """One project's engine. Create it with :meth:`from_settings` or from parts.

    The engine adds the ``emit`` action, bound to its own :meth:`send`, to ``actions``
    (unless they already have one). ``check_runner`` and ``rng`` replace the holds' check
    runner and the randomness of their jitter (see :class:`~tarry.holds.service.Holds`);
    ``schedules`` names the only flows whose schedule triggers fire (default: every flow's);
    ``retention`` says what expires (default: nothing).
    """

    def __init__(self, store: Store, catalog: FlowCatalog, actions: ActionRegistry,
                 clock: Clock | None = None,
                 manifests: Mapping[str, Manifest] | None = None, *,
                 checks: Mapping[str, Path] | None = None,
                 limits: Limits | None = None, redactor: Redactor | None = None,
                 check_runner: CheckRunner | None = None, rng: random.Random | None = None,
                 schedules: Collection[str] | None = None,
                 retention: Retention | None = None) -> None:
        self.store = store
        self.retention = retention or Retention()
        """How long ended runs and settled events are kept: what the workers delete."""
        self.redactor = redactor or _redactor(
            None, os.environ, [m.secret_env for m in (manifests or {}).values() if m.secret_env])
        """Masks the deployment's secrets in the error texts runs record (by default the
        environment's tokens and database password, and the event types' signing secrets)."""
        self.async_store = AsyncStore(store)
        self.catalog = catalog
        self.actions = actions
        self.clock: Clock = clock or SystemClock()
        self.manifests = dict(manifests or {})
        self.limits = limits or Limits()
        self.holds = Holds(store, self.clock, checks=checks, limits=limits,
                           runner=check_runner, rng=rng, aio=self.async_store)
        self.triggers = Triggers(catalog, self.holds, self.clock, self.limits.values,
                                 scheduled=schedules)
        self.aio = AsyncEngine(self)
        register_emit(actions, self.aio.send)
        register_check(actions, self.holds)

    @classmethod
    def from_settings(cls, settings: Settings, *, clock: Clock | None = None,
                      store: Store | None = None, app: ProgramSource | None = None,
                      must_find: str | None = None) -> Engine:
        """The engine a project's configuration describes; ``app`` (else the one ``[tarry]
        app`` names, if any) provides the Python flows. ``must_find`` (a flow name or path) is
        looked up before the store is opened, so that a command starting a run of a flow that
        does not exist raises ``FlowNotFound`` without creating a store."""
        actions, manifests, programs = _project(settings, app)
        file_bytes = settings.limits.file_bytes
        if must_find is not None:
            FlowFinder(settings.flows_dir, actions.declared_arguments(), manifests,
                       programs=programs, file_bytes=file_bytes,
                       pools=settings.limits.pools,
                       calendars=settings.calendars).find(must_find)
        store = store or open_store(settings.database)
        catalog = FlowCatalog(settings.flows_dir, store, actions.declared_arguments(), manifests,
                              programs=programs, file_bytes=file_bytes,
                              pools=settings.limits.pools, calendars=settings.calendars)
        return cls(store, catalog, actions, clock, manifests, checks=settings.checks,
                   limits=settings.limits, retention=settings.retention,
                   redactor=_redactor(settings, os.environ, [
                       m.secret_env for m in manifests.values() if m.secret_env]))

    def close(self) -> None:
        """Release the store (once the calls in progress on its threads finish)."""
        self.async_store.close()
        self.store.close()

    def start(self, flow: str | Flow, inputs: Mapping[str, Any] | None = None, *,
              target: str | None = None, hold_after: datetime | None = None,
              run_id: str | None = None, by_name: bool = False) -> RunRecord:
        """Create a run of ``flow`` (a name, a path or a loaded flow); a worker executes it.

        A flow with ``hold:`` (or a start with ``hold_after``, an aware instant) creates a
        held run — or a refused one, when its hold is refused at start.
        One store transaction (the first start of a flow also saves its source). ``run_id``
        is the new run's id (default: a fresh one; an idempotent start reserves it first).
        With ``by_name``, ``flow`` is only looked up by name among the catalog's flows
        (:meth:`FlowFinder.find_named`), never as a path.
        """
        started = self.start_each([StartRequest(flow, inputs, target, hold_after, run_id,
                                                by_name)])[0]
        if isinstance(started, Exception):
            raise started
        return started

    def start_each(self, requests: Sequence[StartRequest]) -> list[RunRecord | Exception]:
        """Start every request on its own terms, in one transaction where it can: for each,
        in order, its run or why it was refused (what :meth:`start` would raise). The runs
        of held flows are admitted one by one; the others are inserted
        together, or, if that fails, each alone, so one bad request never fails another.
        ``engine.aio.start`` sends concurrent starts here together (group commit)."""
        now, limits = self.clock.now(), self.limits.values
        results: list[RunRecord | Exception] = []
        plain: dict[int, tuple[NewRun, HistoryEntry]] = {}
        for request in requests:
            try:
                loaded = self._loaded(request.flow, by_name=request.by_name)
                run, created = pending_run(loaded, request.inputs, request.target, now,
                                           run_id=request.run_id or new_run_id(),
                                           limits=limits, rerun_of=request.rerun_of)
                hold = hold_of(loaded, request.hold_after)
                if hold is None:
                    plain[len(results)] = (run, created)
                results.append(run.record() if hold is None
                               else admit(self.holds, run, hold, created).record())
            except Exception as exc:  # this request's own refusal
                results.append(exc)
        for index, error in zip(plain, self._insert_each(list(plain.values())), strict=True):
            if error is not None:
                results[index] = error
        return results

    def _insert_each(self, runs: Sequence[tuple[NewRun, HistoryEntry]]
                     ) -> list[Exception | None]:
        """Insert ``runs`` in one transaction, or each alone if that fails; for each, in
        order, the error that kept it out (None: inserted)."""
        def insert(batch: Sequence[tuple[NewRun, HistoryEntry]]) -> list[None]:
            self.store.create_runs([(run, [created]) for run, created in batch])
            return [None] * len(batch)

        return _together_or_alone(insert, runs)

    def start_many(self, flow: str | Flow, inputs: Iterable[Mapping[str, Any] | None], *,
                   targets: Iterable[str | None] | None = None) -> list[RunRecord]:
        """Create one run of ``flow`` per item of ``inputs`` (with the matching item of
        ``targets``, if given), for bulk creation: every input is checked first, then all
        the runs are inserted in one transaction — all of them or, on any error, none.

        The runs of a flow with ``hold:`` are admitted one after another instead (each start
        is decided against the runs held before it).
        """
        loaded = self._loaded(flow)
        given = list(inputs)
        labels = list(targets) if targets is not None else [None] * len(given)
        if len(labels) != len(given):
            raise InvalidRunRequest(f"start_many got {len(given)} inputs but {len(labels)} targets")
        now, limits = self.clock.now(), self.limits.values  # the batch is created at one instant
        new = [pending_run(loaded, each, target, now, run_id=new_run_id(), limits=limits)
               for each, target in zip(given, labels, strict=True)]
        hold = hold_of(loaded, None)
        if hold is not None:
            return [admit(self.holds, run, hold, created).record() for run, created in new]
        self.store.create_runs([(run, [created]) for run, created in new])
        return [run.record() for run, _ in new]

    def _loaded(self, flow: str | Flow, *, by_name: bool = False) -> Flow:
        if not isinstance(flow, str):
            return self.catalog.remember(flow)
        return self.catalog.remember(self.catalog.find_named(flow) if by_name
                                     else self.catalog.find(flow))

    async def drive(self, run_id: str, *, follow: bool = False,
                    on_progress: Callable[[RunRecord], None] | None = None) -> RunRecord:
        """Execute ``run_id`` in this process until it suspends (or, with ``follow``, ends).

        The child runs it starts (and theirs) are executed alongside: a run waiting for its
        child has not suspended while the child can go on."""
        worker = self.worker(concurrency=1)
        store = self.async_store
        while True:
            now = self.clock.now()
            ran: set[str] = set()
            claimed = await store.claim_run(run_id, now, worker.name, now + _INLINE_LEASE)
            if claimed is not None:
                inbox = await store.inbox([run_id])
                await worker.execute(claimed, inbox.get(run_id, []))
                ran.add(run_id)
            record = await store.get_run(run_id)
            for member in await self._descendants(record):
                claimed = await store.claim_run(member.id, now, worker.name,
                                                now + _INLINE_LEASE)
                if claimed is not None:
                    inbox = await store.inbox([member.id])
                    await worker.execute(claimed, inbox.get(member.id, []))
                    ran.add(member.id)
            if on_progress is not None and run_id in ran:
                on_progress(record)
            if record.status.is_terminal or (not follow and not ran - {run_id}):
                return record  # without follow: once its children went as far as they go
            if ran:
                continue  # a child that ended may have woken its parent: look again
            due = [member.due_at for member in [record, *await self._descendants(record)]
                   if member.due_at is not None]
            await self._sleep_until(min(due, default=None))

    async def _descendants(self, record: RunRecord) -> list[RunRecord]:
        """The descendants of ``record`` that have not ended, parents first; none read for
        a run that never started a child (its state has no ``children`` note)."""
        store = self.async_store
        family, found = [record], []
        for member in family:
            if member.status.is_terminal or not member.state.get("children"):
                continue
            for child in await store.children(member.id):
                child_record = await store.get_run(child)
                if not child_record.status.is_terminal:
                    family.append(child_record)
                    found.append(child_record)
        return found

    def worker(self, *, concurrency: int = 16, name: str | None = None,
               lease: timedelta = timedelta(seconds=30), store: AsyncStore | None = None,
               on_wake: Callable[[RunRecord, datetime], None] | None = None) -> Worker:
        """A worker over this engine's store (or ``store``, a wrapper of it), flows, actions,
        holds, schedules, limits and secrets; on the real clock it claims
        :data:`~tarry.engine.worker.LOOK_AHEAD` ahead. ``on_wake`` is called as each claimed run
        begins to execute. With retention on, it deletes what expired in the background."""
        look_ahead = LOOK_AHEAD if isinstance(self.clock, SystemClock) else timedelta(0)
        return Worker(store or self.async_store, self.catalog, self.actions, self.clock,
                      concurrency=concurrency, name=name or worker_name(), holds=self.holds,
                      lease=lease, redactor=self.redactor, limits=self.limits.values,
                      recovery_max=self.limits.recovery_max, triggers=self.triggers,
                      pools=self.limits.pools,
                      look_ahead=look_ahead, on_wake=on_wake, retention=self.retention,
                      action_timeout=self.limits.action_timeout)

    def get(self, run_id: str) -> RunRecord:
        """One run; raises ``RunNotFound``."""
        return self.store.get_run(run_id)

    def runs(self, *, status: RunStatus | None = None, flow: str | None = None,
             target: str | None = None, waiting_for: str | None = None,
             at_step: str | None = None, after: tuple[datetime, str] | None = None,
             limit: int = 100) -> list[RunRecord]:
        """Runs, newest first, filtered and paged as ``Store.list_runs`` (a ``waiting_for``
        that names nothing is refused, see :meth:`check_wait_filter`)."""
        self.check_wait_filter(waiting_for)
        return self.store.list_runs(status=status, flow=flow, target=target,
                                    waiting_for=waiting_for, at_step=at_step, after=after,
                                    limit=limit)

    def check_wait_filter(self, waiting_for: str | None) -> None:
        """Refuse (``InvalidRequest``, with a suggestion) a ``waiting_for`` filter that is
        neither a kind of wait nor an event type a manifest declares: it could only ever
        select nothing, and is most likely a misspelling."""
        if waiting_for is None or waiting_for in WAIT_KINDS or waiting_for in self.manifests:
            return
        raise InvalidRequest(f"waiting_for '{waiting_for}' is neither a kind of wait "
                             f"({', '.join(sorted(WAIT_KINDS))}) nor a declared event type"
                             f"{did_you_mean(waiting_for, [*WAIT_KINDS, *self.manifests])}")

    def held(self, *, limit: int = 100) -> list[RunRecord]:
        """Held runs, newest first."""
        return self.store.list_runs(status=RunStatus.HELD, limit=limit)

    def cancel(self, run_id: str, *, by: str, reason: str | None = None) -> RunRecord:
        """Cancel a run (at once unless it is running; then at its next checkpoint), recording
        ``by`` and ``reason``."""
        return self.store.cancel(run_id, by, self.clock.now(), reason=checked_reason(reason))

    def retry(self, run_id: str, *, by: str, reason: str | None = None,
              inputs: Mapping[str, Any] | None = None) -> RunRecord:
        """Retry a failed run from the step that failed, on the definition it started with,
        with ``inputs`` replacing those of the same names (see
        :mod:`tarry.engine.operating`). Raises ``RunStateError`` unless the run failed."""
        return operating.retry(self.store, self.clock.now(), run_id, by=by, reason=reason,
                               inputs=inputs, flow_of=self.catalog.by_digest,
                               limits=self.limits.values)

    def rerun(self, run_id: str, *, inputs: Mapping[str, Any] | None = None) -> RunRecord:
        """Start a new run of the flow of ``run_id`` (its current definition, as a start
        would) with the same inputs and target, ``inputs`` replacing those of the same names;
        the two are linked (``rerun_of``, ``reruns``)."""
        record = self.store.get_run(run_id)
        started = self.start_each([StartRequest(record.flow, {**record.inputs, **(inputs or {})},
                                                record.target, by_name=True,
                                                rerun_of=record.id)])[0]
        if isinstance(started, Exception):
            raise started
        return started

    def migrate_runs(self, flow: str, *, to: str | Flow = "latest", by: str,
                     dry_run: bool, by_name: bool = False) -> migrating.MoveReport:
        """Move the held and waiting runs of the YAML flow ``flow`` (a name) to ``to``: its
        current definition (``latest``), a flow file's path or a loaded flow of the same
        name; with ``dry_run``, only say which would move (see
        :mod:`tarry.engine.migrating`). With ``by_name``, ``flow`` is only looked up by name
        (:meth:`FlowFinder.find_named`). Raises ``InvalidRunRequest`` for a Python flow, or
        a target of another flow."""
        current = (self.catalog.find_named(flow) if by_name else self.catalog.find(flow))
        migrating.refuse_programs(current)
        target = current if to == "latest" else (
            self.catalog.find(to) if isinstance(to, str) else to)
        if target.name != current.name:
            raise InvalidRunRequest(f"--to holds flow '{target.name}', not '{current.name}': "
                                    "runs move only between definitions of their own flow")
        return migrating.migrate_runs(self.store, self.catalog, target, by=by,
                                      clock=self.clock.now, dry_run=dry_run)

    def batch(self, action: BatchAction, selected: BatchFilter, *, by: str,
              reason: str | None = None) -> BatchRecord:
        """Record a batch of ``action`` over the runs ``selected`` (with its count); work it
        with :meth:`work_batch`."""
        return operating.start_batch(self.store, self.clock.now(), action, selected, by=by,
                                     reason=reason)

    def count_batch(self, action: BatchAction, selected: BatchFilter) -> int:
        """How many runs a batch of ``action`` over ``selected`` would act on now."""
        return operating.count_batch(self.store, self.clock.now(), action, selected)

    def work_batch(self, batch_id: str) -> BatchRecord:
        """Act on the next page of a batch's runs (one transaction); the batch as written."""
        return operating.work_batch(self.store, self.clock.now(), batch_id)

    async def replay(self, run_ids: Sequence[str] = (), *, flow: str | None = None,
                     statuses: Sequence[RunStatus] | None = None) -> ReplayReport:
        """Replay the recorded journals of the selected runs of Python flows against the
        flows registered now, with no effects, and report each that would hit
        nondeterminism or fail (see :mod:`tarry.engine.replaying`): ``run_ids``, else every
        run in ``statuses`` (default: every run that has not ended), of ``flow`` if given."""
        return await replay_runs(self.store, self.catalog, now=self.clock.now(),
                                 run_ids=run_ids, flow=flow, statuses=statuses,
                                 limits=self.limits.values, redactor=self.redactor)

    def document(self, run_id: str, *, history: bool = True) -> dict[str, Any]:
        """The run document of ``run_id`` (with its reruns, the run it continued as and,
        unless ``history`` is false, its history)."""
        record = self.store.get_run(run_id)
        return run_document(record, self.store.history(run_id) if history else None,
                            self.store.journals([run_id]).get(run_id, []),
                            reruns=self.store.reruns(run_id),
                            children=self.store.children(run_id),
                            continued_as=self.store.continued_as(run_id),
                            shown=Shown(self.limits.shown_bytes, self.redactor),
                            slots=slot_view(self.store, record))

    def send(self, type: str, data: Any, *, id: str | None = None) -> EventRecord:
        """Validate and deliver an event; an invalid one is quarantined, not raised.
        The runs its event triggers start are created in the same transaction."""
        sent = self.send_each([SendRequest(type, data, id)])[0]
        if isinstance(sent, Exception):
            raise sent
        return sent

    def send_each(self, requests: Sequence[SendRequest]) -> list[EventRecord | Exception]:
        """Send every request on its own terms, in one transaction where it can: for each,
        in order, its event's record (delivered, buffered, unmatched, quarantined or
        duplicate, as :meth:`send` decides, an id sent twice here being a duplicate the
        second time) or why it was refused (what :meth:`send` would raise). The events are
        recorded together, with the runs their triggers start, or, if that transaction
        fails, each alone, so one bad request never fails another; none is acknowledged
        before its transaction commits. ``engine.aio.send`` sends concurrent sends here
        together (group commit)."""
        now = self.clock.now()
        prepared: list[tuple[NewEvent, TriggerStarts | None] | Exception] = []
        for request in requests:
            try:
                prepared.append(self._event(request.type, request.data, request.id, now,
                                            request.problems))
            except Exception as exc:  # this request's own refusal
                prepared.append(exc)
        recorded = iter(_together_or_alone(
            lambda batch: self.store.record_events(batch, now),
            [each for each in prepared if not isinstance(each, Exception)]))
        return [each if isinstance(each, Exception) else next(recorded) for each in prepared]

    def send_many(self, type: str, datas: Iterable[Any], *,
                  ids: Iterable[str | None] | None = None) -> list[EventRecord]:
        """Send one event of ``type`` per item of ``datas`` (with the matching item of
        ``ids``, if given), for bulk delivery: every event is checked first, then all are
        recorded in one transaction — all of them or, on any error, none. Each event's
        record is what :meth:`send` would return (an invalid one is quarantined)."""
        given = list(datas)
        labels = list(ids) if ids is not None else [None] * len(given)
        if len(labels) != len(given):
            raise InvalidRequest(f"send_many got {len(given)} events but {len(labels)} ids")
        now = self.clock.now()  # the batch is received at one instant
        return self.store.record_events(
            [self._event(type, data, label, now)
             for data, label in zip(given, labels, strict=True)], now)

    def _event(self, type: str, data: Any, id: str | None, now: datetime,
               problems: tuple[str, ...] | None = None
               ) -> tuple[NewEvent, TriggerStarts | None]:
        """The event to record for a send received at ``now``, and the runs it starts."""
        event = _new_event(self.manifest(type), uuid.uuid4().hex if id is None else id, data,
                           now, self.limits.values, problems=problems)
        return event, self.triggers.for_event(event)

    def redeliver(self, event_id: str, data: Any = None, *,
                  problems: tuple[str, ...] | None = None) -> EventRecord:
        """Deliver a quarantined, unmatched or buffered event again, optionally corrected
        (``problems``, when given: the payload's, found before)."""
        stored = self.store.get_event(event_id)
        now = self.clock.now()
        payload = stored.data if data is None else data
        event = _new_event(self.manifest(stored.type), event_id, payload, now,
                           self.limits.values, problems=problems)
        return self.store.redeliver(event, now, self.triggers.for_event(event))

    def discard(self, event_id: str) -> EventRecord:
        """Discard a quarantined, unmatched or buffered event."""
        return self.store.discard(event_id, self.clock.now())

    def events(self, *, state: EventState | None = None, limit: int = 100) -> list[EventRecord]:
        """Events, newest first."""
        return self.store.list_events(state=state, now=self.clock.now(), limit=limit)

    def tasks(self, *, state: TaskState | None = TaskState.OPEN, principal: str | None = None,
              limit: int = 100) -> list[TaskRecord]:
        """Tasks for people, newest first (see :func:`tarry.engine.taskdesk.list_tasks`)."""
        return taskdesk.list_tasks(self.store, state=state, principal=principal, limit=limit)

    def complete_task(self, task_id: str, *, outcome: Any, data: Any = None,
                      by: str, checked: list[str] | None = None) -> TaskRecord:
        """Complete a task as principal ``by`` and wake its run (see
        :func:`tarry.engine.taskdesk.complete_task`)."""
        return taskdesk.complete_task(self.store, self.clock.now(), task_id, outcome=outcome,
                                      data=data, by=by, value_bytes=self.limits.value_bytes,
                                      checked=checked)

    def manifest(self, event_type: str) -> Manifest:
        """The manifest of ``event_type``; raises ``UnknownEventType`` (with a suggestion)."""
        try:
            return self.manifests[event_type]
        except KeyError:
            raise UnknownEventType(event_type, f"unknown event type '{event_type}'"
                                   f"{did_you_mean(event_type, self.manifests)}; declare it "
                                   "in events.yaml") from None


    async def _sleep_until(self, instant: datetime | None) -> None:
        if instant is None:
            await self.clock.sleep(0.05)
            return
        await self.clock.sleep(max((instant - self.clock.now()).total_seconds(), 0.0) + 0.001)


class AsyncEngine:
    """The operations of an :class:`Engine` as coroutines (``engine.aio``), for code on an
    event loop: each runs the engine's own method on the async store boundary's threads, so
    a slow store never stalls the loop. Raises what the method raises (``NotFound``,
    ``Conflict``, ``InvalidRequest``, ``StoreUnavailable``, …)."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._starts: Batcher[StartRequest, RunRecord] = Batcher(self._start_batch)
        self._sends: Batcher[SendRequest, EventRecord] = Batcher(self._send_batch)

    @property
    def sync(self) -> Engine:
        """The engine whose methods these are."""
        return self._engine

    def offload(self, call: Callable[[], R]) -> Awaitable[R]:
        """Run ``call`` on the engine's store threads; await its result."""
        return self._engine.async_store.offload(call)

    async def start(self, flow: str | Flow, inputs: Mapping[str, Any] | None = None, *,
                    target: str | None = None, hold_after: datetime | None = None,
                    run_id: str | None = None, by_name: bool = False) -> RunRecord:
        """:meth:`Engine.start`, awaited. Starts made in the same moment share one store
        transaction (:meth:`Engine.start_each`), so concurrent callers (a server's requests)
        are not bounded by one durable commit each."""
        return await self._starts.submit(StartRequest(flow, inputs, target, hold_after, run_id,
                                                      by_name))

    def _start_batch(self, batch: list[StartRequest]
                     ) -> Awaitable[list[RunRecord | Exception]]:
        return self.offload(functools.partial(self._engine.start_each, batch))

    async def send(self, type: str, data: Any, *, id: str | None = None) -> EventRecord:
        """:meth:`Engine.send`, awaited. Sends made in the same moment share one store
        transaction (:meth:`Engine.send_each`), so concurrent senders (a server's requests,
        the ``emit`` actions of a worker's runs) are not bounded by one durable commit
        each."""
        return await self._sends.submit(SendRequest(type, data, id))

    async def complete_task(self, task_id: str, *, outcome: Any, data: Any = None,
                            by: str) -> TaskRecord:
        """:meth:`Engine.complete_task`, awaited, the answer checked against the task's form
        on a thread of its own first, as a send's payload."""
        engine = self._engine
        task = await self.offload(functools.partial(engine.store.get_task, task_id))
        checked = None if task.request.form is None else await asyncio.to_thread(
            completion_problems, task.request, outcome, {} if data is None else data)
        return await self.offload(functools.partial(
            engine.complete_task, task_id, outcome=outcome, data=data, by=by, checked=checked))

    async def redeliver(self, event_id: str, data: Any = None) -> EventRecord:
        """:meth:`Engine.redeliver`, awaited, its payload checked against its type's schema
        on a thread of its own first, as a send's."""
        engine = self._engine
        stored = await self.offload(functools.partial(engine.store.get_event, event_id))
        if not _schema_of(engine.manifests, stored.type):
            return await self.offload(functools.partial(engine.redeliver, event_id, data))
        payload = stored.data if data is None else data
        problems = await asyncio.to_thread(engine.manifests[stored.type].problems, payload)
        return await self.offload(functools.partial(engine.redeliver, event_id, data,
                                                    problems=tuple(problems)))

    async def _send_batch(self, batch: list[SendRequest]) -> list[EventRecord | Exception]:
        """Record ``batch``, its payloads checked against their types' schemas first on a
        thread of their own: a large payload can take a second to check, which the store's
        threads (every request's, and the worker's) must not wait for."""
        manifests = self._engine.manifests
        if any(_schema_of(manifests, request.type) for request in batch):
            batch = await asyncio.to_thread(_checked, manifests, batch)
        return await self.offload(functools.partial(self._engine.send_each, batch))

    start_many = offloaded(Engine.start_many)
    get = offloaded(Engine.get)
    runs = offloaded(Engine.runs)
    held = offloaded(Engine.held)
    document = offloaded(Engine.document)
    cancel = offloaded(Engine.cancel)
    send_many = offloaded(Engine.send_many)
    events = offloaded(Engine.events)
    discard = offloaded(Engine.discard)
    tasks = offloaded(Engine.tasks)


def find_flow(settings: Settings, name_or_path: str) -> Flow:
    """The flow a project's command names (as ``tarry run`` finds it), without a store."""
    actions, manifests, programs = _project(settings, None)
    return FlowFinder(settings.flows_dir, actions.declared_arguments(), manifests,
                      programs=programs, file_bytes=settings.limits.file_bytes,
                      pools=settings.limits.pools,
                      calendars=settings.calendars).find(name_or_path)


def _project(settings: Settings, app: ProgramSource | None
             ) -> tuple[ActionRegistry, dict[str, Manifest], Mapping[str, Program] | None]:
    """A project's actions, event manifests and Python flows (those of ``app``, else of the
    app that ``[tarry] app`` names, if any)."""
    actions = ActionRegistry()
    register_builtins(actions)
    actions.load_user_actions(settings.actions, root=settings.root,
                              provided=settings.provided_actions)
    manifests = load_manifests(settings.event_files, settings.limits.file_bytes)
    if app is None and settings.app is not None:
        app = import_program_source(settings.app, root=settings.root)
    return actions, manifests, app.programs(manifests) if app is not None else None

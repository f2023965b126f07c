"""Executing one claimed run: advance it and turn the outcome into a store update.

The executor is the seam between the pure interpreter and the store. It never raises for a
run's own problems (a bad expression, a broken flow, an action's bug): those end the run with a
recorded error, so a worker survives any data.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from tarry.actions import ActionRegistry
from tarry.clock import Clock, iso
from tarry.engine import slots
from tarry.engine.catalog import FlowCatalog
from tarry.engine.commands import (
    DEFAULT_ACTION_TIMEOUT,
    ActionFailed,
    Command,
    ReadJournal,
    RunAction,
    StartChild,
    TakeSlot,
)
from tarry.engine.interpreter import Env, Interpreter
from tarry.engine.journal import JournalQuery, RunJournal, journal_for
from tarry.engine.outcome import Blocked, Continued, Done, Exited, Failed, Outcome, Pending
from tarry.engine.starting import new_run_id, pending_run
from tarry.engine.throttling import TurnTaker, admit
from tarry.engine.timeouts import timed_call
from tarry.engine.versions import upgrade
from tarry.errors import ExpressionError, StoreError, TarryError
from tarry.holds.admission import hold_of, prepared
from tarry.holds.gate import HoldGate
from tarry.holds.state import is_held
from tarry.language.expressions import EvalContext
from tarry.language.manifests import correlation_key
from tarry.language.model import Flow, pools_named
from tarry.model import (
    CONTINUED,
    CheckpointOutcome,
    EventWait,
    HistoryEntry,
    InboxEvent,
    JournalEntry,
    RunRecord,
    RunStatus,
    RunUpdate,
    SlotClaim,
    Successor,
)
from tarry.secrets import Redactor
from tarry.values import ValueLimits, stored_text

__all__ = ["HANDOVER", "Executor", "LeaseLost", "update_for"]

logger = logging.getLogger("tarry.worker")

Checkpointer = Callable[[RunUpdate], Awaitable[CheckpointOutcome]]


class JournalReader(Protocol):
    """Reads a run's journal entries (``Store.read_journal``, awaited)."""

    def __call__(self, run_id: str, *, scopes: Sequence[str], selective: str | None = None,
                 keys: Sequence[str] = ()) -> Awaitable[list[JournalEntry]]:
        """The entries of ``run_id`` the query names."""
        ...


HANDOVER = timedelta(hours=1)
"""How long, at least, the events delivered to a run that continued as new and not taken in
by it stay buffered for its successor (an event buffered longer keeps its own deadline)."""


class LeaseLost(Exception):
    """Another worker owns the run now; this one must drop it."""


class _CancelRequested(Exception):
    pass


_ENTRY_KIND = {RunStatus.PENDING: "started", RunStatus.HELD: "started",
               RunStatus.WAITING: "resumed", RunStatus.RUNNING: "recovered"}


def _entry_kinds(status: RunStatus, state: Mapping[str, Any]) -> tuple[str, ...]:
    """The history entries an advance of a run claimed in ``status`` begins with: a run
    recovered before it ever saved its state (claimed, then its worker died before the first
    checkpoint) has not recorded its start yet, so it records both; a run that waited for
    its throttle's turn starts now."""
    if status is RunStatus.WAITING and "started_at" not in state:
        return ("started",)
    kind = _ENTRY_KIND.get(status, "resumed")
    return ("started", kind) if kind == "recovered" and "started_at" not in state else (kind,)


class Executor:
    """Advances claimed runs. One per worker; stateless between runs but for caches."""

    def __init__(self, catalog: FlowCatalog, actions: ActionRegistry,
                 checkpoint: Checkpointer, *, gate: HoldGate, redactor: Redactor,
                 read_journal: JournalReader, timer: Clock,
                 limits: ValueLimits | None = None, recovery_max: int = 3,
                 clock: Callable[[], datetime] | None = None,
                 action_timeout: timedelta = DEFAULT_ACTION_TIMEOUT,
                 lease: timedelta = timedelta(seconds=30),
                 take_turn: TurnTaker | None = None,
                 take_slot: slots.SlotTaker | None = None,
                 give_slot_back: slots.SlotTaker | None = None,
                 pools: Mapping[str, int] | None = None) -> None:
        self.catalog = catalog
        self.take_turn = take_turn
        """Takes a throttled flow's turns (None: throttles are not applied)."""
        self._turns = asyncio.Lock()
        """Held while a run takes its turn: runs claimed together take theirs in the order
        they were claimed (the lock is fair), so a key's queue is first come, first served."""
        self.clock = clock
        """Stamps the history entries recorded after an action's call (None: every entry of
        an advance at its start)."""
        self.timer = timer
        """The clock an action's timeout is measured on."""
        self.action_timeout = action_timeout
        """How long a call may run when its step sets no ``timeout``."""
        self.lease = lease
        """The worker's lease: the longest silence allowed after an action's heartbeat."""
        self.redactor = redactor
        self.actions = actions
        self._checkpoint = checkpoint
        self._read_journal = read_journal
        self.gate = gate
        self.limits = limits or ValueLimits()
        self.recovery_max = recovery_max
        """How many takeovers in a row a run gets before it is failed as crashed."""
        self.take_slot = take_slot
        """Asks the store for a slot of a flow's concurrency key (None: no store to ask;
        a flow's concurrency is then not enforced)."""
        self.give_slot_back = give_slot_back
        """Gives a pool's slot back once a ``limit:`` step's action has run."""
        self.pools: Mapping[str, int] = pools or {}
        """The project's slot pools (``[limits.pools]``): name → number of slots."""
        self._pool_keys: dict[str, tuple[str, ...]] = {}

    async def execute(self, record: RunRecord, now: datetime,
                      inbox: list[InboxEvent] | None = None) -> RunUpdate | None:
        """Advance ``record`` as far as it goes; the update to commit, or None if lost.

        ``inbox`` holds the events delivered to the run's waiting branches. Raises
        ``StateVersionError`` (and changes nothing) for a state newer than this code.
        """
        state = upgrade(record.state)  # freshly decoded for this claim: ours to mutate
        update = await self._execute(record, state, now, inbox)
        if update is None or update.slot_keys:
            return update
        keys = slots.slot_keys(state) + self._pools_of(record.flow_digest)
        if update.status.is_terminal and not slots.slot_keys(state):
            keys += self._unnoted_flow_key(record, now)
        return replace(update, slot_keys=keys) if keys else update  # ends give slots back

    def _unnoted_flow_key(self, record: RunRecord, now: datetime) -> tuple[str, ...]:
        """The flow key of a run that ends without its state naming one: it may hold the
        slot all the same, taken by a worker that died before it checkpointed (then failed
        as crashed by the next)."""
        try:
            flow = self.catalog.by_digest(record.flow_digest)
            if flow.concurrency is None:
                return ()
            shown = slots.render_key(flow.concurrency, record,
                                     EvalContext(now=now, timezone=flow.timezone))
        except TarryError:  # no key can be rendered: none was ever taken
            return ()
        return (slots.flow_slot_key(flow.name, shown),)

    def _pools_of(self, digest: str) -> tuple[str, ...]:
        """The store's keys of the pools the flow's ``limit:`` steps name."""
        keys = self._pool_keys.get(digest)
        if keys is None:
            try:
                flow = self.catalog.by_digest(digest)
            except TarryError:
                return ()
            keys = tuple(slots.pool_slot_key(pool) for pool in sorted(set(pools_named(flow))))
            self._pool_keys[digest] = keys
        return keys

    async def _execute(self, record: RunRecord, state: dict[str, Any], now: datetime,
                       inbox: list[InboxEvent] | None) -> RunUpdate | None:
        registered = _registered(record, state)
        history: list[HistoryEntry] = []
        if record.recoveries > self.recovery_max:  # it kills whoever runs it: run it no more
            crashed = update_for(record.id, state, self._crashed(record), history, now)
            return replace(crashed, had_waits=registered["waits"],
                           had_tasks=registered["tasks"])
        if is_held(state):  # the hold gate decides first; once clear, the first step runs now
            held = await self.gate.evaluate(record, state, now, history)
            if held is not None:
                return held
        now = max([now, *(entry.at for entry in history)])  # a cleared hold's checks took time
        try:
            flow = self.catalog.by_digest(record.flow_digest)
            program = self.catalog.program(flow)  # a Python flow runs on its own runner
        except TarryError as exc:  # the stored flow no longer loads (e.g. an action is gone)
            self._started(record, state, now, history)
            failure = Failed({"type": "flow-error", "message": stored_text(str(exc)),
                              "step": None})
            return update_for(record.id, state, failure, history, now)
        if self.take_turn is not None and flow.throttle is not None \
                and "started_at" not in state and slots.SLOT not in state:
            # a throttled run waits for its turn first, before it asks for a slot (a run
            # queued for a slot has had its turn: it never takes a second one)
            async with self._turns:
                throttled = await admit(self.take_turn, record, flow, state=state, now=now,
                                        history=history, limits=self.limits)
            if isinstance(throttled, RunUpdate):  # nothing registered: it has not started
                state["registered"] = {"waits": False, "tasks": False}
                return replace(throttled, had_waits=registered["waits"],
                               had_tasks=registered["tasks"])
            if throttled is not None:
                return update_for(record.id, state, throttled, history, now)
        if self.take_slot is not None and slots.needs_slot(flow, record.status, state) \
                and not self._window_closed(flow, state, now):
            try:
                queued = await slots.take_run_slot(
                    self.take_slot, record, flow, state=state, now=now,
                    at=EvalContext(now=now, timezone=flow.timezone), history=history)
            except ExpressionError as exc:  # the key does not render: the run cannot start
                self._started(record, state, now, history)
                return update_for(record.id, state, Failed(slots.key_error(exc)), history,
                                  now)
            if queued is not None:
                return queued
        self._started(record, state, now, history)
        journal = journal_for(flow, program=program is not None)
        await self._restore(record.id, state, journal)
        env = self._env(record, flow, state, journal=journal, now=now, history=history)
        env.inbox = _by_wait(inbox or [])
        try:
            outcome = await (self._walk(env, state) if program is None
                             else program.advance(env, state))
        except LeaseLost:
            return None
        except StoreError:  # the store's trouble, not the run's: it resumes after its lease
            raise
        except _CancelRequested:
            history.append(HistoryEntry(env.at, "cancelled", None, {"by": "request"}))
            return _written(RunUpdate(record.id, RunStatus.CANCELLED, state, history,
                                      consumed=tuple(env.consumed),
                                      children=tuple(env.children)), state, journal,
                            registered, child=record.parent_id is not None)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # of any kind: a worker survives any run
            logger.exception("run %s: internal error", record.id, extra={"run_id": record.id})
            outcome = Failed({"type": "internal-error",
                              "message": stored_text(f"{type(exc).__name__}: {exc}",
                                                     redact=self.redactor),
                              "step": None})
        env.ignore_undelivered()
        result = outcome.binding if program is not None and isinstance(outcome, Done) else None
        successor = None
        if isinstance(outcome, Continued):
            outcome, successor = self._successor(record, flow, outcome, env.at)
        update = update_for(record.id, state, outcome, history, env.at,
                            consumed=tuple(env.consumed), result=result,
                            rescan=tuple(sorted(env.rescan)), successor=successor)
        return _written(replace(update, children=tuple(env.children),
                                cancel_children=tuple(env.given_up)), state, journal,
                        registered, child=record.parent_id is not None)

    def _successor(self, record: RunRecord, flow: Flow, outcome: Continued,
                   now: datetime) -> tuple[Outcome, Successor | None]:
        """The run ``record`` continues as (a new run of ``flow`` and its target, with the
        outcome's inputs), or the failure that keeps it from starting."""
        try:
            run, created = pending_run(flow, outcome.inputs, record.target, now,
                                       run_id=new_run_id(), limits=self.limits,
                                       continued_from=record.id)
        except TarryError as exc:  # checked by the flow's call already; kept safe here
            return Failed({"type": "continue-as-new", "message": stored_text(str(exc)),
                           "step": None}), None
        entries = (created, HistoryEntry(now, CONTINUED, None, {"from": record.id}))
        return outcome, Successor(run, entries, now + HANDOVER)

    def _window_closed(self, flow: Flow, state: Mapping[str, Any], now: datetime) -> bool:
        """Whether a run that has not asked for its flow's slot yet is about to wait for its
        flow's ``window`` (its calendar closed now): it asks for the slot once the window
        opens, so a run held by its window never holds a slot meanwhile."""
        if flow.window is None or "root" in state or slots.SLOT in state:
            return False
        calendar = self.catalog.calendars.get(flow.window)
        return calendar is not None and not calendar.is_open(now)

    @staticmethod
    def _started(record: RunRecord, state: dict[str, Any], now: datetime,
                 history: list[HistoryEntry]) -> None:
        """Record that the run (re)starts its steps: started, resumed or recovered."""
        history.extend(HistoryEntry(now, kind) for kind in _entry_kinds(record.status, state))
        state.setdefault("started_at", iso(now))

    def _crashed(self, record: RunRecord) -> Failed:
        """The failure of a run whose workers died running it once more than
        :attr:`recovery_max` allows."""
        return Failed({"type": "crashed", "step": None, "message": (
            f"the worker running it stopped {record.recoveries} times in a row before its "
            "next checkpoint (a crash, os._exit or a kill); after "
            f"{self.recovery_max} recoveries ([limits] recovery_max) it is not run again")})

    async def _walk(self, env: Env, state: dict[str, Any]) -> Outcome:
        """Walk the run's state, carry out what the walk asks (:mod:`tarry.engine.commands`)
        and walk again, until it is blocked or has ended. Actions with effects run
        concurrently; the results of those that finished are put in their steps' state and
        checkpointed together before the executor does anything more than walk: before it
        starts another action, reads or waits. A walk that then ends takes them into the
        run's final write instead (a flow that ends in an action commits once, not twice):
        the walk does no I/O, so nothing can happen between the results and that write."""
        interpreter = Interpreter(env)
        calls: dict[asyncio.Future[Any], RunAction] = {}
        unsaved = False
        try:
            while True:
                outcome = await interpreter.advance(state)
                if not isinstance(outcome, Pending):
                    return outcome
                if unsaved:
                    await env.checkpoint()
                    unsaved = False
                lone = _lone_action(outcome.commands, calls)
                if lone is not None:
                    result = await self._call(lone, env.recoveries)
                    env.moved()
                    unsaved = _record(env, [(lone, result)])
                    continue
                read = await self._carry_out(env, outcome.commands, calls)
                if calls:
                    finished, _ = await asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED)
                    env.moved()
                    unsaved = _record(env, [(calls.pop(call), call.result()) for call in finished])
                elif not read:
                    raise RuntimeError("the walk waits for an action nobody is running")
        finally:
            for call in calls:
                call.cancel()
            await asyncio.gather(*calls, return_exceptions=True)

    async def _carry_out(self, env: Env, commands: Sequence[Command],
                         calls: dict[asyncio.Future[Any], RunAction]) -> bool:
        """Start the calls ``commands`` ask for (into ``calls``), and do their journal reads;
        whether there were reads."""
        read = False
        for command in commands:
            if isinstance(command, ReadJournal):
                command.into(await self._entries(env.run_id, command.query))
                read = True
            elif isinstance(command, TakeSlot):
                await self._take_pool_slot(env, command)
                read = True
            elif isinstance(command, StartChild):
                self.prepare_child(env, command)
                read = True
            else:
                calls[asyncio.ensure_future(self._call(command, env.recoveries))] = command
        return read

    def prepare_child(self, env: Env, command: StartChild) -> None:
        """Prepare the child run ``command`` asks for: its id in the step's state, the run
        among those the next checkpoint creates (held, or refused at start, when its flow
        has a hold); or, when it cannot start (no such flow, inputs that do not fit), the
        step's failure ``child-not-started``."""
        env.in_flight.discard(command.path)
        try:
            flow = self.catalog.remember(self.catalog.find_named(command.flow))
            run, created = pending_run(
                flow, command.inputs, command.target, env.at, run_id=new_run_id(),
                limits=self.limits, origin={"parent": env.run_id, "step": command.path})
            run = replace(run, parent_id=env.run_id, parent_step=command.path)
            history: tuple[HistoryEntry, ...] = (created,)
            hold = hold_of(flow, None)
            if hold is not None:
                held, entries = prepared(self.gate.holds, run, hold, created)
                run, history = held, tuple(entries)
        except TarryError as exc:
            env.failures[command.path] = ActionFailed(
                "child-not-started", stored_text(str(exc), redact=self.redactor), 1,
                retryable=False)
            return
        command.cur["child"] = run.id
        env.children.append((run, history))
        env.record("child.started", command.path, run=run.id, flow=flow.name)

    def _call(self, command: RunAction, recoveries: int) -> Coroutine[Any, Any, Any]:
        """The call of ``command``'s action (its result, or why it failed), bounded by its
        timeout; its attempt counts the ``recoveries`` since the last checkpoint (the
        executions that died with their workers). A ``limit:`` step's call gives its pool's
        slot back once it returns, however it ended."""
        if recoveries:
            command = replace(command, context=replace(
                command.context, attempt=command.context.attempt + recoveries))
        call = timed_call(self.actions, command, clock=self.timer, timeout=command.timeout,
                          silence=self.lease, redact=self.redactor,
                          value_bytes=self.limits.value_bytes)
        return call if command.pool is None else self._holding(command, call)

    async def _holding(self, command: RunAction, call: Coroutine[Any, Any, Any]) -> Any:
        """``call``, then the slot of the pool ``command``'s step holds given back, however
        the call ended."""
        try:
            return await call
        finally:
            if command.cur.pop("slot", None) == "held" and self.give_slot_back is not None:
                assert command.pool is not None
                claim = SlotClaim(slots.pool_slot_key(command.pool), command.context.run_id,
                                  0, command.path)
                now = self.clock() if self.clock is not None else command.context.now
                await asyncio.shield(self.give_slot_back(claim, now))

    async def _take_pool_slot(self, env: Env, command: TakeSlot) -> None:
        """Ask for a slot of the pool ``command``'s step names; note in its state what came
        of it (a pool the project no longer declares fails the step)."""
        cur, path = command.cur, command.path
        size = self.pools.get(command.pool)
        if size is None:
            env.failures[path] = ActionFailed(
                "pool", f"pool '{command.pool}' is not declared in [limits.pools]",
                cur.get("attempt", 0) + 1, retryable=False)
            return
        if self.take_slot is None:  # no store to count in: not enforced
            cur["slot"] = "held"
            return
        claim = SlotClaim(slots.pool_slot_key(command.pool), env.run_id, size, path)
        turn = await self.take_slot(claim, env.now)
        if turn.granted:
            cur["slot"] = "held"
            cur.pop("ahead", None)
            if cur.pop("slot_since", None) is not None:
                env.record("slot.taken", path, key=command.pool)
            return
        cur.update(slot="queued", ahead=turn.ahead)
        env.denied.add(path)
        if "slot_since" not in cur:
            cur["slot_since"] = iso(env.now)
            env.record("slot.queued", path, key=command.pool, ahead=turn.ahead)

    async def _restore(self, run_id: str, state: dict[str, Any], journal: RunJournal) -> None:
        """Read back into ``state`` what the resume needs of the run's journal."""
        query = journal.query(state)
        if query is not None:
            journal.restore(state, await self._entries(run_id, query))

    async def _entries(self, run_id: str, query: JournalQuery) -> list[JournalEntry]:
        return await self._read_journal(run_id, scopes=query.scopes, selective=query.selective,
                                        keys=query.keys)

    def _env(self, record: RunRecord, flow: Flow, state: dict[str, Any], *,
             journal: RunJournal, now: datetime, history: list[HistoryEntry]) -> Env:
        capture: asyncio.Task[None] | None = None  # the checkpoint not yet taken

        async def checkpoint() -> None:
            """Persist the state; calls made at the same moment (a Python flow's concurrent
            branches whose steps finished together) share one capture and one write."""
            nonlocal capture
            if capture is None:
                capture = asyncio.ensure_future(take_checkpoint())
            await asyncio.shield(capture)

        async def take_checkpoint() -> None:
            nonlocal capture
            await asyncio.sleep(0)  # let branches finishing this moment join this capture
            capture = None  # from here on a new call needs a new capture
            live, entries = journal.split(state)  # encoded now: nothing is copied
            update = RunUpdate(record.id, RunStatus.RUNNING, live, list(history),
                               release=False, consumed=tuple(env.consumed), journal=entries,
                               children=tuple(env.children),
                               cancel_children=tuple(env.given_up))
            history.clear()
            env.consumed.clear()
            env.children.clear()
            env.given_up.clear()
            outcome = await self._checkpoint(update)
            if outcome is CheckpointOutcome.LEASE_LOST:
                raise LeaseLost(record.id)
            if outcome is CheckpointOutcome.CANCEL_REQUESTED:
                raise _CancelRequested(record.id)
            env.recoveries = 0  # the store counts takeovers afresh from this checkpoint

        run_info = {"id": record.id, "target": record.target,
                    "started_at": state["started_at"]}
        env = Env(run_id=record.id, flow=flow, now=now, inputs=record.inputs,
                  run_info=run_info, actions=self.actions, checkpoint=checkpoint,
                  history=history, redact=self.redactor, limits=self.limits, clock=self.clock,
                  action_timeout=self.action_timeout, recoveries=record.recoveries,
                  timer=self.timer, lease=self.lease, calendars=self.catalog.calendars)
        env.start_child = lambda command: self.prepare_child(env, command)
        return env


def _lone_action(commands: Sequence[Command],
                 calls: Mapping[asyncio.Future[Any], RunAction]) -> RunAction | None:
    """The one action the walk asks for when nothing else runs beside it (None otherwise).

    It is awaited at once rather than in a task of its own: a task would first let every
    other run that woke at the same instant walk to its own action (in a burst of 50 due
    together, the first action ran 3 ms late, after all 50 walks)."""
    if calls or len(commands) != 1 or not isinstance(commands[0], RunAction):
        return None
    return commands[0]


def _record(env: Env, finished: Sequence[tuple[RunAction, Any]]) -> bool:
    """Put what the finished calls came to where the walk finds it: a result in its step's
    state, a failure in ``env.failures``; whether there were results (to checkpoint)."""
    for call, result in finished:
        env.in_flight.discard(call.path)
        if isinstance(result, ActionFailed):
            env.failures[call.path] = result
        else:
            call.cur["result"] = result
    return any(not isinstance(result, ActionFailed) for _, result in finished)


def _registered(record: RunRecord, state: Mapping[str, Any]) -> Mapping[str, bool]:
    """What the run may have registered in the store before this advance: event waits,
    open tasks. A run that never ran has neither; otherwise its last release noted them in
    its state (``registered``); a state without the note may have both."""
    if record.status in (RunStatus.PENDING, RunStatus.HELD):
        return {"waits": False, "tasks": False}
    noted = state.get("registered")
    return noted if isinstance(noted, dict) else {"waits": True, "tasks": True}


def _written(update: RunUpdate, state: dict[str, Any], journal: RunJournal,
             registered: Mapping[str, bool], *, child: bool = True) -> RunUpdate:
    """``update`` as the store writes it: the live state (which notes, on release, whether
    the run has event waits and open tasks now, and once it started a child run, that it
    did), and what completed as entries; with what the run had registered before, so that
    the store looks up only what may exist, and whether the run is related to others
    (``child``: it is a child run itself)."""
    if update.release:
        state["registered"] = {"waits": bool(update.waits), "tasks": bool(update.tasks)}
    if update.children:
        state["children"] = True  # a state without the note never started one
    live, entries = journal.split(state)
    return replace(update, state=live, journal=entries, had_waits=registered["waits"],
                   had_tasks=registered["tasks"],
                   related=child or bool(state.get("children")))


def update_for(run_id: str, state: dict[str, Any], outcome: Outcome,
               history: list[HistoryEntry], now: datetime, *,
               consumed: tuple[str, ...] = (), result: Any = None,
               rescan: tuple[str, ...] = (), successor: Successor | None = None) -> RunUpdate:
    """The store update that records ``outcome`` (and releases the lease); ``result`` is a
    Python flow's return value, kept when the run succeeds; ``rescan`` names the waits that
    turned an event down and wait on; ``successor`` is the run a ``Continued`` run
    continues as."""
    if isinstance(outcome, Continued):
        assert successor is not None, "a run continues as a successor"
        history.append(HistoryEntry(now, CONTINUED, None, {"as": successor.run.id}))
        history.append(HistoryEntry(now, "succeeded", None, {"exit": CONTINUED}))
        return RunUpdate(run_id, RunStatus.SUCCEEDED, state, history, exit=CONTINUED,
                         consumed=consumed, successor=successor)
    if isinstance(outcome, Blocked):
        return RunUpdate(run_id, RunStatus.WAITING, state, history, due_at=outcome.wake_at,
                         waiting_for=outcome.waiting_for(), consumed=consumed,
                         slot_queued=tuple(SlotClaim(slots.pool_slot_key(w.key), run_id, 0,
                                                     w.step)
                                           for w in outcome.waits
                                           if w.kind == "slot" and w.key is not None),
                         waits=_event_waits(outcome), rescan=rescan,
                         tasks=tuple(w.task for w in outcome.waits if w.task is not None),
                         awaits_children=any(w.kind == "child" for w in outcome.waits))
    if isinstance(outcome, Failed):
        history.append(HistoryEntry(now, "failed", outcome.error.get("step"),
                                    {"error": outcome.error}))
        return RunUpdate(run_id, RunStatus.FAILED, state, history, error=outcome.error,
                         consumed=consumed)
    exit_name = outcome.name if isinstance(outcome, Exited) else "completed"
    assert isinstance(outcome, Done | Exited)
    history.append(HistoryEntry(now, "succeeded", None, {"exit": exit_name}))
    return RunUpdate(run_id, RunStatus.SUCCEEDED, state, history, exit=exit_name,
                     result=result, consumed=consumed)


def _event_waits(outcome: Blocked) -> tuple[EventWait, ...]:
    return tuple(EventWait(w.step, w.event_type, correlation_key(w.match or {}), w.until,
                           first_wins=w.first_wins)
                 for w in outcome.waits
                 if w.kind == "event" and w.event_type is not None and w.until is not None)


def _by_wait(inbox: list[InboxEvent]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for item in inbox:
        grouped.setdefault(item.wait_id, []).append(
            {"inbox_id": item.inbox_id, "id": item.event_id, "type": item.type,
             "data": item.data, "received_at": iso(item.received_at)})
    return grouped

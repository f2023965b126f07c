"""The interpreter: advance one run's state as far as it can go right now.

A run's state is a tree that mirrors the flow: each scope being executed has a *frame*
(``at``: the index of the current step, ``b``: the bindings so far, ``phase``: ``steps`` or
``recover``, ``cur``: the private state of the step in progress). Containers keep their
children's frames inside their ``cur``: a group one frame, a ``repeat`` the current
iteration's, a ``for_each`` one per live iteration — so one run can hold several branches
suspended at once.

Resuming walks from the root down the live path only, never replaying completed steps, so a
wake costs the same after 3 steps or 3,000. The walk does no I/O: it reads the clock it is
given (``Env.now``), calls the pure built-in actions itself, and answers
:class:`~tarry.engine.outcome.Pending` with commands (:mod:`tarry.engine.commands`) where it
needs an action with effects run or the journal read; the executor carries them out, records
what they returned in the state, checkpoints, and walks again. The executor persists the
mutated state.
"""

from __future__ import annotations

import asyncio
import random
from collections import ChainMap
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tarry._suggest import did_you_mean
from tarry.actions import ActionContext, ActionRegistry, idempotency_key
from tarry.backoff import grown
from tarry.clock import Clock, from_iso, iso
from tarry.engine import children, events, loops, tasks
from tarry.engine.commands import (
    DEFAULT_ACTION_TIMEOUT,
    ActionFailed,
    RunAction,
    StartChild,
    TakeSlot,
    call_action,
)
from tarry.engine.frames import new_frame, since
from tarry.engine.outcome import (
    Blocked,
    Done,
    Exited,
    Failed,
    Outcome,
    Pending,
    WaitInfo,
    step_error,
)
from tarry.engine.values import to_json
from tarry.errors import ExpressionError, InvalidValue
from tarry.language.calendars import Calendar
from tarry.language.durations import MAX_DURATION, check_duration, parse_duration, parse_instant
from tarry.language.expressions import EvalContext, WorkMeter, render
from tarry.language.expressions.limits import MAX_WORK
from tarry.language.model import (
    Action,
    Ask,
    BusinessTime,
    Call,
    Construct,
    Exit,
    Fail,
    Flow,
    ForEach,
    Group,
    Repeat,
    Scope,
    Step,
    Template,
    Wait,
    WaitFor,
)
from tarry.model import HistoryEntry, NewRun
from tarry.secrets import Redactor
from tarry.values import ValueLimits

__all__ = ["CalendarFailure", "Env", "Interpreter", "Names", "business"]

Names = ChainMap[str, Any]

_SHARED_RNG = random.Random()


@dataclass
class Env:
    """Everything one advance of one run needs besides its state."""

    run_id: str
    flow: Flow
    now: datetime
    inputs: dict[str, Any]
    run_info: dict[str, Any]
    actions: ActionRegistry
    checkpoint: Callable[[], Awaitable[None]]
    history: list[HistoryEntry] = field(default_factory=list)
    inbox: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Events delivered to this run, by the path of the waiting step, oldest first."""
    consumed: list[str] = field(default_factory=list)
    """Inbox entries the walk looked at (to delete with the checkpoint)."""
    rescan: set[str] = field(default_factory=set)
    """Waits that turned an event down and wait on (offered the next buffered one)."""
    limits: ValueLimits = field(default_factory=ValueLimits)
    """The size limits of what the run stores (step results, wait match values)."""
    rng: random.Random = field(default_factory=lambda: _SHARED_RNG)
    """Randomness for jitter (shared: seeding a generator per run costs more than a wake)."""
    redact: Redactor = field(default_factory=Redactor)
    """Masks secrets in error texts before the run records them."""
    in_flight: set[str] = field(default_factory=set)
    """The paths of the action steps whose calls the walk asked the executor for, until the
    executor has recorded what they came to."""
    denied: set[str] = field(default_factory=set)
    """The ``limit:`` steps denied a slot of their pool in this advance: they wait."""
    failures: dict[str, ActionFailed] = field(default_factory=dict)
    """What the executor's failed calls came to, by step path, for the walk to retry or
    fail them."""
    meter: WorkMeter = field(default_factory=WorkMeter)
    """The work of the walk's renders, by which it lets other runs go on."""
    clock: Callable[[], datetime] | None = None
    """Reads the clock for :attr:`at` once something took time (an action's call); None
    keeps every entry at :attr:`now`."""
    action_timeout: timedelta = DEFAULT_ACTION_TIMEOUT
    """How long a call of an action (or a Python flow's step) may run when its step sets
    no ``timeout``."""
    timer: Clock | None = None
    """The clock calls are timed on (:mod:`tarry.engine.timeouts`); None leaves a Python
    flow's steps unbounded."""
    lease: timedelta = timedelta(seconds=30)
    """The worker's lease: the longest silence after a call's heartbeat."""
    recoveries: int = 0
    """How many workers died running the run since its last checkpoint: each ran the
    actions then in flight once more than their steps' state says, so a call started
    before this advance checkpoints counts them in ``ctx.attempt``; none once it did."""
    children: list[tuple[NewRun, tuple[HistoryEntry, ...]]] = field(default_factory=list)
    """Child runs prepared for ``call`` steps, created by the next checkpoint."""
    given_up: list[str] = field(default_factory=list)
    """Child runs whose ``call`` timed out, cancelled by the next checkpoint."""
    start_child: Callable[[StartChild], None] = field(default=lambda command: None)
    """Prepares a child run at once, as the executor does for a :class:`StartChild` command
    (a Python flow's ``ctx.call``, which has no walk to answer with commands)."""
    calendars: Mapping[str, Calendar] = field(default_factory=dict)
    """The business calendars of the project (``[calendars.NAME]``), by name."""
    at: datetime = field(init=False)
    """The instant history entries are stamped with: :attr:`now` until :meth:`moved`.
    Expressions keep seeing :attr:`now`, one instant per advance."""

    def __post_init__(self) -> None:
        self.at = self.now

    def moved(self) -> None:
        """Read the clock for the entries recorded from here on: an action's call (or a
        Python step's) just finished, so its end is stamped after its start."""
        if self.clock is not None:
            self.at = max(self.at, self.clock())

    @property
    def eval(self) -> EvalContext:
        """The expression context: the clock reading and the flow's timezone."""
        return EvalContext(now=self.now, timezone=self.flow.timezone, meter=self.meter,
                           calendars=self.calendars)

    def record(self, kind: str, step: str | None = None, /, **data: Any) -> None:
        """Append a history entry stamped with the instant it happened (:attr:`at`)."""
        self.history.append(HistoryEntry(self.at, kind, step, data))

    def give_up_child(self, run_id: str) -> None:
        """Stop waiting for the child run ``run_id``: the next checkpoint cancels it."""
        self.given_up.append(run_id)

    def ignore_undelivered(self) -> None:
        """Consume the events left in the inbox after an advance: they were delivered for
        waits the run no longer reaches (a deadline or another branch won the race), and
        left in place they would wake the run again and again."""
        for path, delivered in self.inbox.items():
            for event in delivered:
                self.consumed.append(event["inbox_id"])
                self.record("event.ignored", path, event_id=event["id"], type=event["type"])
        self.inbox.clear()


_Handler = Callable[["Interpreter", Step, dict[str, Any], Names, str], Awaitable[Outcome]]


class Interpreter:
    """Walks one run's state tree for one advance (see the module docstring)."""

    def __init__(self, env: Env) -> None:
        self.env = env

    async def advance(self, state: MutableMapping[str, Any]) -> Outcome:
        """Run the flow from where ``state`` stands until every branch is blocked or done.

        A flow with a ``window`` holds its first step until that calendar is open."""
        if "root" not in state and self.env.flow.window is not None:
            try:
                held = self.window(self.env.flow.window, state, "")
            except CalendarFailure as exc:
                return step_error("calendar", str(exc), "")
            if held is not None:
                return held
        root = state.setdefault("root", new_frame())
        names: Names = ChainMap({"run": self.env.run_info}, self.env.inputs)
        return await self.run_scope(root, self.env.flow.body, names, "")

    async def run_scope(self, frame: dict[str, Any], scope: Scope, names: Names,
                        prefix: str) -> Outcome:
        """Advance the steps (then, after a failure, the recover steps) of one scope."""
        while True:
            steps = scope.steps if frame["phase"] == "steps" else scope.recover
            local = names.new_child(frame["b"])
            if frame["phase"] == "recover":
                local = local.new_child({"error": frame["error"]})
            outcome = await self._run_steps(frame, steps, local, prefix)
            if (isinstance(outcome, Failed) and frame["phase"] == "steps" and scope.recover):
                error = {k: outcome.error[k] for k in ("step", "type", "message")}
                frame.update(phase="recover", at=0, error=error)
                frame.pop("cur", None)  # the failed step's own state is not the recover's
                self.env.record("scope.recovering", prefix.rstrip(".") or None, error=error)
                continue
            return outcome

    async def _run_steps(self, frame: dict[str, Any], steps: tuple[Step, ...], names: Names,
                         prefix: str) -> Outcome:
        while frame["at"] < len(steps):
            step = steps[frame["at"]]
            outcome = await self.run_step(step, frame, names, prefix + step.id)
            if isinstance(outcome, Failed) and step.optional:
                outcome = Done({"failed": True, "error": {"type": outcome.error["type"],
                                                          "message": outcome.error["message"]}})
            if not isinstance(outcome, Done):
                return outcome
            frame["b"][step.id] = outcome.binding
            frame["at"] += 1
            frame.pop("cur", None)
        return Done(frame["b"])

    async def run_step(self, step: Step, frame: dict[str, Any], names: Names,
                       path: str) -> Outcome:
        """Advance one step: evaluate ``if`` on entry, then its construct."""
        try:
            if "cur" not in frame:
                if not self._condition_holds(step.if_, names):
                    self.env.record("step.skipped", path)
                    return Done({"skipped": True})
                frame["cur"] = {"window": {}} if step.window is not None else {}
                if step.window is None:
                    self.env.record("step.started", path)
            if "window" in frame["cur"]:
                assert step.window is not None
                held = self.window(step.window, frame["cur"], path)
                if held is not None:
                    return held
                self.env.record("step.started", path)
            outcome = await _HANDLERS[type(step.construct)](self, step, frame["cur"], names, path)
        except CalendarFailure as exc:
            outcome = step_error("calendar", str(exc), path)
        except ExpressionError as exc:
            outcome = step_error("expression", exc.at_step(path).reason + _quoted(exc), path)
        except InvalidValue as exc:  # never retried: the same value would fail again
            outcome = step_error("value", str(exc), path)
        if isinstance(outcome, Done):
            self.env.record("step.completed", path)
        elif isinstance(outcome, Failed) and outcome.error.get("step") == path:
            self.env.record("step.failed", path, error=outcome.error)
        if self.env.meter.take(MAX_WORK):  # as much work as the worst render: others' turn
            await asyncio.sleep(0)
        return outcome

    def render(self, value: Any, names: Names) -> Any:
        """Render the templates in ``value`` against ``names``."""
        return render(value, names, self.env.eval)

    def truthy(self, condition: Template, names: Names) -> bool:
        """The truth of a condition template."""
        return bool(self.render(condition.source, names))

    def _condition_holds(self, condition: Template | bool | None, names: Names) -> bool:
        if condition is None or isinstance(condition, bool):
            return condition is not False
        return self.truthy(condition, names)

    def calendar(self, name: str) -> Calendar:
        """The project's calendar ``name``; :class:`CalendarFailure` when it is not
        configured (any more: the flow was checked against the calendars when it loaded)."""
        found = self.env.calendars.get(name)
        if found is None:
            raise CalendarFailure(f"calendar '{name}' is not configured (add a "
                                  f"[calendars.{name}] table to tarry.toml)"
                                  f"{did_you_mean(name, self.env.calendars)}")
        return found

    def after(self, value: timedelta | Template | BusinessTime, names: Names) -> datetime:
        """The instant a wait of ``value`` (a duration, or business time) from now ends."""
        if not isinstance(value, BusinessTime):
            return self.env.now + self.duration(value, names)
        amount = self.duration(value.amount, names)
        try:
            return self.calendar(value.calendar).add(self.env.now, amount)
        except ValueError as exc:
            raise CalendarFailure(str(exc)) from None

    def window(self, name: str, cur: MutableMapping[str, Any],
               path: str) -> Blocked | None:
        """Hold a step (or, at path ``""``, the run's start) until calendar ``name`` is
        open: None once it is; else the wait, registered in ``cur["window"]`` the first time
        (its ``until`` recomputed at each look, so a calendar changed meanwhile counts)."""
        calendar = self.calendar(name)
        held = cur.setdefault("window", {})
        if calendar.is_open(self.env.now):
            if held:
                self.env.record("window.opened", path or None, calendar=name)
            del cur["window"]
            return None
        try:
            until = calendar.next_open(self.env.now)
        except ValueError as exc:
            raise CalendarFailure(str(exc)) from None
        if not held:
            held["since"] = iso(self.env.now)
            self.env.record("wait.registered", path or None, kind="window", calendar=name,
                            until=iso(until))
        held["until"] = iso(until)
        return Blocked((WaitInfo("window", path, until, since=since(held), calendar=name,
                                 local=calendar.wall_clock(until)),))

    def duration(self, value: timedelta | Template, names: Names) -> timedelta:
        """A literal or computed duration."""
        if isinstance(value, timedelta):
            return value
        computed = self.render(value.source, names)
        if not isinstance(computed, timedelta | str):
            raise ExpressionError(f"expected a duration, got {type(computed).__name__}",
                                  expression=value.source)
        try:
            return (check_duration(computed) if isinstance(computed, timedelta)
                    else parse_duration(computed))
        except ValueError as exc:
            raise ExpressionError(str(exc), expression=value.source) from None

    def deadline(self, value: timedelta | datetime | Template | BusinessTime,
                 names: Names) -> datetime:
        """A timeout: a duration from now (or business time) or an instant, literal or
        computed."""
        if isinstance(value, BusinessTime):
            return self.after(value, names)
        if isinstance(value, timedelta):
            return self.env.now + value
        if isinstance(value, datetime):
            return value
        computed = self.render(value.source, names)
        if isinstance(computed, timedelta) or (
                isinstance(computed, str) and not _looks_like_instant(computed)):
            return self.env.now + self.duration(value, names)
        return self.instant(value, names)

    def on_calendar(self, value: object, until: datetime) -> tuple[str | None, str | None]:
        """The ``calendar`` and ``local`` of a wait whose length is business time."""
        if not isinstance(value, BusinessTime) or value.calendar not in self.env.calendars:
            return None, None
        return value.calendar, self.env.calendars[value.calendar].wall_clock(until)

    def instant(self, value: datetime | Template, names: Names) -> datetime:
        """A literal or computed instant (zone-less only with the flow's timezone)."""
        if isinstance(value, datetime):
            return value
        computed = self.render(value.source, names)
        if isinstance(computed, datetime):
            return computed
        if isinstance(computed, str):
            try:
                return parse_instant(computed, self.env.flow.timezone)
            except ValueError as exc:
                raise ExpressionError(str(exc), expression=value.source) from None
        raise ExpressionError(f"expected an instant, got {type(computed).__name__}",
                              expression=value.source)


class CalendarFailure(Exception):
    """A business calendar could not answer (not configured, or never open): the step
    fails with ``error.type = calendar``."""


def business(value: object) -> dict[str, str]:
    """``{"calendar": name}`` for a history entry when ``value`` is business time."""
    return {"calendar": value.calendar} if isinstance(value, BusinessTime) else {}


def _looks_like_instant(text: str) -> bool:
    return len(text) >= 10 and text[4:5] == "-" and text[:4].isdigit()


def _quoted(exc: ExpressionError) -> str:
    return f": {exc.expression}" if exc.expression else ""


async def _run_action(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                      path: str) -> Outcome:
    """An action step: done once it has a result; else called (or asked of the executor),
    and after a failure retried or failed by its ``retry``."""
    env = walker.env
    if "result" in cur:  # completed (and checkpointed, if it had effects): never run again
        return Done(cur["result"])
    failed = env.failures.pop(path, None)  # what the executor's call of it came to
    if failed is None:
        if path in env.in_flight:
            return Pending()
        if "retry_at" in cur and env.now < from_iso(cur["retry_at"]):
            return Blocked((WaitInfo("retry", path, from_iso(cur["retry_at"]),
                                     since=since(cur)),))
        called = await _call(walker, step, cur, names, path)
        if not isinstance(called, ActionFailed):
            return called
        failed = called
    if not failed.retryable:
        return step_error(failed.kind, failed.message, path)
    return _retry_or_fail(walker, step, cur, path, attempt=failed.attempt, kind=failed.kind,
                          message=failed.message)


async def _call(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                path: str) -> Outcome | ActionFailed:
    """A pure built-in is called here (its result, or why it failed); any other action is a
    command for the executor, which records its result in ``cur`` and checkpoints, or hands
    its failure back through ``Env.failures``."""
    assert isinstance(step.construct, Action)
    env = walker.env
    name = step.construct.name
    if step.limit is not None and cur.get("slot") != "held" and not env.actions.is_pure(name):
        return _slot_turn(step.limit, cur, env, path)
    args = to_json(walker.render(step.construct.args, names))
    attempt = cur.get("attempt", 0) + 1  # the executor adds the workers that died in it
    timeout = step.construct.timeout or env.action_timeout
    context = ActionContext(run_id=env.run_id, step_path=path, attempt=attempt,
                            idempotency_key=idempotency_key(env.run_id, path), now=env.now,
                            note=lambda message: env.record("log", path, message=message),
                            timeout=timeout)
    arguments = args if isinstance(args, dict) else {"value": args}
    if not env.actions.is_pure(name):
        env.in_flight.add(path)  # asked once: a walk again before it finishes waits for it
        return Pending((RunAction(path, name, arguments, context, cur, step.limit, timeout),))
    result = await call_action(env.actions, name, arguments, context, redact=env.redact,
                               value_bytes=env.limits.value_bytes)
    return result if isinstance(result, ActionFailed) else Done(result)


def _slot_turn(pool: str, cur: dict[str, Any], env: Env, path: str) -> Outcome:
    """A ``limit:`` step without its slot: asks for one (once an advance), or waits for the
    store to hand it one (no instant wakes it)."""
    if path not in env.denied:
        return Pending((TakeSlot(path, pool, cur),))
    queued = cur.get("slot_since")
    return Blocked((WaitInfo("slot", path, None, since=from_iso(queued) if queued else None,
                             key=pool, ahead=cur.get("ahead")),))


def _retry_or_fail(walker: Interpreter, step: Step, cur: dict[str, Any], path: str, *,
                   attempt: int, kind: str, message: str) -> Outcome:
    retry = step.retry
    if retry is None or attempt > retry.max:
        return step_error(kind, message, path)
    env = walker.env
    wake = env.now + grown(retry.every, retry.backoff, attempt - 1, MAX_DURATION)
    cur.update(attempt=attempt, retry_at=iso(wake), since=iso(env.now))
    env.record("step.retrying", path, attempt=attempt, error={"type": kind, "message": message},
               until=iso(wake))
    return Blocked((WaitInfo("retry", path, wake, since=env.now),))


async def _run_wait(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                    path: str) -> Outcome:
    wait = step.construct
    assert isinstance(wait, Wait)
    if "until" not in cur:
        if wait.for_ is not None:
            until = walker.after(wait.for_, names)
        else:
            assert wait.until is not None
            until = walker.instant(wait.until, names)
        cur.update(until=iso(until), since=iso(walker.env.now))
        walker.env.record("wait.registered", path, kind="timer", until=cur["until"],
                          **business(wait.for_))
    until = from_iso(cur["until"])
    if walker.env.now >= until:
        return Done({"until": cur["until"]})
    calendar, local = walker.on_calendar(wait.for_, until)
    return Blocked((WaitInfo("timer", path, until, since=since(cur), calendar=calendar,
                             local=local),))


async def _run_group(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                     path: str) -> Outcome:
    assert isinstance(step.construct, Group)
    frame = cur.setdefault("frame", new_frame())
    outcome = await walker.run_scope(frame, step.construct.steps, names, path + ".")
    return Done(dict(frame["b"])) if isinstance(outcome, Done) else outcome


async def _run_exit(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                    path: str) -> Outcome:
    assert isinstance(step.construct, Exit)
    return Exited(step.construct.name)


async def _run_fail(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                    path: str) -> Outcome:
    assert isinstance(step.construct, Fail)
    return step_error("failed", str(walker.render(step.construct.message, names)), path)


_HANDLERS: dict[type[Construct], _Handler] = {
    Action: _run_action,
    Wait: _run_wait,
    Group: _run_group,
    Exit: _run_exit,
    Fail: _run_fail,
    Repeat: loops.run_repeat,
    WaitFor: events.run_wait_for,
    Ask: tasks.run_ask,
    Call: children.run_call,
    ForEach: loops.run_for_each,
}

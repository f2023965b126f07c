"""The operations of a Python flow, recorded in its journal: steps, timers, events, now, random.

One :class:`FlowRun` serves one advance of one run (see :mod:`tarry.sdk.runner`); the
:class:`~tarry.sdk.context.Context` a flow receives is a thin facade over it. Each operation
takes its place in a :class:`~tarry.sdk.replay.Scope`; a recorded one returns what it
recorded, a new one executes, records and — when it had an effect outside the run (a step, a
condition check) — checkpoints the run before returning, so a crash re-executes at most the
operation that was in flight.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NoReturn

from tarry._suggest import did_you_mean
from tarry.actions import in_thread
from tarry.clock import from_iso, iso
from tarry.engine.events import received_in_time
from tarry.engine.frames import since
from tarry.engine.outcome import WaitInfo
from tarry.engine.timeouts import EXPIRED, Watch, within
from tarry.errors import ContinueAsNewError, EventError, InvalidRunRequest, StepError
from tarry.language.inputs import bind_inputs
from tarry.language.manifests import Manifest
from tarry.sdk.replay import ContinuedAsNew, Journal, Operation, Scope, Suspend
from tarry.sdk.serializers import Codec
from tarry.sdk.strategies import as_duration
from tarry.values import check_key, check_value, stored_text

if TYPE_CHECKING:
    from tarry.engine.interpreter import Env

__all__ = ["FlowRun", "Teardown", "call"]


class Teardown(BaseException):
    """Unwinds the flow because the run must be dropped (its lease was lost, its
    cancellation requested, or the store failed); the cause is kept on the FlowRun."""


async def call(function: Callable[..., Any], args: Sequence[Any],
               kwargs: Mapping[str, Any]) -> Any:
    """Call a step or check: ``async`` ones on the loop, plain ones on a daemon thread
    (:func:`~tarry.actions.in_thread`: one that hangs past its timeout is abandoned there,
    holding up no other call)."""
    if inspect.iscoroutinefunction(function):
        return await function(*args, **kwargs)
    result = await in_thread(function, *args, **kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


class FlowRun:
    """Everything the operations of one advance of one run share."""

    def __init__(self, env: Env, journal: Journal, codec: Codec,
                 manifests: Mapping[str, Manifest]) -> None:
        self.env = env
        self.journal = journal
        self.codec = codec
        self.manifests = manifests
        self.teardown: BaseException | None = None
        """Why the run is being dropped (re-raised to the executor), once it is."""
        self.cancelled = threading.Event()
        """Set when the run is being dropped; long checks may watch it."""

    async def checkpoint(self) -> None:
        """Save the run's state now (the executor's intermediate checkpoint)."""
        if self.teardown is not None:
            raise Teardown
        try:
            await self.env.checkpoint()
        except Exception as exc:  # lease lost, cancel requested, store failure
            self.teardown = exc
            self.cancelled.set()
            raise Teardown from exc

    def record(self, kind: str, path: str, /, **data: Any) -> None:
        """Append a history entry about the operation at ``path``."""
        self.env.record(kind, path, **data)

    # -- continuing as new ---------------------------------------------------------------

    def continue_as_new(self, scope: Scope, inputs: Mapping[str, Any]) -> NoReturn:
        """End the run into a new run of its flow with ``inputs``: unwind the flow with
        :class:`ContinuedAsNew` once the inputs are checked as a start checks them
        (``ContinueAsNewError`` otherwise, or inside a branch)."""
        if scope.prefix:
            raise ContinueAsNewError(
                f"it was called inside {scope.label}; a run continues as new from the flow "
                "function itself, once its parallel or map has returned")
        if scope.busy is not None:
            raise ContinueAsNewError(
                f"it was called while {scope.busy} is running; call it from the flow "
                "function, between operations")
        try:
            bound = bind_inputs(self.env.flow, inputs)
        except InvalidRunRequest as exc:
            raise ContinueAsNewError(exc.problems) from None
        check_value(bound, "the inputs of ctx.continue_as_new", self.env.limits.value_bytes)
        scope.end(ContinuedAsNew(bound))

    # -- steps ---------------------------------------------------------------------------

    async def step(self, scope: Scope, name: str | None, function: Callable[..., Any],
                   args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        """Call ``function`` once for the run; later, return (or raise) what it recorded."""
        if not callable(function):
            raise TypeError(f"ctx.step needs a callable, got {type(function).__name__}")
        op = scope.enter("step", name)
        cause: BaseException | None = None
        if op.entry is None:
            with scope.running(op):
                cause = await self._execute(op, function, args, kwargs)
        assert op.entry is not None
        if "error" in op.entry:
            error = op.entry["error"]
            raise StepError(op.path, error["type"], error["message"]) from cause
        return self.codec.load(op.entry["result"])

    async def _execute(self, op: Operation, function: Callable[..., Any], args: Sequence[Any],
                       kwargs: Mapping[str, Any]) -> BaseException | None:
        """Run a new step, record its result or failure, checkpoint; the exception it
        raised, if any (of any kind, ``SystemExit`` included: the step's, not the
        worker's; only the flow's own unwinding and a cancellation go through)."""
        self.record("step.started", op.path)
        try:
            value = await self._bounded(call(function, args, kwargs))
        except (asyncio.CancelledError, Suspend, Teardown):
            raise
        except BaseException as exc:
            await self._failed(op, {"type": type(exc).__name__,
                                    "message": stored_text(str(exc), redact=self.env.redact)})
            return exc
        if isinstance(value, _Ended):
            await self._failed(op, {"type": "timeout", "message": value.message})
            return None
        self.env.moved()
        op.record({"result": self.codec.store(value, f"the result of step '{op.path}'")})
        self.record("step.completed", op.path)
        await self.checkpoint()
        return None

    async def _bounded(self, running: Awaitable[Any]) -> Any:
        """What the step's call came to, or :class:`_Ended` when it outlived ``[limits]
        action_timeout`` (see :mod:`tarry.engine.timeouts`)."""
        timer = self.env.timer
        if timer is None:
            return await running
        watch = Watch(timer, self.env.action_timeout, self.env.lease)
        value = await within(watch, timer, running)
        if value is EXPIRED:
            return _Ended(watch.failure(1, self.env.redact).message)
        return value

    async def _failed(self, op: Operation, error: dict[str, Any]) -> None:
        """Record the step's failure, then checkpoint."""
        self.env.moved()
        op.record({"error": error})
        self.record("step.failed", op.path, error=error)
        await self.checkpoint()

    # -- recorded values -------------------------------------------------------------------

    def now(self, scope: Scope, name: str | None) -> datetime:
        """The instant of the advance that first asked; the same instant on every replay."""
        op = scope.enter("now", name)
        entry = op.entry or op.record({"value": iso(self.env.now)})
        return from_iso(entry["value"])

    def random(self, scope: Scope, name: str | None) -> float:
        """A float in [0, 1) drawn once for the run."""
        op = scope.enter("random", name)
        entry = op.entry or op.record({"value": self.env.rng.random()})
        return float(entry["value"])

    # -- waits -----------------------------------------------------------------------------

    async def wait(self, scope: Scope, name: str | None, duration: timedelta | str | None,
                   until: datetime | None) -> None:
        """Suspend the scope until ``duration`` from now, or until the instant ``until``."""
        wake = _wake_instant(duration, until)
        op = scope.enter("wait", name)
        entry = op.entry
        if entry is None:
            instant = wake if isinstance(wake, datetime) else self.env.now + wake
            entry = op.record({"until": iso(instant), "since": iso(self.env.now)})
            self.record("step.started", op.path)
            self.record("wait.registered", op.path, kind="timer", until=entry["until"])
        if entry.get("done"):
            return
        until_at = from_iso(entry["until"])
        if self.env.now < until_at:
            scope.suspend(WaitInfo("timer", op.path, until_at, since=since(entry)))
        entry["done"] = True
        self.record("step.completed", op.path)

    async def wait_for_event(self, scope: Scope, name: str | None, event_type: str,
                             match: Mapping[str, Any],
                             timeout: timedelta | str | datetime) -> dict[str, Any]:
        """Suspend until an event of ``event_type`` matching ``match`` is delivered, or the
        timeout passes; the outcome as the YAML ``wait_for`` binds it."""
        deadline = _deadline(timeout)
        op = scope.enter("wait_for_event", name)
        entry = op.entry
        if entry is None:
            values = self._checked_match(op.path, event_type, match)
            instant = deadline if isinstance(deadline, datetime) else self.env.now + deadline
            entry = op.record({"until": iso(instant), "type": event_type, "match": values,
                               "since": iso(self.env.now)})
            self.record("step.started", op.path)
            self.record("wait.registered", op.path, kind="event", until=entry["until"],
                        alternatives=[{"type": event_type, "match": values}])
        if "outcome" not in entry:
            outcome = self._delivered(op.path, entry["until"]) or self._timed_out(op.path, entry)
            if outcome is None:
                scope.suspend(WaitInfo("event", op.path, from_iso(entry["until"]),
                                       entry["type"], entry["match"], since=since(entry),
                                       first_wins=True))
            entry["outcome"] = outcome
            self.record("step.completed", op.path)
        return dict(Codec.copy(entry["outcome"]))

    def _checked_match(self, path: str, event_type: str,
                       match: Mapping[str, Any]) -> dict[str, Any]:
        """``match`` as JSON data, given exactly the correlation keys of ``event_type``."""
        where = f"wait_for_event '{path}'"
        manifest = self.manifests.get(event_type)
        if manifest is None:
            hint = (did_you_mean(event_type, self.manifests)
                    or "; declare it under 'events:' in an event manifest (events.yaml)")
            raise EventError(f"{where}: unknown event type '{event_type}'{hint}")
        if not isinstance(match, Mapping):
            raise TypeError(f"{where}: match must be a mapping of correlation keys to values, "
                            f"got {type(match).__name__}")
        correlates = (f" (event type '{event_type}' correlates on "
                      f"{', '.join(manifest.correlate_on)})")
        for key in match:
            if key not in manifest.correlate_on:
                raise EventError(f"{where}: unknown key '{key}' in match"
                                 f"{did_you_mean(str(key), manifest.correlate_on) or correlates}")
        for key in manifest.correlate_on:
            if key not in match:
                raise EventError(f"{where}: missing '{key}' in match{correlates}")
        values: dict[str, Any] = Codec.plain(dict(match), f"the match of {where}")
        for key, value in values.items():
            check_key(value, f"the match value '{key}' of {where}", self.env.limits.key_bytes)
        return values

    def _delivered(self, path: str, until: str) -> dict[str, Any] | None:
        """The first delivered event received before the deadline; the rest are left for
        ``Env.ignore_undelivered``."""
        inbox = self.env.inbox.get(path, [])
        if not inbox or not received_in_time(inbox[0], until):
            return None
        event = inbox.pop(0)
        self.env.consumed.append(event["inbox_id"])
        self.record("event.received", path, event_id=event["id"], type=event["type"])
        return {"status": "received", "event": event["data"],
                "received_at": event["received_at"]}

    def _timed_out(self, path: str, entry: dict[str, Any]) -> dict[str, Any] | None:
        if self.env.now < from_iso(entry["until"]):
            return None
        self.record("wait.timeout", path, until=entry["until"])
        return {"status": "timeout", "event": None, "received_at": None}


@dataclass(frozen=True)
class _Ended:
    """A step's call ended at its timeout, and why."""

    message: str


def _wake_instant(duration: timedelta | str | None, until: datetime | None) -> timedelta | datetime:
    if (duration is None) == (until is None):
        raise ValueError("ctx.wait needs either a duration or until=, not both")
    if until is not None:
        return _aware(until, "until")
    assert duration is not None
    return as_duration(duration, "ctx.wait duration")


def _deadline(timeout: timedelta | str | datetime) -> timedelta | datetime:
    if isinstance(timeout, datetime):
        return _aware(timeout, "timeout")
    return as_duration(timeout, "wait_for_event timeout")


def _aware(instant: datetime, what: str) -> datetime:
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise ValueError(f"{what} must be a timezone-aware datetime, such as "
                         "datetime(2026, 9, 1, 9, 0, tzinfo=UTC)")
    return instant

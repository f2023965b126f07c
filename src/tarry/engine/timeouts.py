"""Action timeouts and heartbeats: one call of an action, bounded on the engine's clock.

The rule, in full:

- A call may run for its step's ``timeout`` (``[limits] action_timeout``, 5 minutes, when
  the step sets none), measured on the engine's clock from the call's start.
- An action that calls ``ctx.heartbeat()`` is held to it from then on: a silence longer than
  the worker's lease (30 s by default) ends the call too, long before its timeout. An action
  that never heartbeats is bounded by its timeout alone.
- Meanwhile the worker keeps the run's lease as it keeps every lease it holds (renewed every
  third of the lease, all its runs in one statement); a heartbeat writes nothing, it is a
  note in memory the watch reads. So a call holds its run at most its timeout, and another
  worker takes the run over only if this one stopped (died, or its loop is blocked).
- A call that ends so fails its step with ``error.type = timeout`` and its ``retry``
  applies. An ``async`` action is cancelled; a sync one is abandoned in its thread (a thread
  cannot be stopped): its result is dropped, and its ``ctx.note`` and ``ctx.heartbeat``
  reach nothing any more.

The call is awaited in the caller's task, not a task of its own (a new task would start only
after every run that woke at the same instant had walked): at the limit the watch cancels
that task, as ``asyncio.timeout`` does, and takes the cancellation back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from tarry.actions import ActionContext, ActionRegistry
from tarry.clock import Clock, Timer
from tarry.engine.commands import ActionFailed, RunAction, call_action
from tarry.language.durations import format_duration
from tarry.secrets import Redactor
from tarry.values import stored_text

__all__ = ["DETAILS_SHOWN", "EXPIRED", "Watch", "timed_call", "within"]

T = TypeVar("T")

DETAILS_SHOWN = 200
"""How many characters of a heartbeat's details a timeout's message shows."""


class Watch:
    """What one call has shown of its life: its heartbeats, noted from any thread; closed
    once the call ended or was given up (later notes and heartbeats are dropped)."""

    def __init__(self, clock: Clock, timeout: timedelta, silence: timedelta) -> None:
        self._clock = clock
        self.started = clock.now()
        self.deadline = self.started + timeout
        self.timeout = timeout
        self.silence = silence
        self._lock = threading.Lock()
        self._beat: datetime | None = None
        self._details: Any = None
        self.closed = False

    def beat(self, details: Any = None) -> None:
        """A heartbeat: noted with the clock's instant, unless the call is over."""
        now = self._clock.now()
        with self._lock:
            if not self.closed:
                self._beat, self._details = now, details

    def close(self) -> None:
        """The call is over: drop whatever it says from now on."""
        with self._lock:
            self.closed = True

    def next_look(self, now: datetime) -> datetime | None:
        """When to look again (None: the call must end now): at its deadline, or sooner a
        lease's silence after its last heartbeat, or — no heartbeat yet — a lease from now,
        in case one comes."""
        with self._lock:
            beat = self._beat
        if now >= self.deadline or (beat is not None and now >= beat + self.silence):
            return None
        return min(self.deadline, (beat or now) + self.silence)

    def failure(self, attempt: int, redact: Redactor) -> ActionFailed:
        """Why the call was ended (when :meth:`next_look` said so)."""
        with self._lock:
            beat, details = self._beat, self._details
        if beat is None or self.deadline <= beat + self.silence:
            message = f"the action did not finish within its timeout ({_shown(self.timeout)})"
        else:
            message = (f"the action sent no heartbeat for {_shown(self.silence)} (the "
                       "worker's lease) after its last one")
        if details is not None:
            message += f"; last heartbeat: {_details(details, redact)}"
        return ActionFailed("timeout", message, attempt)

    def guard_note(self, note: Callable[[str], None]) -> Callable[[str], None]:
        """``note`` (a line into the run's history) as the call may use it: from another
        thread it is handed to the loop (the history is the loop's), in order with the
        call's result, and once the call is over it does nothing."""
        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()

        def deliver(message: str) -> None:
            if not self.closed:
                note(message)

        def guarded(message: str) -> None:
            if threading.get_ident() == loop_thread:
                deliver(message)
            elif not self.closed:
                with contextlib.suppress(RuntimeError):  # the loop is gone: so is the run
                    loop.call_soon_threadsafe(deliver, message)
        return guarded


async def timed_call(actions: ActionRegistry, command: RunAction, *, clock: Clock,
                     timeout: timedelta, silence: timedelta, redact: Redactor,
                     value_bytes: int) -> Any | ActionFailed:
    """Call ``command``'s action (see :func:`~tarry.engine.commands.call_action`) bounded by
    ``timeout`` and, once it heartbeats, by ``silence``: its result, or why it failed (with
    ``timeout`` when it was ended)."""
    watch = Watch(clock, timeout, silence)
    context: ActionContext = replace(command.context, timeout=timeout, beat=watch.beat,
                                     note=watch.guard_note(command.context.note))
    result = await within(watch, clock, call_action(actions, command.name, command.args,
                                                     context, redact=redact,
                                                     value_bytes=value_bytes))
    return watch.failure(context.attempt, redact) if result is EXPIRED else result


class _Expired:
    """What :func:`within` answers for a call it ended."""


EXPIRED = _Expired()


async def within(watch: Watch, clock: Clock, call: Awaitable[T]) -> T | _Expired:
    """Await ``call`` in the current task until ``watch`` says it must end (then cancel it
    and answer :data:`EXPIRED`); the watch is closed either way."""
    task = asyncio.current_task()
    assert task is not None
    expired = False
    timer: Timer | None = None

    def look() -> None:
        nonlocal expired, timer
        after = watch.next_look(clock.now())
        if after is not None:  # within its timeout, and heartbeats if it began to
            timer = clock.call_at(after, look)
            return
        expired = True
        task.cancel()

    timer = clock.call_at(watch.next_look(watch.started) or watch.started, look)
    try:
        result = await call
    except asyncio.CancelledError:
        if not expired:
            raise
        task.uncancel()  # our own cancellation, taken back: the caller goes on
        return EXPIRED
    finally:
        watch.close()
        timer.cancel()
    if expired:  # the call caught the cancellation and returned: too late all the same
        task.uncancel()
        return EXPIRED
    return result


def _shown(duration: timedelta) -> str:
    return format_duration(duration)


def _details(details: Any, redact: Redactor) -> str:
    """A heartbeat's details as a timeout's message shows them: JSON, secrets masked, cut
    at :data:`DETAILS_SHOWN` characters."""
    try:
        text = json.dumps(details, default=str, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        text = f"<{type(details).__name__}>"
    return stored_text(text, DETAILS_SHOWN, redact=redact)

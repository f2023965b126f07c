"""``wait_for_condition``: poll a check until a wait strategy says stop.

Each attempt calls ``check(state, check_ctx)`` with the state the previous attempt returned
(``initial_state`` first) and records the new state with the attempt number — a
checkpoint, so a crash repeats at most the attempt in flight. The strategy then decides:
stop (the state is returned), or check again after a delay, the run suspended meanwhile
like any wait (``waiting_for.kind = poll``). A strategy that gives up makes the operation
raise :class:`~tarry.errors.WaitForConditionError` with the attempts and the last state;
a check that raises, or a strategy that cannot decide (a state that is not a boolean for a
strategy without ``is_done``), fails the operation with a :class:`~tarry.errors.StepError`,
both recorded, so a replay raises the same error again.

The operation's journal entry::

    {"attempt": 3, "state": …, "next_at": "2026-…Z"}          # polling
    {"attempt": 4, "state": …, "status": "met"}                # done: returns state
    {"attempt": 60, "state": …, "status": "exhausted"}         # raises WaitForConditionError
    {"attempt": 2, "state": …, "status": "failed", "error": {type, message}}
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

from tarry.clock import from_iso, iso
from tarry.engine.frames import since
from tarry.engine.outcome import WaitInfo
from tarry.errors import StepError, WaitForConditionError
from tarry.sdk.operations import FlowRun, Teardown, call
from tarry.sdk.replay import Operation, Scope, Suspend
from tarry.sdk.strategies import WaitStrategy
from tarry.values import stored_text

__all__ = ["CheckContext", "wait_for_condition"]

logger = logging.getLogger("tarry.flows")


@dataclass(frozen=True)
class CheckContext:
    """What a condition check learns besides the state: which attempt this is (1-based),
    a logger, and a cancellation signal.

    ``cancelled`` is set when the worker drops the run (its cancellation was requested or
    its lease lost while another branch checkpointed); a long check may watch it and
    return early. An ``async`` check is also cancelled the asyncio way.
    """

    attempt: int
    condition: str
    """The operation's path, e.g. ``wait-for-order-settle``."""
    run_id: str
    logger: logging.LoggerAdapter[logging.Logger] = field(repr=False)
    cancelled: threading.Event = field(repr=False)


async def wait_for_condition(run: FlowRun, scope: Scope, name: str | None, *,
                             check: Callable[..., Any], initial_state: Any,
                             strategy: WaitStrategy[Any]) -> Any:
    """Poll ``check`` under ``strategy`` (see the module docstring); the final state."""
    if not callable(check):
        raise TypeError(f"wait_for_condition needs a callable check, got {type(check).__name__}")
    if not isinstance(strategy, WaitStrategy):
        raise TypeError("wait_for_condition needs a WaitStrategy, such as "
                        "WaitStrategy.exponential(), got " + type(strategy).__name__)
    op = scope.enter("wait_for_condition", name)
    entry = op.entry
    if entry is None:
        state = run.codec.store(initial_state, f"the initial state of condition '{op.path}'")
        entry = op.record({"attempt": 0, "state": state})
        run.record("step.started", op.path)
    with scope.running(op):
        while "status" not in entry:
            next_at = entry.get("next_at")
            if next_at is not None and run.env.now < from_iso(next_at):
                scope.suspend(WaitInfo("poll", op.path, from_iso(next_at), since=since(entry)))
            await _attempt(run, op, entry, check, strategy)
    return _ending(run, op, entry)


async def _attempt(run: FlowRun, op: Operation, entry: dict[str, Any], check: Callable[..., Any],
                   strategy: WaitStrategy[Any]) -> None:
    """One check, its recorded state and the strategy's decision; then a checkpoint."""
    attempt = entry["attempt"] + 1
    context = CheckContext(
        attempt=attempt, condition=op.path, run_id=run.env.run_id, cancelled=run.cancelled,
        logger=logging.LoggerAdapter(logger, {"run_id": run.env.run_id,
                                              "condition": op.path, "attempt": attempt}))
    entry.pop("next_at", None)
    try:
        state = await call(check, (run.codec.load(entry["state"]), context), {})
    except (asyncio.CancelledError, Suspend, Teardown):
        raise
    except BaseException as exc:  # SystemExit too: the check's, not the worker's
        run.env.moved()
        entry["attempt"] = attempt
        await _fail(run, op, entry, exc)
    run.env.moved()
    entry.update(attempt=attempt,
                 state=run.codec.store(state, f"the state of condition '{op.path}'"))
    try:
        _decide(run, op, entry, strategy)
    except Exception as exc:
        await _fail(run, op, entry, exc)
    await run.checkpoint()


async def _fail(run: FlowRun, op: Operation, entry: dict[str, Any],
                exc: BaseException) -> NoReturn:
    """Record that the check or the strategy raised ``exc``, checkpoint, raise a StepError."""
    entry.update(status="failed", error={"type": type(exc).__name__,
                                         "message": stored_text(str(exc),
                                                                redact=run.env.redact)})
    run.record("step.failed", op.path, attempt=entry["attempt"], error=entry["error"])
    await run.checkpoint()
    raise StepError(op.path, entry["error"]["type"], entry["error"]["message"]) from exc


def _decide(run: FlowRun, op: Operation, entry: dict[str, Any],
            strategy: WaitStrategy[Any]) -> None:
    """Let the strategy decide after this attempt; it raising anything but
    WaitForConditionError (a state that is not a boolean without ``is_done``) is the
    caller's to record."""
    attempt = entry["attempt"]
    try:
        decision = strategy.decide(run.codec.load(entry["state"]), attempt, run.env.rng)
    except WaitForConditionError:
        entry["status"] = "exhausted"
        run.record("condition.checked", op.path, attempt=attempt, exhausted=True)
        run.record("step.failed", op.path, error={
            "type": "condition-exhausted", "message": f"not met after {attempt} attempts"})
        return
    if not decision.should_continue:
        entry["status"] = "met"
        run.record("condition.checked", op.path, attempt=attempt, met=True)
        run.record("step.completed", op.path)
        return
    entry.update(next_at=iso(run.env.now + decision.delay), since=iso(run.env.now))
    run.record("condition.checked", op.path, attempt=attempt, until=entry["next_at"])


def _ending(run: FlowRun, op: Operation, entry: dict[str, Any]) -> Any:
    """The state of a met condition; the recorded error of any other ending, raised."""
    status = entry["status"]
    if status == "met":
        return run.codec.load(entry["state"])
    if status == "failed":
        raise StepError(op.path, entry["error"]["type"], entry["error"]["message"])
    raise WaitForConditionError(entry["attempt"], run.codec.load(entry["state"]),
                                condition=op.path)

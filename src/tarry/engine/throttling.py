"""A throttled flow's start: each run takes its turn before its first step.

A run of a flow with ``throttle:`` takes a turn from the store (fleet-wide, first come,
first served: :mod:`tarry.store.pacingstore`) when a worker first gets to its first step —
after its hold cleared, if it has one, and when a debounced burst's run fires. Its turn
now, it starts at once; later, it waits (status ``waiting``, ``waiting_for.kind`` =
``throttle``, ``due_at`` = the turn) and starts when its ``due_at`` passes: nothing polls.
The turn is kept in the run's state (``throttle``), so a run woken, or taken over by
another worker, never takes a second one; a worker that dies between taking a turn and
saving it leaves that turn unused, which only paces the key more slowly, never faster.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from datetime import datetime
from typing import Any, Protocol

from tarry.clock import from_iso, iso
from tarry.engine.outcome import Failed
from tarry.errors import ExpressionError, InvalidValue
from tarry.language.durations import format_duration
from tarry.language.expressions import EvalContext, render
from tarry.language.model import Flow, Throttle
from tarry.model import HistoryEntry, RunRecord, RunStatus, RunUpdate, ThrottleKey
from tarry.values import ValueLimits, check_key, stored_text

__all__ = ["THROTTLE", "TurnTaker", "admit", "throttle_key"]

THROTTLE = "throttle"
"""The wait kind of a run waiting for its turn, its state's key and its history entry."""


class TurnTaker(Protocol):
    """Takes a throttle turn (``Store.take_throttle_turn``, awaited)."""

    def __call__(self, throttle: ThrottleKey, run_id: str,
                 now: datetime) -> Awaitable[datetime]:
        """The turn of ``run_id``."""
        ...


def throttle_key(flow: Flow, throttle: Throttle, record: RunRecord, now: datetime,
                 limits: ValueLimits) -> str:
    """The run's key: its throttle's ``key`` rendered over its inputs and ``run`` (the
    flow's name when the throttle has none). Raises ``ExpressionError`` or ``InvalidValue``."""
    if throttle.key is None:
        return ""
    scope = {**record.inputs, "run": {"id": record.id, "target": record.target}}
    value = render(throttle.key.source, scope, EvalContext(now=now, timezone=flow.timezone))
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ExpressionError(f"a throttle's 'key' must give a string or a number, got "
                              f"{value!r}", expression=throttle.key.source)
    key = str(value)
    check_key(key, "the throttle's key", limits.key_bytes)
    return key


async def admit(take_turn: TurnTaker, record: RunRecord, flow: Flow, *,
                state: dict[str, Any], now: datetime, history: list[HistoryEntry],
                limits: ValueLimits) -> RunUpdate | Failed | None:
    """Decide whether the run, about to run its first step, may: None when it may (its turn
    came), the update that suspends it until its turn, or its failure (a key that does not
    render)."""
    throttle = flow.throttle
    if throttle is None or "started_at" in state:
        return None
    held = state.get(THROTTLE)
    if not isinstance(held, Mapping):
        try:
            key = throttle_key(flow, throttle, record, now, limits)
        except (ExpressionError, InvalidValue) as exc:
            kind = "value" if isinstance(exc, InvalidValue) else "expression"
            return Failed({"type": kind, "step": None,
                           "message": stored_text(f"throttle: {exc}")})
        turn = await take_turn(ThrottleKey(flow.name, key, throttle.limit, throttle.per),
                               record.id, now)
        held = state[THROTTLE] = {"key": key, "turn": iso(turn), "since": iso(now)}
        history.append(HistoryEntry(now, THROTTLE, None, {
            "key": key, "turn": iso(turn), "limit": throttle.limit,
            "per": format_duration(throttle.per)}))
    turn = from_iso(str(held["turn"]))
    if turn <= now:
        del state[THROTTLE]
        return None
    return RunUpdate(record.id, RunStatus.WAITING, state, history, due_at=turn,
                     waiting_for=waiting_for(throttle, held))


def waiting_for(throttle: Throttle, held: Mapping[str, Any]) -> dict[str, Any]:
    """The ``waiting_for`` of a run waiting for its turn."""
    return {"kind": THROTTLE, "step": None, "key": held["key"], "until": held["turn"],
            "since": held["since"], "limit": throttle.limit,
            "per": format_duration(throttle.per)}

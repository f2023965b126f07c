"""``wait_for``: suspend until a correlated event arrives or the deadline passes.

The step registers one event wait per alternative (its type and rendered match values) and
one timer for its deadline; a ``remind`` adds a reminder timer. Whichever comes first wins:
a delivered event that passes ``accept``, then the deadline, then a due reminder, which runs
the reminder steps and returns to the *same* wait (the deadline never moves).

Delivered events reach the step through ``Env.inbox`` (keyed by the step's path, which is
the wait's id); the ones it looked at are listed in ``Env.consumed`` so the store removes
them in the same transaction that records the outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tarry.clock import from_iso, iso
from tarry.engine.frames import since
from tarry.engine.outcome import Blocked, Done, Outcome, WaitInfo
from tarry.engine.reminders import (
    note_calendar,
    remind,
    reminder_pending,
    reminder_waits,
    schedule_reminders,
)
from tarry.engine.values import to_json
from tarry.language.model import Step, WaitFor
from tarry.values import check_key

if TYPE_CHECKING:
    from tarry.engine.interpreter import Interpreter, Names

__all__ = ["received_in_time", "run_wait_for"]


async def run_wait_for(walker: Interpreter, step: Step, cur: dict[str, Any], names: Names,
                       path: str) -> Outcome:
    """Advance a ``wait_for`` step (see the module docstring for the order of precedence)."""
    wait = step.construct
    assert isinstance(wait, WaitFor)
    env = walker.env
    if "until" not in cur:
        _register(walker, wait, cur, names, path)
    received = _take_event(walker, wait, cur, names, path)
    if received is not None:
        return received
    until = from_iso(cur["until"])
    if env.now >= until:
        env.record("wait.timeout", path, until=cur["until"])
        return Done(_binding(wait, status="timeout", event=None))
    if wait.remind is not None and reminder_pending(cur, env.now):
        outcome = await remind(walker, wait.remind, cur, names, path,
                               waits=lambda: _waits(cur, path, first_wins=wait.accept is None))
        if outcome is not None:
            return outcome
    return Blocked(_waits(cur, path, first_wins=wait.accept is None))


def _register(walker: Interpreter, wait: WaitFor, cur: dict[str, Any], names: Names,
              path: str) -> None:
    env = walker.env
    until = walker.deadline(wait.timeout, names)
    alternatives = [{"type": alt.event, "match": to_json(walker.render(alt.match, names))}
                    for alt in wait.alternatives]
    for alternative in alternatives:
        for key, value in alternative["match"].items():
            check_key(value, f"the match value '{key}'", env.limits.key_bytes)
    cur.update(until=iso(until), alternatives=alternatives, since=iso(env.now))
    note_calendar(walker, wait.timeout, cur, until)
    schedule_reminders(walker, wait.remind, cur, names)
    env.record("wait.registered", path, kind="event", until=cur["until"],
               alternatives=alternatives)


def _take_event(walker: Interpreter, wait: WaitFor, cur: dict[str, Any], names: Names,
                path: str) -> Outcome | None:
    """The first delivered event that counts and passes ``accept``; the ones it turned
    down are consumed, those after it are left for ``Env.ignore_undelivered``."""
    env = walker.env
    inbox = env.inbox.get(path, [])
    while inbox and received_in_time(inbox[0], cur["until"]):
        delivered = inbox.pop(0)
        env.consumed.append(delivered["inbox_id"])
        event = delivered["data"]
        info = {"event_id": delivered["id"], "type": delivered["type"]}
        if wait.accept is not None and not walker.truthy(
                wait.accept, names.new_child({"event": event})):
            env.record("event.rejected", path, **info)
            env.rescan.add(path)
            continue
        env.record("event.received", path, **info)
        return Done(_binding(wait, status="received", event=event,
                             received_at=delivered["received_at"], type=delivered["type"]))
    return None


def received_in_time(delivered: dict[str, Any], until: str) -> bool:
    """Whether a delivered event counts for a wait with deadline ``until``: only if it was
    received before it, whenever a worker gets to look."""
    return from_iso(delivered["received_at"]) < from_iso(until)


def _binding(wait: WaitFor, *, status: str, event: Any, received_at: str | None = None,
             type: str | None = None) -> dict[str, Any]:
    binding: dict[str, Any] = {"status": status, "event": event}
    if received_at is not None:
        binding["received_at"] = received_at
    if wait.is_any:
        binding["type"] = type
    return binding


def _waits(cur: dict[str, Any], path: str, *, first_wins: bool) -> tuple[WaitInfo, ...]:
    until = from_iso(cur["until"])
    registered = since(cur)
    waits = tuple(WaitInfo("event", path, until, alt["type"], alt["match"], since=registered,
                           first_wins=first_wins, calendar=cur.get("calendar"),
                           local=cur.get("until_local"))
                  for alt in cur["alternatives"])
    return waits + reminder_waits(cur, path)

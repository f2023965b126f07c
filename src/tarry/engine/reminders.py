"""``remind``: reminder steps that run while a wait goes on, the deadline never moving.

Shared by ``wait_for`` and ``ask``. The wait's ``cur`` keeps ``remind_at`` (the next
reminder's instant, absent once ``max`` went out), ``reminders`` (how many went out) and,
while the reminder steps are under way, their ``remind_frame``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tarry.clock import from_iso, iso
from tarry.engine.frames import new_frame
from tarry.engine.outcome import Blocked, Done, Outcome, WaitInfo
from tarry.language.model import Remind

if TYPE_CHECKING:
    from tarry.engine.interpreter import Interpreter, Names

__all__ = ["note_calendar", "remind", "reminder_pending", "reminder_waits",
           "schedule_reminders"]


def note_calendar(walker: Interpreter, timeout: object, cur: dict[str, Any],
                  until: datetime) -> None:
    """Keep in ``cur`` the calendar that counted a deadline of business time, and the
    deadline on its clock, for the run's ``waiting_for``."""
    calendar, local = walker.on_calendar(timeout, until)
    if calendar is not None:
        cur.update(calendar=calendar, until_local=local)


def schedule_reminders(walker: Interpreter, remind: Remind | None, cur: dict[str, Any],
                       names: Names) -> None:
    """At registration: no reminder sent yet, the first one due ``every`` from now (business
    time on a calendar included)."""
    cur["reminders"] = 0
    if remind is not None:
        cur["remind_at"] = iso(walker.after(remind.every, names))


def reminder_pending(cur: dict[str, Any], now: datetime) -> bool:
    """Whether reminder steps are due now or already under way."""
    return "remind_frame" in cur or ("remind_at" in cur and now >= from_iso(cur["remind_at"]))


async def remind(walker: Interpreter, spec: Remind, cur: dict[str, Any], names: Names,
                 path: str, *, waits: Callable[[], tuple[WaitInfo, ...]],
                 **recorded: Any) -> Outcome | None:
    """Run (or go on running) the reminder steps; an outcome only if they block or fail.

    ``waits`` gives the wait's own waits (kept while the reminder steps block); ``recorded``
    is added to the ``reminder.sent`` history entry.
    """
    env = walker.env
    frame = cur.setdefault("remind_frame", new_frame())
    cur.pop("remind_at", None)
    outcome = await walker.run_scope(frame, spec.steps, names, f"{path}.remind.")
    if isinstance(outcome, Blocked):
        return Blocked(outcome.waits + waits())
    if not isinstance(outcome, Done):
        return outcome
    del cur["remind_frame"]
    cur["reminders"] += 1
    env.record("reminder.sent", path, count=cur["reminders"], **recorded)
    if spec.max is None or cur["reminders"] < spec.max:
        cur["remind_at"] = iso(walker.after(spec.every, names))
    return None


def reminder_waits(cur: dict[str, Any], path: str) -> tuple[WaitInfo, ...]:
    """The wake for the next reminder, if one is to go out."""
    if "remind_at" in cur:
        return (WaitInfo("reminder", path, from_iso(cur["remind_at"])),)
    return ()

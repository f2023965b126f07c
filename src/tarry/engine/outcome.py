"""What advancing a step or a scope can come to.

The interpreter walks a run's state tree; every step and every scope answers with one of
these outcomes, and the run's new status follows from the root's answer — but for
:class:`Pending`: the walk needs the executor first (:mod:`tarry.engine.commands`), and walks
again once it has done what was asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeAlias

from tarry.model import TaskRequest
from tarry.values import stored_text

if TYPE_CHECKING:
    from tarry.engine.commands import Command

__all__ = ["Blocked", "Continued", "Done", "Exited", "Failed", "Outcome", "Pending",
           "WaitInfo", "step_error"]

@dataclass(frozen=True)
class WaitInfo:
    """One thing a suspended branch waits for.

    ``kind`` is ``timer`` (a ``wait``), ``event`` (a ``wait_for``), ``task`` (an ``ask``,
    with its ``task``), ``poll`` (the pause of a ``repeat``), ``retry`` (an action's retry
    delay), ``hold`` (a start gate), ``child`` (a ``call``, with its child ``run``) or
    ``window`` (a step, or a run's start, held until its ``calendar`` is open). ``until`` is
    the latest instant the branch wakes at; None only for a child wait without a timeout,
    which the transaction that ends the child wakes.
    """

    kind: str
    step: str
    until: datetime | None
    event_type: str | None = None
    match: dict[str, Any] | None = None
    since: datetime | None = None
    """When the wait was registered (None for a wait stored before that was recorded)."""
    task: TaskRequest | None = None
    first_wins: bool = False
    """For an event wait: the first event delivered settles it (it has no ``accept`` that
    could turn the event down), so the store delivers it no second one."""
    key: str | None = None
    """For a slot wait: the pool whose slot the step waits for."""
    ahead: int | None = None
    """For a slot wait: how many waited before it when it was queued."""
    run: str | None = None
    """For a child wait: the child run's id."""
    calendar: str | None = None
    """The business calendar a ``window`` waits on, or that counted the wait's length."""
    local: str | None = None
    """``until`` on that calendar's clock (``2026-12-28 10:00 Europe/Berlin``)."""

    def document(self) -> dict[str, Any]:
        """The ``waiting_for`` object of the run document, for this wait alone (a task wait
        adds ``task``, its id; a slot wait ``key`` and ``ahead``; a child wait ``run``)."""
        document: dict[str, Any] = {"kind": self.kind, "step": self.step or None,
                    "until": _iso(self.until) if self.until is not None else None,
                    "event_type": self.event_type, "match": self.match,
                    "since": _iso(self.since) if self.since is not None else None}
        if self.task is not None:
            document["task"] = self.task.id
        if self.key is not None:
            document.update(key=self.key, ahead=self.ahead)
        if self.run is not None:
            document["run"] = self.run
        if self.calendar is not None:
            document["calendar"] = self.calendar
            document["until_local"] = self.local
        return document


@dataclass(frozen=True)
class Done:
    """The step or scope completed with ``binding``."""

    binding: Any = None


@dataclass(frozen=True)
class Blocked:
    """Every live branch below is suspended; the run wakes at the earliest ``until``."""

    waits: tuple[WaitInfo, ...] = field(default_factory=tuple)

    @property
    def wake_at(self) -> datetime | None:
        """The earliest instant any branch must be looked at again (None: none has a
        deadline; the run is woken by what it waits for)."""
        return min((w.until for w in self.waits if w.until is not None), default=None)

    def waiting_for(self) -> dict[str, Any]:
        """The run's ``waiting_for``: the wait due first (a reminder only when nothing else
        waits), every alternative of its step (``alternatives``, for an event wait), and
        how many other steps wait besides it (``others``: concurrent branches)."""
        shown = [w for w in self.waits if w.kind != "reminder"] or list(self.waits)
        first = min(shown, key=_due)
        document = first.document()
        if first.kind == "event":
            document["alternatives"] = [{"event_type": w.event_type, "match": w.match}
                                        for w in shown
                                        if w.step == first.step and w.kind == "event"]
        document["others"] = len({w.step for w in shown} - {first.step})
        reminders = [w.until for w in self.waits
                     if w.kind == "reminder" and w.step == first.step and w.until is not None]
        if reminders and first.kind != "reminder":
            document["next_reminder"] = _iso(min(reminders))
        return document


@dataclass(frozen=True)
class Failed:
    """The step or scope failed; ``error`` is ``{type, message, step}``."""

    error: dict[str, Any]


@dataclass(frozen=True)
class Exited:
    """An ``exit`` step ended the whole run successfully with ``name``."""

    name: str


@dataclass(frozen=True)
class Continued:
    """A Python flow continued as new: the run ends successfully (exit ``continued``) and a
    new run of its flow and target starts with ``inputs`` (already checked)."""

    inputs: dict[str, Any]


@dataclass(frozen=True)
class Pending:
    """The walk cannot go on until the executor carries out ``commands`` (or, when there are
    none, finishes one of the actions already under way); it walks again then."""

    commands: tuple[Command, ...] = ()


Outcome: TypeAlias = Done | Blocked | Failed | Exited | Continued | Pending


def step_error(kind: str, message: str, step: str) -> Failed:
    """A failure of ``step`` with error type ``kind`` (the message made storable and
    bounded: it may quote user data, such as an exception's text)."""
    return Failed({"type": kind, "message": stored_text(message), "step": step})


_NEVER = datetime.max.replace(tzinfo=UTC)


def _due(wait: WaitInfo) -> datetime:
    """Orders waits by deadline, those without one last."""
    return _NEVER if wait.until is None else wait.until


def _iso(instant: datetime) -> str:
    return instant.isoformat(timespec="milliseconds").replace("+00:00", "Z")

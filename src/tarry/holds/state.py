"""A held run's gate as data, and the pure decisions taken on it.

The gate's progress lives in the run's state under ``"hold"`` (:class:`HoldState`): the
conditions it started with (the flow's ``hold`` plus a start's ``--hold-after``), which checks
already said go (a conjunction never asks again what it already knows), when the hold clock
started (the first check, not the run's creation), how many rounds of checks ran, each check's
consecutive faults, and how many times in a row the run was denied a check slot.

Everything here is pure: the gate (``tarry.holds.gate``) runs the checks and feeds their
answers to :func:`answered`, then asks :func:`after_round` what becomes of the run.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, TypeAlias

from tarry.clock import from_iso, iso
from tarry.config import Limits
from tarry.holds.cadence import denied_delay, next_check_delay
from tarry.holds.checks import Answer
from tarry.language.durations import format_duration
from tarry.language.model import HoldAfter, HoldCondition

__all__ = [
    "Clear",
    "HoldState",
    "HoldUntil",
    "Refusal",
    "Refused",
    "Verdict",
    "after_round",
    "answered",
    "before_checks",
    "began_round",
    "denied",
    "is_held",
    "undeclared",
    "waiting_for",
]


class Refusal(StrEnum):
    """Why a held run was refused (every one before its first step, never retried)."""

    HOLD_REFUSED = "hold-refused"
    HOLD_EXPIRED = "hold-expired"
    HOLD_UNANSWERABLE = "hold-unanswerable"
    CHECK_UNKNOWN = "check-unknown"
    HOLD_SUPERSEDED = "hold-superseded"
    HOLD_AFTER_BEYOND_MAX = "hold-after-beyond-max"


@dataclass(frozen=True)
class Clear:
    """Every condition is clear: the run goes on to its first step."""


@dataclass(frozen=True)
class HoldUntil:
    """Still held: look at the run again at ``instant``."""

    instant: datetime


@dataclass(frozen=True)
class Refused:
    """The run is refused with ``token``; ``detail`` goes into the ``refused`` history entry."""

    token: Refusal
    detail: Mapping[str, Any] = field(default_factory=dict)


Verdict: TypeAlias = Clear | HoldUntil | Refused


@dataclass(frozen=True)
class HoldState:
    """The gate of one held run (see the module docstring)."""

    after: datetime | None
    checks: tuple[str, ...]
    cleared: tuple[str, ...] = ()
    since: datetime | None = None
    rounds: int = 0
    faults: Mapping[str, int] = field(default_factory=dict)
    denials: int = 0
    clear: bool = False

    @classmethod
    def of(cls, conditions: Sequence[HoldCondition]) -> HoldState:
        """The gate of a run held on ``conditions``, before anything was checked."""
        afters = [c.instant for c in conditions if isinstance(c, HoldAfter)]
        return cls(after=max(afters, default=None),
                   checks=tuple(c.name for c in conditions if not isinstance(c, HoldAfter)))

    @property
    def pending(self) -> tuple[str, ...]:
        """The checks that have not said go yet, in the order they were written."""
        return tuple(name for name in self.checks if name not in self.cleared)

    def elapsed(self, now: datetime) -> timedelta:
        """How long the hold clock has run (zero before the first check)."""
        return now - self.since if self.since is not None else timedelta(0)

    def to_json(self) -> dict[str, Any]:
        """The form kept in the run's state."""
        return {"after": iso(self.after) if self.after else None, "checks": list(self.checks),
                "cleared": list(self.cleared),
                "since": iso(self.since) if self.since else None, "rounds": self.rounds,
                "faults": dict(self.faults), "denials": self.denials, "clear": self.clear}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HoldState:
        """The gate kept in a run's state."""
        return cls(after=from_iso(data["after"]) if data["after"] else None,
                   checks=tuple(data["checks"]), cleared=tuple(data["cleared"]),
                   since=from_iso(data["since"]) if data["since"] else None,
                   rounds=data["rounds"], faults=dict(data["faults"]),
                   denials=data["denials"], clear=data["clear"])

    def conditions(self) -> list[dict[str, Any]]:
        """The conditions as the run document shows them (a check says whether it is clear)."""
        shown: list[dict[str, Any]] = [{"after": iso(self.after)}] if self.after else []
        return shown + [{"check": name, "clear": name in self.cleared} for name in self.checks]


def is_held(state: Mapping[str, Any]) -> bool:
    """Whether a run's state has a gate that has not cleared yet."""
    hold = state.get("hold")
    return isinstance(hold, Mapping) and not hold["clear"]


def undeclared(checks: Iterable[str], declared: Collection[str]) -> Refused | None:
    """``check-unknown`` for the first of ``checks`` this deployment does not declare."""
    missing = next((name for name in checks if name not in declared), None)
    return Refused(Refusal.CHECK_UNKNOWN, {"check": missing}) if missing is not None else None


def before_checks(hold: HoldState, now: datetime) -> Verdict | None:
    """The decisions that cost nothing: an ``after`` not reached (the run wakes at exactly
    that instant), or nothing left to check. None: the checks must run."""
    if hold.after is not None and now < hold.after:
        return HoldUntil(hold.after)
    return None if hold.pending else Clear()


def began_round(hold: HoldState, now: datetime) -> HoldState:
    """A round of checks starts: the hold clock starts with the first one."""
    return replace(hold, since=hold.since or now, rounds=hold.rounds + 1, denials=0)


def answered(hold: HoldState, check: str, answer: Answer,
             limits: Limits) -> tuple[HoldState, Refused | None]:
    """Take in one check's answer; a refusal when it says never, or when it could not tell
    ``check_faults`` times in a row."""
    faults = dict(hold.faults)
    faults[check] = faults.get(check, 0) + 1 if answer is Answer.UNKNOWN else 0
    cleared = (*hold.cleared, check) if answer is Answer.GO else hold.cleared
    taken = replace(hold, faults=faults, cleared=cleared)
    if answer is Answer.NEVER:
        return taken, Refused(Refusal.HOLD_REFUSED, {"check": check})
    if faults[check] >= limits.check_faults:
        return taken, Refused(Refusal.HOLD_UNANSWERABLE, {"check": check,
                                                          "faults": faults[check]})
    return taken, None


def after_round(hold: HoldState, now: datetime, limits: Limits, fraction: float) -> Verdict:
    """What a round of checks came to: clear, refused ``hold-expired`` (the round that just
    ran was the last one the bounds allow), or held until the next round."""
    if not hold.pending:
        return Clear()
    elapsed = hold.elapsed(now)
    if hold.rounds >= limits.check_max or elapsed >= limits.hold_max:
        return Refused(Refusal.HOLD_EXPIRED, {"rounds": hold.rounds,
                                              "held": format_duration(elapsed)})
    delay = next_check_delay(limits.check_interval, elapsed, limits.hold_max, fraction)
    return HoldUntil(now + delay)


def denied(hold: HoldState, now: datetime, limits: Limits) -> tuple[HoldState, HoldUntil]:
    """No check slot was free: try again at a quarter of the cadence, spawning nothing."""
    delay = denied_delay(limits.check_interval, hold.elapsed(now))
    return replace(hold, denials=hold.denials + 1), HoldUntil(now + delay)


def waiting_for(hold: HoldState, until: datetime, limits: Limits) -> dict[str, Any]:
    """The ``waiting_for`` object of a held run: ``{kind: hold, until, …}`` with the
    conditions, when the hold clock started, the rounds so far and when the hold expires."""
    expires = hold.since + limits.hold_max if hold.since is not None else None
    return {"kind": "hold", "step": None, "until": iso(until), "event_type": None,
            "match": None, "conditions": hold.conditions(),
            "since": iso(hold.since) if hold.since else None, "rounds": hold.rounds,
            "expires": iso(expires) if expires else None,
            "faults": {name: count for name, count in hold.faults.items() if count},
            "fault_limit": limits.check_faults}

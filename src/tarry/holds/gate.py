"""The gate in front of a held run's first step: evaluate its conditions on each wake.

Cheapest first. An ``after`` not yet reached costs nothing: the run is due again at exactly
that instant. Then the checks: the gate takes one fleet-wide check slot (denied: the run is
re-deferred at a quarter of its cadence and nothing is spawned), runs every check that has not
said go yet, one after another, records each as a ``hold.check`` history entry, and decides —
clear (the run goes on to its first step in the same claim), refused (``hold-refused``,
``hold-unanswerable``, ``hold-expired``, ``check-unknown``), or held until the next round.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime
from typing import Any

from tarry.holds.service import Holds
from tarry.holds.state import (
    Clear,
    HoldState,
    HoldUntil,
    Refused,
    Verdict,
    after_round,
    answered,
    before_checks,
    began_round,
    denied,
    undeclared,
    waiting_for,
)
from tarry.model import HOLD_CLEARED, HistoryEntry, RunRecord, RunStatus, RunUpdate

__all__ = ["DENIALS_SUSTAINED", "HoldGate"]

logger = logging.getLogger("tarry.holds")

DENIALS_SUSTAINED = 4
"""Denied a check slot this many times in a row (a whole cadence's worth of re-deferrals),
a run logs ``check-capacity-exceeded`` — and again at every further multiple."""


class HoldGate:
    """Decides, for a claimed held run, whether it stays held, is refused, or starts."""

    def __init__(self, holds: Holds) -> None:
        self.holds = holds

    async def evaluate(self, record: RunRecord, state: dict[str, Any], now: datetime,
                       history: list[HistoryEntry]) -> RunUpdate | None:
        """Evaluate the gate of ``record`` (whose ``state`` holds it) at ``now``.

        Returns the update that keeps the run held or refuses it, or None when every
        condition is clear: then ``state`` and ``history`` say so, and the caller goes on to
        the first step.
        """
        hold = HoldState.from_json(state["hold"])
        verdict = before_checks(hold, now)
        if verdict is None:
            hold, verdict = await self._round(record, hold, now, history)
        state["hold"] = replace(hold, clear=isinstance(verdict, Clear)).to_json()
        return self._settle(record, state, hold, verdict, history)

    async def _round(self, record: RunRecord, hold: HoldState, now: datetime,
                     history: list[HistoryEntry]) -> tuple[HoldState, Verdict]:
        """Run the checks still pending, under one check slot."""
        holds = self.holds
        unknown = undeclared(hold.pending, holds.checks)
        if unknown is not None:
            return hold, unknown
        if not await holds.acquire_slot(record.id, now, len(hold.pending)):
            hold, until = denied(hold, now, holds.limits)
            _report_denial(record, hold, holds.limits.check_slots)
            return hold, until
        try:
            hold = began_round(hold, now)
            for name in hold.pending:
                result = await holds.runner.run(name, holds.checks[name],
                                                record.target or record.id, run_id=record.id)
                history.append(HistoryEntry(holds.clock.now(), "hold.check", None,
                                            result.history_data()))
                hold, refusal = answered(hold, name, result.answer, holds.limits)
                if refusal is not None:
                    return hold, refusal
        finally:
            await holds.release_slot(record.id)
        return hold, after_round(hold, holds.clock.now(), holds.limits, holds.rng.random())

    def _settle(self, record: RunRecord, state: dict[str, Any], hold: HoldState,
                verdict: Verdict, history: list[HistoryEntry]) -> RunUpdate | None:
        now = self.holds.clock.now()
        if isinstance(verdict, HoldUntil):
            return RunUpdate(record.id, RunStatus.HELD, state, history, due_at=verdict.instant,
                             waiting_for=waiting_for(hold, verdict.instant, self.holds.limits))
        if isinstance(verdict, Refused):
            history.append(HistoryEntry(now, "refused", None, {"reason": verdict.token.value,
                                                               **verdict.detail}))
            return RunUpdate(record.id, RunStatus.REFUSED, state, history,
                             reason=verdict.token.value)
        history.append(HistoryEntry(now, HOLD_CLEARED, None,  # its update stamps the marker
                                    {"conditions": hold.conditions(), "rounds": hold.rounds}))
        return None


def _report_denial(record: RunRecord, hold: HoldState, slots: int) -> None:
    if hold.denials % DENIALS_SUSTAINED == 0:
        logger.warning(
            "check-capacity-exceeded: run %s was denied a check slot %d times in a row "
            "(check_slots = %d); raise TARRY_CHECK_SLOTS, lengthen TARRY_CHECK_INTERVAL or "
            "shorten TARRY_CHECK_TIMEOUT", record.id, hold.denials, slots,
            extra={"run_id": record.id})

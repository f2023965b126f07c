"""A held run's gate as data, and the pure decisions on it (no processes, no store)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hold_support import T0, at

from tarry.config import Limits
from tarry.holds.checks import Answer
from tarry.holds.state import (
    Clear,
    HoldState,
    HoldUntil,
    Refusal,
    Refused,
    after_round,
    answered,
    before_checks,
    began_round,
    denied,
    is_held,
    waiting_for,
)
from tarry.language.model import HoldAfter, HoldCheck, Position

LIMITS = Limits()
POS = Position("flow.yaml", 1, 1)
GATE = HoldState(after=at(3600), checks=("jira", "ci"))


def test_a_gate_is_built_from_the_conditions_in_their_order() -> None:
    hold = HoldState.of([HoldCheck("jira", POS), HoldAfter(at(60), POS), HoldCheck("ci", POS)])

    assert (hold.after, hold.checks, hold.pending) == (at(60), ("jira", "ci"), ("jira", "ci"))


def test_a_gate_survives_the_round_trip_through_the_run_state() -> None:
    hold = replace(GATE, cleared=("jira",), since=at(10), rounds=3, faults={"ci": 2},
                   denials=1)

    assert HoldState.from_json(hold.to_json()) == hold


def test_is_held_until_the_gate_clears() -> None:
    assert is_held({"hold": GATE.to_json()})
    assert not is_held({"hold": replace(GATE, clear=True).to_json()})
    assert not is_held({"root": {}})


def test_an_after_not_reached_wakes_the_run_at_exactly_that_instant() -> None:
    assert before_checks(GATE, at(3599.999)) == HoldUntil(at(3600))


def test_once_the_after_passed_the_checks_must_run() -> None:
    assert before_checks(GATE, at(3600)) is None


def test_nothing_left_to_check_clears() -> None:
    assert before_checks(replace(GATE, cleared=("jira", "ci")), at(3600)) == Clear()
    assert before_checks(HoldState(after=at(60), checks=()), at(60)) == Clear()


def test_the_hold_clock_starts_at_the_first_round_not_at_creation() -> None:
    first = began_round(GATE, at(3600))
    second = began_round(first, at(3660))

    assert (first.since, first.rounds) == (at(3600), 1)
    assert (second.since, second.rounds) == (at(3600), 2)


def test_go_clears_that_check_for_good() -> None:
    hold, refusal = answered(GATE, "jira", Answer.GO, LIMITS)

    assert (hold.pending, refusal) == (("ci",), None)


def test_never_refuses_hold_refused() -> None:
    _, refusal = answered(GATE, "ci", Answer.NEVER, LIMITS)

    assert refusal == Refused(Refusal.HOLD_REFUSED, {"check": "ci"})


def test_the_fifth_fault_in_a_row_refuses_hold_unanswerable() -> None:
    hold = GATE
    for _ in range(4):
        hold, refusal = answered(hold, "jira", Answer.UNKNOWN, LIMITS)
        assert refusal is None

    _, refusal = answered(hold, "jira", Answer.UNKNOWN, LIMITS)

    assert refusal == Refused(Refusal.HOLD_UNANSWERABLE, {"check": "jira", "faults": 5})


def test_an_answer_between_faults_starts_the_count_again() -> None:
    hold = GATE
    for answer in [Answer.UNKNOWN] * 4 + [Answer.NOT_YET] + [Answer.UNKNOWN] * 4:
        hold, refusal = answered(hold, "jira", answer, LIMITS)
        assert refusal is None

    assert hold.faults == {"jira": 4}


def test_faults_are_counted_per_check() -> None:
    hold = GATE
    for _ in range(4):
        hold, _ = answered(hold, "jira", Answer.UNKNOWN, LIMITS)
        hold, refusal = answered(hold, "ci", Answer.UNKNOWN, LIMITS)
        assert refusal is None

    assert hold.faults == {"jira": 4, "ci": 4}


def test_a_round_that_leaves_nothing_pending_clears() -> None:
    hold = replace(began_round(GATE, at(3600)), cleared=("jira", "ci"))

    assert after_round(hold, at(3600), LIMITS, 0.0) == Clear()


def test_a_round_still_pending_holds_until_the_next_interval() -> None:
    hold = began_round(GATE, at(3600))

    assert after_round(hold, at(3600), LIMITS, 0.0) == HoldUntil(at(3660))
    assert after_round(hold, at(3600), LIMITS, 0.5) == HoldUntil(at(3663))


def test_the_next_round_never_lands_past_the_end_of_the_hold() -> None:
    hold = replace(GATE, since=at(0), rounds=10)
    near_the_end = at(0) + LIMITS.hold_max - timedelta(minutes=5)

    assert after_round(hold, near_the_end, LIMITS, 0.0) == HoldUntil(at(0) + LIMITS.hold_max)


def test_the_round_at_the_end_of_the_hold_is_the_last() -> None:
    hold = replace(GATE, since=at(0), rounds=40)

    verdict = after_round(hold, at(0) + LIMITS.hold_max, LIMITS, 0.0)

    assert verdict == Refused(Refusal.HOLD_EXPIRED, {"rounds": 40, "held": "1d"})


def test_the_last_round_the_count_allows_is_the_last() -> None:
    hold = replace(GATE, since=at(0), rounds=96)

    verdict = after_round(hold, at(3600), LIMITS, 0.0)

    assert verdict == Refused(Refusal.HOLD_EXPIRED, {"rounds": 96, "held": "1h"})


def test_a_denied_run_comes_back_at_a_quarter_of_its_cadence() -> None:
    hold, until = denied(GATE, at(3600), LIMITS)

    assert (hold.denials, until) == (1, HoldUntil(at(3615)))


@pytest.mark.parametrize(("hold", "since", "expires"), [
    (GATE, None, None),
    (replace(GATE, since=T0, rounds=2, cleared=("jira",)), "2026-01-01T09:00:00.000Z",
     "2026-01-02T09:00:00.000Z"),
])
def test_waiting_for_says_what_the_hold_waits_for(hold: HoldState, since: str | None,
                                                  expires: str | None) -> None:
    document = waiting_for(hold, at(3600), LIMITS)

    assert document == {
        "kind": "hold", "step": None, "until": "2026-01-01T10:00:00.000Z", "event_type": None,
        "match": None, "since": since, "rounds": hold.rounds, "expires": expires,
        "faults": {}, "fault_limit": LIMITS.check_faults,
        "conditions": [{"after": "2026-01-01T10:00:00.000Z"},
                       {"check": "jira", "clear": hold.cleared == ("jira",)},
                       {"check": "ci", "clear": False}]}

"""The one-line explanation of a wait (SPEC principle 5), from the run document alone."""

from __future__ import annotations

from typing import Any

import pytest

from tarry.engine.explain import explain_wait

REGISTERED = "2026-03-01T09:00:00.000Z"
UNTIL = "2026-03-03T09:00:00.000Z"


def doc(**fields: Any) -> dict[str, Any]:
    """A run document with quiet defaults."""
    base: dict[str, Any] = {
        "id": "r1", "flow": "cooling", "status": "waiting", "waiting_for": None,
        "created_at": "2026-03-01T08:59:00.000Z", "updated_at": "2026-03-01T09:00:00.500Z",
    }
    return base | fields


def wait(kind: str, step: str | None, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "step": step, "until": UNTIL, "event_type": None, "match": None,
            "since": REGISTERED, **fields}


def test_a_timer_wait_says_what_where_since_until_and_what_next() -> None:
    assert explain_wait(doc(waiting_for=wait("timer", "cooling_off"))) == (
        f"waiting for timer at step 'cooling_off' since {REGISTERED} until {UNTIL}; "
        "then resumes at step 'cooling_off'")


def test_an_event_wait_names_the_event_type_and_the_match() -> None:
    waiting = wait("event", "approval", event_type="slack.approval",
                   match={"message": "17.1"})
    assert explain_wait(doc(waiting_for=waiting)) == (
        "waiting for event 'slack.approval' matching message=\"17.1\" at step 'approval' "
        f"since {REGISTERED} until {UNTIL}; then resumes at step 'approval' with the event, "
        "or with status timeout at the deadline")


def test_a_wait_for_any_names_every_alternative() -> None:
    waiting = wait("event", "reply", event_type="email.reply", match={"ticket": 7},
                   alternatives=[{"event_type": "email.reply", "match": {"ticket": 7}},
                                 {"event_type": "portal.reply", "match": {"case": "c-7"}}])
    assert explain_wait(doc(waiting_for=waiting)) == (
        "waiting for event 'email.reply' matching ticket=7 or event 'portal.reply' matching "
        f"case=\"c-7\" at step 'reply' since {REGISTERED} until {UNTIL}; then resumes at "
        "step 'reply' with the first of them to arrive, or with status timeout at the "
        "deadline")


def test_other_waiting_branches_are_counted() -> None:
    one = explain_wait(doc(waiting_for=wait("timer", "each[0].nap", others=1)))
    three = explain_wait(doc(waiting_for=wait("timer", "each[0].nap", others=3)))
    assert str(one).endswith("; 1 other branch of the run waits as well")
    assert str(three).endswith("; 3 other branches of the run wait as well")


@pytest.mark.parametrize(("kind", "phrase", "then"), [
    ("poll", "waiting to poll again", "then runs the next iteration of step 's'"),
    ("retry", "waiting to retry", "then runs step 's' again"),
])
def test_polls_and_retries_say_what_comes_next(kind: str, phrase: str, then: str) -> None:
    assert explain_wait(doc(waiting_for=wait(kind, "s"))) == (
        f"{phrase} at step 's' since {REGISTERED} until {UNTIL}; {then}")


def test_a_wait_stored_without_since_is_dated_by_the_last_update() -> None:
    explanation = explain_wait(doc(waiting_for=wait("timer", "nap", since=None)))
    assert explanation is not None
    assert " since 2026-03-01T09:00:00.500Z until " in explanation


def test_a_hold_has_no_step() -> None:
    assert explain_wait(doc(status="held", waiting_for=wait("hold", None))) == (
        f"held before its first step since {REGISTERED} until {UNTIL}; "
        "then checks its hold again")


@pytest.mark.parametrize("status", ["succeeded", "failed", "cancelled", "refused"])
def test_an_ended_run_waits_for_nothing(status: str) -> None:
    assert explain_wait(doc(status=status, waiting_for=wait("timer", "nap"))) is None


def test_a_run_without_a_wait_has_no_explanation() -> None:
    assert explain_wait(doc(status="pending")) is None


def test_a_wait_with_a_reminder_says_when_the_next_one_runs() -> None:
    waiting = wait("event", "approval", event_type="slack.approval", match={"message": "1"},
                   next_reminder="2026-03-02T09:00:00.000Z")
    assert explain_wait(doc(waiting_for=waiting)).endswith(  # type: ignore[union-attr]
        "or with status timeout at the deadline; next reminder at 2026-03-02T09:00:00.000Z")


def test_a_hold_says_how_many_faults_its_checks_counted() -> None:
    waiting = wait("hold", None, faults={"jira": 3, "ci": 0}, fault_limit=5)
    assert explain_wait(doc(status="held", waiting_for=waiting)) == (
        f"held before its first step since {REGISTERED} until {UNTIL}; then checks its hold "
        "again; check jira could not tell 3 times in a row (5 refuse the run "
        "hold-unanswerable)")

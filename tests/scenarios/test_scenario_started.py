"""The runs triggers started, as ``expect.runs`` sees them (pure): which runs count, how they
are named and ordered, how they pair with the expected ones, and what a failure says."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tarry.model import EventState
from tarry.scenarios import Mismatch, Observed, parse_scenario
from tarry.scenarios.compare import compare
from tarry.scenarios.started import StartedRun, started_none, started_runs

MONDAY = datetime(2026, 10, 26, 8, 0, tzinfo=UTC)


def document(run_id: str, flow: str, created_at: str, target: str | None = None,
             exit: str | None = None, **created: Any) -> dict[str, Any]:
    """A run document whose ``created`` entry holds ``created``."""
    return {"id": run_id, "flow": flow, "target": target, "created_at": created_at,
            "exit": exit, "status": "succeeded", "inputs": {},
            "history": [{"at": created_at, "kind": "created", "step": None, "data": created}]}


SCHEDULED = {"trigger": "schedule", "schedule": "report:abc"}
LABELLED = {"trigger": "event", "event_type": "forge.label"}


def test_only_runs_a_trigger_started_count_ordered_as_created() -> None:
    documents = [
        document("r2", "report", "2026-10-27T08:00:00.000Z", **SCHEDULED,
                 scheduled_at="2026-10-27T08:00:00.000Z"),
        document("own", "deploy", "2026-10-26T07:00:00.000Z"),
        document("d2", "deploy", "2026-10-26T08:00:00.000Z", "acme/web#8", **LABELLED,
                 event_id="e2"),
        document("r1", "report", "2026-10-26T08:00:00.000Z", **SCHEDULED,
                 scheduled_at="2026-10-26T08:00:00.000Z"),
        document("d1", "deploy", "2026-10-26T08:00:00.000Z", "acme/web#7", **LABELLED,
                 event_id="e1"),
        document("x", "deploy", "2026-10-26T09:00:00.000Z", "acme/api#1", **LABELLED,
                 event_id="emitted"),
    ]
    started = started_runs(documents, {"d1": "events[0] (forge.label)",
                                       "d2": "events[1] (forge.label)"})
    assert [run.describe() for run in started] == [
        "deploy acme/web#7, started by events[0] (forge.label)",
        "deploy acme/web#8, started by events[1] (forge.label)",
        "report at 2026-10-26T08:00:00.000Z, started by its schedule",
        "deploy acme/api#1, started by event 'emitted' (forge.label), which a run sent",
        "report at 2026-10-27T08:00:00.000Z, started by its schedule",
    ]
    assert started[2].identity == ("report", None, MONDAY)


@pytest.mark.parametrize(("state", "triggered", "why"), [
    (EventState.INVALID, {"deploy"}, "it was invalid (quarantined, it starts nothing)"),
    (EventState.DUPLICATE, {"deploy"}, "it was a duplicate (an event id starts its runs once)"),
    (EventState.UNMATCHED, set(), "no flow has a trigger on forge.label"),
    (EventState.UNMATCHED, {"deploy", "audit"},
     "the 'if' of every trigger on forge.label (of 'audit', 'deploy') was false for it"),
])
def test_why_an_event_started_no_run(state: EventState, triggered: set[str], why: str) -> None:
    assert started_none("events[1] (forge.label)", "forge.label", state, triggered) == (
        f"events[1] (forge.label) started no run: {why}")


EXPECTED = parse_scenario("""\
scenario: s
events: [{after: 0s, type: forge.label, data: {}}]
expect:
  runs:
    - { flow: deploy, target: a#1, exit: deployed }
    - { flow: deploy, target: a#2, exit: deployed }
    - { flow: deploy, target: a#3, exit: deployed }
""", "s.yaml")


def started(target: str, exit: str = "deployed") -> StartedRun:
    return StartedRun(("deploy", target, None), {"exit": exit}, "events[0] (forge.label)")


def labels(mismatches: tuple[Mismatch, ...]) -> list[str]:
    return [f"{m.pos.line}: {m.label}: {m.note or m.actual}" for m in mismatches]


def test_runs_pair_by_name_in_order_so_one_missing_run_does_not_shift_the_others() -> None:
    observed = Observed(document={}, started=(started("a#1"), started("a#3", "failed"),
                                              started("a#9")))
    assert labels(compare(EXPECTED, observed)) == [
        "4: runs: not listed: deploy a#9, started by events[0] (forge.label)",
        "6: runs[1] (deploy a#2): not started; the triggers started these runs:",
        "7: runs[2] (deploy a#3) exit: failed",
    ]


def test_every_expected_run_started_as_expected_passes() -> None:
    observed = Observed(document={}, started=(started("a#1"), started("a#2"), started("a#3")))
    assert compare(EXPECTED, observed) == ()


def test_nothing_started_says_so() -> None:
    [first, *_] = compare(EXPECTED, Observed(document={}, quiet=("events[0] … started no run",)))
    assert (first.note, first.details) == ("not started; the triggers started no run",
                                           ("events[0] … started no run",))
